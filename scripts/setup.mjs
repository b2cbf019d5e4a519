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
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PNPM_VERSION = '12.4.2';
/** Debian packages the workspace builds or tests against. */
const DEBIAN_PACKAGES = ['util-linux', 'pkg-config', 'libopenblas-dev', 'libblas-dev', 'libeigen3-dev'];
const quiet = process.argv.includes('--quiet');
const requireNative = process.env.TENFERRO_REQUIRE_NATIVE === '1';
const tty = process.stdout.isTTY === true;

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

// 4. Dependencies, when the lockfile or Node changed since the last install.
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

// 5. Native addons and TypeScript, through turbo (cached; the Node ABI is part of the key). Its
// output is filtered (no `gyp info` chatter) and a progress line runs meanwhile: a first build
// takes half a minute or more.
log('building native addons and TypeScript (turbo: build:native, build)');
const env = {
  ...process.env,
  ...nodedirEnv,
  TURBO_TELEMETRY_DISABLED: '1',
  DO_NOT_TRACK: '1',
  TENFERRO_NODE_ABI: `${process.versions.modules}-${process.version}-${process.arch}`,
};
if (!tty) env.NO_COLOR = '1';
const code = await runWithProgress(pnpm, ['exec', 'turbo', 'run', 'build:native', 'build', '--output-logs=errors-only', '--log-prefix=none'], env);
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
writeFileSync(join(root, '.tenferro-setup.json'), JSON.stringify({ pnpm, path: process.env.PATH, nodedir }, null, 2));
log('ready');

/** Runs the command with its output filtered, and a spinner (TTY) or a line every 10 s (otherwise) while it is silent. */
function runWithProgress(cmd, args, childEnv) {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    const started = Date.now();
    const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let frame = 0;
    let spinnerShown = false;
    let lastOutput = Date.now();
    const seconds = () => Math.round((Date.now() - started) / 1000);
    const clear = () => {
      if (spinnerShown) process.stdout.write('\r\x1b[2K');
      spinnerShown = false;
    };
    const timer = setInterval(
      () => {
        if (quiet) return;
        if (tty) {
          process.stdout.write(`\r\x1b[2K[setup] ${frames[frame++ % frames.length]} building… ${seconds()} s`);
          spinnerShown = true;
        } else if (Date.now() - lastOutput >= 10000) {
          console.log(`[setup] still building… ${seconds()} s`);
          lastOutput = Date.now();
        }
      },
      tty ? 100 : 1000,
    );
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
        lastOutput = Date.now();
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
      clear();
      if (!quiet && seconds() >= 5) log(`built in ${seconds()} s`);
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
