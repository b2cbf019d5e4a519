#!/usr/bin/env node
// Brings a fresh checkout to a runnable state: pinned pnpm, Debian packages (as root),
// `pnpm install --frozen-lockfile`, native addons and TypeScript builds. Idempotent: each
// step checks before it acts, so a second run takes a few seconds.
// Downloads only from the npm registry and Debian's package archive.
//
// Native addons are built against the headers of the running node: beside it (official
// tarballs, nvm, fnm, volta: <prefix>/include/node) or Debian's /usr/include/node. An explicit
// npm_config_nodedir must hold them. A native build that fails is reported (never silent); with
// TENFERRO_REQUIRE_NATIVE=1 (CI) it fails setup with the fix.
//
// Which instruction-set paths the native builds compile (TENFERRO_NATIVE_ISA, see
// packages/native-build/isa-paths.mjs): `best` under `npm run demo` (this CPU's best path and the
// portable baseline: the fastest first run), `host` otherwise (`npm test`, `.ci/run`, a plain
// `node scripts/setup.mjs`: every path this CPU can execute, so all of them are tested). An explicit
// TENFERRO_NATIVE_ISA or `--isa=<mode>` wins.
//
// linalg (#39: its Eigen units are most of a first build) is built by this script itself, beside
// turbo's run, in two cases: `best` (it then also leaves out its baseline f32/f64 kernels, dead code
// on a CPU with AVX2 or AVX-512: isa-paths.mjs `portable`), and under `npm run demo` with the f64
// kernels only (TENFERRO_LINALG_DTYPES=f64, the demo's default: the demo runs f64 solves; `all`
// builds every dtype). Such a build is never stored in turbo's cache, and its status.json says what
// it left out (`isa: best`, `dtypes: f64`), so the next `node scripts/setup.mjs` or `npm test`
// rebuilds linalg in full.
//
// Output (#39): under `npm run demo` first what tenferro is; before a first build what it is about
// to build and about how long that takes here; during the build one updating line on a terminal,
// otherwise one line per finished native package; at the end the time of each step.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ISA_MODES, describeIsaPaths, isaPaths, setupIsaMode } from '../packages/native-build/isa-paths.mjs';
import { estimateBuildSeconds, formatSeconds, NATIVE_PACKAGES } from './setup-estimate.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '12.4.2';
/**
 * Debian packages the workspace builds or tests against. `clang`: linalg's f32 and complex Eigen
 * units compile in half of g++'s time with it (packages/linalg/native/cxx-select.cjs); without it
 * g++ builds them.
 */
const DEBIAN_PACKAGES = ['util-linux', 'pkg-config', 'libopenblas-dev', 'libblas-dev', 'libeigen3-dev', 'clang'];
const quiet = process.argv.includes('--quiet');
const requireNative = process.env.TENFERRO_REQUIRE_NATIVE === '1';
const tty = process.stdout.isTTY === true;
const lifecycle = process.env.npm_lifecycle_event;
const isaMode = setupIsaMode(process.env, process.argv);
if (!ISA_MODES.includes(isaMode)) {
  console.error(`[setup] TENFERRO_NATIVE_ISA=${isaMode}: expected one of ${ISA_MODES.join(', ')} (packages/native-build/isa-paths.mjs)`);
  process.exit(1);
}
const linalgDtypes = process.env.TENFERRO_LINALG_DTYPES ?? (lifecycle === 'demo' ? 'f64' : 'all');
if (!['f64', 'all'].includes(linalgDtypes)) {
  console.error(`[setup] TENFERRO_LINALG_DTYPES=${linalgDtypes}: expected 'f64' (linalg's f64 kernels only, the default of \`npm run demo\`) or 'all'`);
  process.exit(1);
}
const cpuModel = cpus()[0]?.model?.trim() || process.arch;
const cpuCount = availableParallelism();
/** [step, seconds] for the summary line. */
const stepTimes = [];
const setupStarted = Date.now();
async function timed(step, fn) {
  const t0 = Date.now();
  const value = await fn();
  stepTimes.push([step, (Date.now() - t0) / 1000]);
  return value;
}

if (lifecycle === 'demo' && !quiet) {
  console.log(
    [
      'tenferro: numeric CPU work for Node.js — matmul and dot-general, linear algebra, strided tensor',
      'primitives — on native kernels (faer-style GEMM engines, BLAS/LAPACK, Eigen) under an explicit',
      'execution contract: typed errors before any work starts, a bounded number of threads.',
      '`npm run demo` sets this checkout up, then shows what tenferro sees on this machine and what you',
      'get from it (matmul GFLOP/s beside C and pure JavaScript, linear algebra, tensor primitives).',
      '',
    ].join('\n'),
  );
}

function log(message) {
  if (!quiet) console.log(`[setup] ${message}`);
}

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`[setup] failed: ${cmd} ${args.join(' ')} (exit ${result.status ?? result.signal})`);
    process.exit(result.status || 1);
  }
}

function output(cmd, args) {
  try {
    return execFileSync(cmd, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

const [major] = process.versions.node.split('.').map(Number);
if (major < 20) {
  console.error(`[setup] tenferro needs Node.js >= 20; this is ${process.version}`);
  process.exit(1);
}

// 1. Debian packages (only as root; otherwise say exactly what to run).
const debianStarted = Date.now();
if (process.platform === 'linux' && existsSync('/usr/bin/dpkg-query')) {
  const missing = DEBIAN_PACKAGES.filter(
    (p) => output('dpkg-query', ['-W', '-f=${Status}', p]) !== 'install ok installed',
  );
  if (missing.length > 0) {
    const isRoot = process.getuid?.() === 0;
    if (isRoot) {
      log(`installing Debian packages: ${missing.join(' ')}`);
      run('apt-get', ['update', '-qq']);
      run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
    } else {
      console.warn(`[setup] missing Debian packages; run: sudo apt-get install -y ${missing.join(' ')}`);
    }
  }
}

stepTimes.push(['Debian packages', (Date.now() - debianStarted) / 1000]);

// 2. The Node headers the native builds compile against (never downloaded).
const hasHeaders = (dir) => existsSync(join(dir, 'include', 'node', 'node_api.h'));
let nodedir;
if (process.env.npm_config_nodedir) {
  nodedir = resolve(process.env.npm_config_nodedir);
  if (!hasHeaders(nodedir)) {
    console.error(`[setup] npm_config_nodedir=${process.env.npm_config_nodedir} has no include/node/node_api.h.`);
    console.error(`[setup] fix: unset npm_config_nodedir (setup then uses the headers beside ${process.execPath}), or point it at a Node install prefix that has include/node`);
    process.exit(1);
  }
} else {
  const candidates = [resolve(dirname(process.execPath), '..'), '/usr'];
  nodedir = candidates.find(hasHeaders);
  if (nodedir === undefined) {
    const where = candidates.map((d) => join(d, 'include', 'node')).join(' or ');
    const fix = `use a Node.js build that ships its headers (the official tarballs, nvm, fnm and volta do), install Debian's (apt-get install -y libnode-dev), or set npm_config_nodedir to a prefix holding include/node`;
    if (requireNative) {
      console.error(`[setup] no Node headers in ${where}: the native addons cannot be built (TENFERRO_REQUIRE_NATIVE=1).\n[setup] fix: ${fix}`);
      process.exit(1);
    }
    console.warn(`[setup] WARNING: no Node headers in ${where}: the native addons will not be built and tenferro runs in compatibility mode.\n[setup] fix: ${fix}`);
  }
}
const nodedirEnv = nodedir === undefined ? {} : { npm_config_nodedir: nodedir };

// 3. The pinned pnpm (on PATH if it is the right version, else a private copy in .tools/).
const pnpmStarted = Date.now();
let pnpm = 'pnpm';
if (output('pnpm', ['--version']) !== PNPM_VERSION) {
  pnpm = join(root, '.tools', 'node_modules', '.bin', 'pnpm');
  if (output(pnpm, ['--version']) !== PNPM_VERSION) {
    log(`installing pnpm@${PNPM_VERSION} into .tools/`);
    run('npm', ['install', '--prefix', join(root, '.tools'), '--no-save', '--no-package-lock', '--no-audit', '--no-fund', `pnpm@${PNPM_VERSION}`]);
  }
  // turbo looks the package manager up on PATH.
  process.env.PATH = `${dirname(pnpm)}${delimiter}${process.env.PATH ?? ''}`;
}

stepTimes.push(['pnpm', (Date.now() - pnpmStarted) / 1000]);

// 4. Dependencies, when the lockfile or Node changed since the last install.
const installStarted = Date.now();
const stampFile = join(root, 'node_modules', '.tenferro-install-stamp');
const lock = readFileSync(join(root, 'pnpm-lock.yaml'));
const stamp = createHash('sha256').update(lock).update(process.version).digest('hex');
if (!existsSync(stampFile) || readFileSync(stampFile, 'utf8') !== stamp) {
  log('pnpm install --frozen-lockfile');
  run(pnpm, ['install', '--frozen-lockfile', '--reporter=append-only'], {
    env: { ...process.env, ...nodedirEnv },
  });
  writeFileSync(stampFile, stamp);
}

stepTimes.push(['pnpm install', (Date.now() - installStarted) / 1000]);

// 5. Native addons and TypeScript, through turbo (cached; the Node ABI and TENFERRO_NATIVE_ISA are
// part of the key). Its output is filtered to errors; progress comes from the native packages'
// status files (native/build/status.json, written when a package's build ends).
const natives = NATIVE_PACKAGES.filter((p) => existsSync(join(root, 'packages', p, 'native', 'binding.gyp')));
const built = (p) => {
  const status = readStatus(p);
  if (status?.ok !== true || status.abi !== process.versions.modules) return false;
  if (p === 'linalg' && linalgDirect) {
    // A reduced build (dtypes) serves only a run that wants that reduction; a full build of
    // every path this CPU runs (host, all) serves `best` too.
    if (status.dtypes !== undefined && status.dtypes !== linalgDtypes) return false;
    return status.isa === undefined || status.isa === linalgMode || (linalgMode === 'best' && status.dtypes === undefined && ['host', 'all'].includes(status.isa));
  }
  return status.dtypes === undefined && (status.isa === undefined || status.isa === buildMode);
};

// `best` builds the same paths as `host` on a CPU with AVX2 and without AVX-512: the build then
// says `host`, so that `npm run demo` and `npm test` share one build (turbo's key and status.json).
const samePaths = (a, b) => a.avx2 === b.avx2 && a.avx512 === b.avx512;
const buildMode = isaMode === 'best' && samePaths(isaPaths('best'), isaPaths('host')) ? 'host' : isaMode;
// linalg built by this script (the comment at the top), in `best` (the real one: without the
// baseline f32/f64 kernels where a vector path runs) or in turbo's mode.
const linalgDirect = natives.includes('linalg') && (isaMode === 'best' || linalgDtypes !== 'all');
const linalgMode = isaMode === 'best' ? 'best' : buildMode;
const toBuild = natives.filter((p) => !built(p));
/** Whether clang++ is installed (linalg's build then compiles its f32 and complex units with it). */
const hasClang = output('clang++', ['--version']) !== undefined;
const linalgNow = linalgDirect && toBuild.includes('linalg');
if (toBuild.length > 0 && !quiet) {
  const estimate = estimateBuildSeconds(toBuild, isaPaths(isaMode), cpuCount, { linalgDtypes, linalgPaths: isaPaths(linalgMode), clang: hasClang });
  log(
    `building ${toBuild.length} native addon${toBuild.length === 1 ? '' : 's'} (${toBuild.join(', ')}) for ${describeIsaPaths(isaMode)} ` +
      `(TENFERRO_NATIVE_ISA=${isaMode}${buildMode !== isaMode ? `: the same paths as ${buildMode} here${linalgNow ? ', but for linalg' : ''}` : ''})${linalgNow && linalgDtypes === 'f64' ? ', linalg for f64 only (what the demo runs)' : ''} and the TypeScript packages: about ${formatSeconds(estimate)} on this machine ` +
      `(${cpuCount} CPU${cpuCount === 1 ? '' : 's'}, ${cpuModel}); later runs take seconds.`,
  );
} else {
  log(`building (turbo: build:native, build; TENFERRO_NATIVE_ISA=${isaMode})`);
}
const env = {
  ...process.env,
  ...nodedirEnv,
  TENFERRO_NATIVE_ISA: buildMode,
  TURBO_TELEMETRY_DISABLED: '1',
  DO_NOT_TRACK: '1',
  TENFERRO_NODE_ABI: `${process.versions.modules}-${process.version}-${process.arch}`,
};
if (!tty) env.NO_COLOR = '1';
const turboArgs = ['exec', 'turbo', 'run', 'build:native', 'build', '--output-logs=errors-only', '--log-prefix=none'];
const code = await timed('build', async () => {
  if (!linalgDirect) return runWithProgress(pnpm, turboArgs, env, natives);
  // turbo builds every package but linalg's native addon (its TypeScript still: the second run),
  // while linalg's is built here beside it.
  const linalg = linalgNow ? buildLinalg({ ...env, TENFERRO_NATIVE_ISA: linalgMode, TENFERRO_LINALG_DTYPES: linalgDtypes }) : Promise.resolve(0);
  const progress = natives.filter((p) => p !== 'linalg'); // buildLinalg says when linalg is done
  const [turboCode, linalgCode] = await Promise.all([runWithProgress(pnpm, [...turboArgs, '--filter=!@tenferro/linalg'], env, progress), linalg]);
  if (turboCode !== 0) return turboCode;
  const tsCode = await runWithProgress(pnpm, ['exec', 'turbo', 'run', 'build', '--filter=@tenferro/linalg', '--output-logs=errors-only', '--log-prefix=none'], env, []);
  return tsCode !== 0 ? tsCode : linalgCode;
});
const nativeFailures = readNativeStatus();
for (const f of nativeFailures) {
  console.error(`[setup] ${requireNative ? 'ERROR' : 'WARNING'}: ${f.name}: native addon not built: ${f.reason}`);
}
if (code !== 0 || (requireNative && nativeFailures.length > 0)) {
  console.error(`[setup] the build failed${requireNative ? ' (TENFERRO_REQUIRE_NATIVE=1: a native build must succeed)' : ''}.`);
  console.error('[setup] fix: install the toolchain (as root: apt-get install -y python3 make g++), then run `node scripts/setup.mjs` again;');
  console.error('[setup]      one package alone, with its full log: npx pnpm@12.4.2 --filter <package> build:native');
  process.exit(code || 1);
}
if (nativeFailures.length > 0) {
  console.warn('[setup] continuing in compatibility mode for those packages (set TENFERRO_REQUIRE_NATIVE=1 to make this an error).');
}
const linalgStatus = readStatus('linalg');
if (linalgStatus?.ok === true && linalgStatus.dtypes !== undefined) {
  const rest = estimateBuildSeconds(['linalg'], isaPaths('host'), cpuCount, { clang: hasClang });
  log(
    `linalg was built for ${linalgStatus.dtypes} only${lifecycle === 'demo' ? ' (what the demo runs: a shorter first set-up)' : ''}: its other dtypes' jobs are refused (BadDtype). ` +
      `\`node scripts/setup.mjs\` (or \`npm test\`) builds every dtype, about ${formatSeconds(rest)} here; TENFERRO_LINALG_DTYPES=all npm run demo builds them up front.`,
  );
}
// buildIsa: the TENFERRO_NATIVE_ISA turbo ran with (part of its cache key): scripts/test-all.mjs runs
// turbo with the same one, or every native package would be built again (`all` when unset).
writeFileSync(join(root, '.tenferro-setup.json'), JSON.stringify({ pnpm, path: process.env.PATH, nodedir, isa: isaMode, buildIsa: buildMode }, null, 2));
const total = (Date.now() - setupStarted) / 1000;
if (!quiet && total >= 5) {
  const steps = stepTimes.filter(([, t]) => t >= 0.5).map(([name, t]) => `${name} ${formatSeconds(t)}`);
  const perPackage = toBuild.map((p) => [p, nativeSeconds(p)]).filter(([, t]) => t !== undefined);
  log(`ready in ${formatSeconds(total)}${steps.length > 0 ? ` (${steps.join(', ')})` : ''}`);
  if (perPackage.length > 0) log(`native builds, each with the others running beside it: ${perPackage.map(([p, t]) => `${p} ${formatSeconds(t)}`).join(', ')}`);
} else {
  log('ready');
}

/** A package's native/build/status.json, when readable. */
function readStatus(p) {
  try {
    return JSON.parse(readFileSync(join(root, 'packages', p, 'native', 'build', 'status.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

/** A package's last native build time (native/build/status.json `seconds`), when recorded. */
function nativeSeconds(p) {
  const seconds = readStatus(p)?.seconds;
  return typeof seconds === 'number' ? seconds : undefined;
}

/**
 * linalg's native build, run by this script beside turbo (the comment at the top): its output is
 * shown only when it fails (build-addon.mjs then says why, and status.json records it).
 */
function buildLinalg(childEnv) {
  const started = Date.now();
  return new Promise((resolvePromise) => {
    const child = spawn(process.execPath, [join(root, 'packages', 'linalg', 'scripts', 'build-native.mjs')], {
      cwd: join(root, 'packages', 'linalg'),
      env: childEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (text += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (text += chunk));
    child.on('error', (error) => {
      console.error(`[setup] failed to run linalg's native build: ${error.message}`);
      resolvePromise(1);
    });
    child.on('close', (status, signal) => {
      const failed = status !== 0 || signal !== null || readStatus('linalg')?.ok !== true;
      if (failed && text.trim() !== '') process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
      if (!failed && !quiet) {
        const s = nativeSeconds('linalg');
        process.stdout.write(`${tty ? '\r\x1b[2K' : ''}[setup]   native linalg done at ${formatSeconds((Date.now() - started) / 1000)}${s !== undefined ? ` (its build: ${formatSeconds(s)})` : ''}\n`);
      }
      resolvePromise(status ?? 1);
    });
  });
}

/**
 * Runs the build with its output filtered (no `gyp info` chatter). Progress: on a terminal one line,
 * rewritten each second (elapsed time, native packages done, those still building); otherwise one
 * line per native package as it finishes. Nothing when --quiet.
 */
function runWithProgress(cmd, args, childEnv, packages) {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const started = Date.now();
    const done = new Set();
    let lineShown = false;
    const seconds = () => (Date.now() - started) / 1000;
    const clear = () => {
      if (lineShown) process.stdout.write('\r\x1b[2K');
      lineShown = false;
    };
    // A package is done when its status file was written after this build started (a build or a
    // turbo cache hit).
    const poll = () => {
      for (const p of packages) {
        if (done.has(p)) continue;
        let mtime = 0;
        try {
          mtime = statSync(join(root, 'packages', p, 'native', 'build', 'status.json')).mtimeMs;
        } catch {
          continue;
        }
        if (mtime < started) continue;
        done.add(p);
        if (quiet || tty) continue;
        const s = nativeSeconds(p);
        console.log(`[setup]   native ${p} done at ${formatSeconds(seconds())}${s !== undefined ? ` (its build: ${formatSeconds(s)})` : ''} — ${done.size}/${packages.length}`);
      }
      if (quiet || !tty) return;
      const pending = packages.filter((p) => !done.has(p));
      const what = pending.length > 0 ? `compiling ${pending.join(', ')}` : 'TypeScript';
      const text = `[setup] building ${formatSeconds(seconds())} · native ${done.size}/${packages.length} done · ${what}`;
      process.stdout.write(`\r\x1b[2K${text.slice(0, Math.max(40, (process.stdout.columns || 100) - 1))}`);
      lineShown = true;
    };
    const timer = setInterval(poll, 1000);
    const forward = (stream, out) => {
      let pending = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        const shown = lines.filter((line) => !/^\s*gyp info /.test(line));
        if (shown.length === 0) return;
        clear();
        out.write(`${shown.join('\n')}\n`);
      });
      stream.on('end', () => {
        if (pending !== '' && !/^\s*gyp info /.test(pending)) {
          clear();
          out.write(`${pending}\n`);
        }
      });
    };
    forward(child.stdout, process.stdout);
    forward(child.stderr, process.stderr);
    child.on('error', (error) => {
      clearInterval(timer);
      clear();
      console.error(`[setup] failed to run ${cmd}: ${error.message}`);
      resolvePromise(1);
    });
    child.on('close', (status, signal) => {
      clearInterval(timer);
      poll();
      clear();
      if (!quiet && seconds() >= 5) log(`built in ${formatSeconds(seconds())}`);
      resolvePromise(status ?? (signal ? 1 : 0));
    });
  });
}

/** The native packages whose last build (native/build/status.json) failed. */
function readNativeStatus() {
  const failures = [];
  for (const dir of readdirSync(join(root, 'packages'))) {
    const file = join(root, 'packages', dir, 'native', 'build', 'status.json');
    if (!existsSync(file)) continue;
    try {
      const status = JSON.parse(readFileSync(file, 'utf8'));
      if (status.ok !== true) failures.push({ name: `@tenferro/${dir}`, reason: String(status.reason ?? 'no reason recorded').split('\n')[0] });
    } catch {
      failures.push({ name: `@tenferro/${dir}`, reason: `${file} is unreadable` });
    }
  }
  return failures;
}
