#!/usr/bin/env node
// `npm run test:asan`: the addons (@tenferro/os, provider-faer, provider-blas, linalg, provider-tprims)
// rebuilt with AddressSanitizer and UndefinedBehaviorSanitizer into a separate build directory
// (<package>/native/build/asan/, never the normal native/build/Release), then exercised under them:
//   - each addon's fuzz driver (test/fuzz/native-fuzz-child.mjs, --addon pointing at the ASan build),
//   - the worker-termination probe of each addon,
//   - @tenferro/os's process-wide arbiter stress across isolates,
//   - provider-faer's abort path (a raised abort word, a worker stopping a running GEMM),
//   - provider-blas's vitest suite with TENFERRO_BLAS_ADDON=<the ASan build> (but two files that never
//     reach the ASan build's native code: the step's comment).
// Any sanitizer report fails the run: ASan stops at the first error, and UBSan is compiled with
// -fno-sanitize-recover=all, so undefined behaviour aborts too.
//
// linalg's sanitizer build is reduced (#39): the baseline instruction set only (no AVX2/AVX-512
// library) and the f64 kernels only (binding.gyp's tenferro_linalg_f64_only=1: f32, c64 and c128
// jobs are refused with BadDtype, and its fuzz expects and counts those refusals). Eigen's templates
// for all four dtypes took ~4 min of both CPUs at -O0 on a quiet machine (1,143 s on a loaded one),
// which CI's 20-minute budget does not have. The kernels are one template over the scalar type
// (src/ops.h: the same indexing, strides, offsets, batch walk and team tasks for every dtype), so
// the f64 instance checks that code; what only the complex dtypes run (ops.h's is_cplx branches:
// conjugated copies, the complex eigensolver, the small complex SVD's verify-and-widen retry) is
// left to the normal build's fuzz and tests. Its fuzz runs 5,000 cases (--count overrides). Its
// units are compiled by clang++ when installed and linked by g++ against g++'s runtimes
// (native/cxx-select.cjs): 30 against 72 CPU s.
//
// An ASan addon cannot be loaded into a node that is not built with ASan unless the ASan runtime
// comes first: every child runs with LD_PRELOAD=$(gcc -print-file-name=libasan.so). Node itself
// leaks at exit by design, so ASAN_OPTIONS has detect_leaks=0.
//
//   node packages/native-build/asan.mjs [--count N] [--skip-build | --build-only] [--only KEY[,KEY…]]   (keys: os faer blas linalg tprims)
//   (--count: the fuzz cases of every addon; default 20,000, linalg 5,000; --build-only: the builds
//   and nothing else — scripts/test-all.mjs runs them in the background while the tiers before the
//   sanitizer tier run, then this script with --skip-build)
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isaGypArgs } from './isa-paths.mjs';
import { filesInTier } from '../../scripts/test-tiers.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const countArg = opt('count', undefined);
const only = opt('only', undefined);
const skipBuild = argv.includes('--skip-build');
const buildOnly = argv.includes('--build-only');

const ADDONS = [
  { key: 'os', dir: 'packages/os', file: 'tenferro_os.node', copy: ['binding.gyp', 'src'] },
  { key: 'faer', dir: 'packages/provider-faer', file: 'tenferro_faer.node', copy: ['binding.gyp', 'src', 'include'] },
  { key: 'blas', dir: 'packages/provider-blas', file: 'tenferro_blas.node', copy: ['binding.gyp', 'src'] },
  // linalg: no alignment check. Eigen 3.4's SSE pset1<Packet2cf> reads a std::complex<float> (4-byte
  // aligned, e.g. a Householder coefficient held in an expression on the stack) through a double*
  // (_mm_load_sd / _mm_loaddup_pd: no alignment requirement on x86), which UBSan reports wherever
  // the stack layout puts it at 4 mod 8. linalg's own loads are whole elements of typed arrays.
  // Baseline ISA, f64 kernels only (the comment at the top): gypArgs replaces isaGypArgs('best').
  {
    key: 'linalg',
    dir: 'packages/linalg',
    file: 'tenferro_linalg.node',
    copy: ['binding.gyp', 'src', 'eigen-include.cjs', 'cxx-select.cjs'],
    san: '-fno-sanitize=alignment',
    gypArgs: ['-Dtenferro_avx2=0', '-Dtenferro_avx512=0', '-Dtenferro_linalg_f64_only=1'],
    fuzzArgs: ['--dtypes', 'f64'],
    count: 5000,
  },
  { key: 'tprims', dir: 'packages/provider-tprims', file: 'tenferro_tprims.node', copy: ['binding.gyp', 'src', 'include'] },
].filter((a) => only === undefined || only.split(',').includes(a.key));

// -O0 (after the addons' own -O3, so it wins): nothing is optimised away, so every access the
// source makes is instrumented, and faer's and tprims's kernel templates (three ISA paths each)
// build in about a fifth of the time -O1 takes (tprims's AVX2 translation unit: 68 s against 329 s
// on a 2-core Zen 3; 177 s at -O3), which keeps CI's sanitizer step short.
// float-cast-overflow is not part of GCC's -fsanitize=undefined, and a NaN or 1e19 converted to an
// integer is exactly the bug class the descriptor checks exist for. vptr needs RTTI (faer: -fno-rtti).
// -g1: line tables only, all a sanitizer report's stack needs (file:line per frame); full -g made
// linalg's Eigen unit take 20 % longer (71 against 60 CPU s) for variables no report prints.
const SAN = '-O0 -fsanitize=address,undefined,float-cast-overflow -fno-sanitize=vptr -fno-sanitize-recover=all -fno-omit-frame-pointer -g1';
const libasan = spawnSync('gcc', ['-print-file-name=libasan.so'], { encoding: 'utf8' }).stdout.trim();
if (!libasan.startsWith('/') || !existsSync(libasan)) {
  console.error(`test:asan: libasan.so not found (gcc -print-file-name=libasan.so said ${JSON.stringify(libasan)}); install gcc`);
  process.exit(1);
}
const sanitizerEnv = {
  LD_PRELOAD: libasan,
  ASAN_OPTIONS: 'detect_leaks=0:abort_on_error=1:halt_on_error=1:allow_user_segv_handler=1',
  UBSAN_OPTIONS: 'halt_on_error=1:print_stacktrace=1',
};
const nodedir = ['/usr', resolve(dirname(process.execPath), '..')].find((d) => existsSync(join(d, 'include', 'node', 'node_api.h')));

const started = Date.now();
const timings = [];
const failures = [];
function record(label, t, ok) {
  const ms = Date.now() - t;
  timings.push({ label, ms, ok });
  console.log(`test:asan: ${ok ? 'ok  ' : 'FAIL'} ${label} (${(ms / 1000).toFixed(1)} s)`);
  if (!ok) failures.push(label);
}
function step(label, fn) {
  const t = Date.now();
  let ok = false;
  try {
    ok = fn();
  } catch (error) {
    console.error(error);
  }
  record(label, t, ok);
  return ok;
}
async function stepAsync(label, fn) {
  const t = Date.now();
  let ok = false;
  try {
    ok = await fn();
  } catch (error) {
    console.error(error);
  }
  record(label, t, ok);
  return ok;
}

/** Whether a finished command passed (exit 0, no signal, no sanitizer report); prints its output unless quiet and clean. */
function judge(out, status, signal, quiet) {
  const report = /ERROR: AddressSanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior)Sanitizer/.test(out);
  if (!quiet || status !== 0 || report) process.stdout.write(out.length > 20000 && !report ? `${out.slice(0, 2000)}\n…\n${out.slice(-8000)}` : out);
  if (report) console.error('test:asan: the sanitizer reported an error (above)');
  return status === 0 && signal === null && !report;
}

/** Run a command without blocking the event loop (two lanes run side by side); true when it exited 0 without a sanitizer report. */
function runAsync(command, args, { cwd = root, env = {}, quiet = false } = {}) {
  return new Promise((resolvePromise) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (error) => (out += `${error}\n`));
    child.on('close', (status, signal) => resolvePromise(judge(out, status, signal, quiet)));
  });
}

// --- build and run, one addon after another in each of two lanes -----------------------------------
// Each lane takes the next addon, builds it (quiet unless it fails), checks the build is
// instrumented and runs its steps; linalg's and tprims's builds start first: linalg's is one long
// translation unit (src/ops_f64.cc) and every build ends on a single compile or link, so while one
// lane compiles the other builds or tests the next addon and both CPUs stay busy (the same
// coverage, less wall time, #39). What must run with nothing beside it (provider-blas's serial
// test files: they count threads and pin workers on every CPU) waits for both lanes to finish.
const BUILD_FIRST = ['linalg', 'tprims'];
const rank = (a) => (BUILD_FIRST.includes(a.key) ? BUILD_FIRST.indexOf(a.key) : BUILD_FIRST.length);
for (const a of ADDONS) a.addon = join(root, a.dir, 'native', 'build', 'asan', 'build', 'Release', a.file);
const queue = [...ADDONS].sort((x, y) => rank(x) - rank(y));
async function build(a) {
  const native = join(root, a.dir, 'native');
  const asanDir = join(native, 'build', 'asan');
  rmSync(asanDir, { recursive: true, force: true });
  mkdirSync(asanDir, { recursive: true });
  for (const entry of a.copy) cpSync(join(native, entry), join(asanDir, entry), { recursive: true });
  // binding.gyp names helper scripts relative to native/ (provider-blas: ../scripts/...).
  const gyp = join(asanDir, 'binding.gyp');
  const text = spawnSync('sed', ['-i', `s#\\.\\./scripts/#${join(root, a.dir, 'scripts')}/#g`, gyp]);
  if (text.status !== 0) return false;
  const require = createRequire(join(root, a.dir, 'package.json'));
  const gypPkg = require.resolve('node-gyp/package.json');
  const nodeGyp = join(dirname(gypPkg), 'bin', 'node-gyp.js');
  // This CPU's best path and the portable one (isa-paths.mjs `best`): the fuzz drivers and tests
  // run the path dispatch picks, so a slower vector path this CPU also runs (AVX2 on an AVX-512
  // CPU) would be compiled under the sanitizers and never exercised — ~70 CPU s of tprims's and
  // faer's -O0 builds (linalg: its own reduced set, a.gypArgs).
  return runAsync(process.execPath, [nodeGyp, 'rebuild', `--nodedir=${nodedir}`, '--jobs=2', '--', ...(a.gypArgs ?? isaGypArgs('best'))], {
    cwd: asanDir,
    quiet: true,
    env: { CFLAGS: `${SAN} ${a.san ?? ''}`, CXXFLAGS: `${SAN} ${a.san ?? ''}`, LDFLAGS: '-fsanitize=address,undefined,float-cast-overflow', npm_config_build_from_source: 'true' },
  });
}

const node = process.execPath;
const vitest = join(root, 'node_modules', '.bin', 'vitest');
/** Steps that run after both lanes, alone: [label, () => Promise<boolean>]. */
const alone = [];

/** An addon's steps under the sanitizers, in order: [label, () => Promise<boolean>]. */
function stepsOf(a) {
  const steps = [];
  const child = join(root, a.dir, 'test', 'fuzz', 'native-fuzz-child.mjs');
  const count = Number(countArg ?? a.count ?? 20000);
  const restricted = a.fuzzArgs === undefined ? '' : ` (${a.fuzzArgs.join(' ')})`;
  steps.push([`${a.key}: fuzz, ${count} cases${restricted}`, () => runAsync(node, [child, '--addon', a.addon, ...(a.fuzzArgs ?? []), '--seed', '20260401', '--count', String(count), '--trace', join(dirname(a.addon), 'fuzz-trace.json')], { env: sanitizerEnv })]);
  const probeFn = a.key === 'os' ? 'getThreadAffinity' : 'info';
  steps.push([
    `${a.key}: worker termination during ${probeFn}()`,
    () =>
      runAsync(node, ['--input-type=module', '-e', `import { spawnTerminationProbe } from '@tenferro/native-build/fuzz'; const r = spawnTerminationProbe({ addon: ${JSON.stringify(a.addon)}, fn: '${probeFn}', rounds: 10 }); process.stdout.write(r.stdout + r.stderr); process.exit(r.status === 0 && r.stdout.trim() === 'ok' ? 0 : 1);`], {
        cwd: join(root, a.dir),
        env: sanitizerEnv,
      }),
  ]);
  if (a.key === 'os') {
    steps.push(['os: process-wide arbiter stress across isolates (terminated workers included)', () => runAsync(node, [join(root, a.dir, 'test', 'fuzz', 'arbiter-stress-child.mjs'), '--addon', a.addon, '--ops', '20000', '--workers', '4'], { env: sanitizerEnv })]);
    steps.push(['os: never widen under taskset -c <one cpu>', () => runAsync('taskset', ['-c', '0', node, join(root, a.dir, 'test', 'fuzz', 'native-fuzz-child.mjs'), '--addon', a.addon, '--seed', '7', '--count', '2000', '--trace', join(dirname(a.addon), 'fuzz-trace-taskset.json')], { env: sanitizerEnv })]);
  }
  if (a.key === 'faer') {
    steps.push(['faer: abort word raised before and during a GEMM', () => runAsync(node, [join(root, 'packages/native-build/asan-faer-abort.mjs'), a.addon], { env: sanitizerEnv })]);
  }
  if (a.key === 'blas') {
    // Every file that reaches the ASan addon's native code (load and the runtime's identification,
    // gemm, lapack, the fork guard, info() during termination), in this process or in children
    // (they inherit TENFERRO_BLAS_ADDON). Left out (#39, ~20 s of the step): native-fuzz.test.ts,
    // whose child loads the normal Release build (the "blas: fuzz" step above runs the driver on
    // the ASan build) and whose sabotaged run dies of SIGSEGV on purpose — without it ASan's SEGV
    // handler stays on for the whole suite —, and default-kind.test.ts, which checks core's
    // provider discovery in temporary apps (TypeScript; its 2×2 GEMMs are gemm.test.ts's path).
    // The files of the serial tier (scripts/test-tiers.mjs) run at the end, alone; the others two
    // files at a time, as in the native tier.
    const left = ['test/native-fuzz.test.ts', 'test/default-kind.test.ts'];
    const serial = filesInTier('provider-blas', join(root, a.dir), 'serial');
    const options = { cwd: join(root, a.dir), env: { ...sanitizerEnv, TENFERRO_BLAS_ADDON: a.addon }, quiet: true };
    const exclude = (files) => files.flatMap((f) => ['--exclude', f]);
    steps.push(['blas: the vitest suite against the ASan addon (system BLAS), but its serial files, the Release-build fuzz and the discovery apps', () => runAsync(vitest, ['run', '--reporter=dot', '--maxWorkers=2', ...exclude([...left, ...serial])], options)]);
    alone.push([`blas: the vitest suite's serial files against the ASan addon, alone (${serial.length} files)`, () => runAsync(vitest, ['run', '--reporter=dot', '--maxWorkers=1', ...exclude(left), ...serial], options)]);
  }
  return steps;
}

async function pipeline(a) {
  if (!(skipBuild && existsSync(a.addon))) {
    if (!(await stepAsync(`build ${a.key} with -fsanitize=address,undefined`, () => build(a)))) return;
  }
  if (buildOnly) return;
  // The build really is instrumented (and links the sanitizer runtimes), or the runs prove nothing.
  const instrumented = step(`${a.key}: the build is instrumented (ASan and UBSan calls, libasan and libubsan linked)`, () => {
    const symbols = spawnSync('nm', ['-D', '--undefined-only', a.addon], { encoding: 'utf8' }).stdout ?? '';
    const libs = spawnSync('ldd', [a.addon], { encoding: 'utf8' }).stdout ?? '';
    return /__asan_report_(load|store)/.test(symbols) && /__ubsan_handle_/.test(symbols) && /libasan\.so/.test(libs) && /libubsan\.so/.test(libs);
  });
  if (!instrumented) return;
  for (const [label, fn] of stepsOf(a)) await stepAsync(label, fn);
}
const lane = async () => {
  for (let a = queue.shift(); a !== undefined; a = queue.shift()) await pipeline(a);
};
const lanesStarted = Date.now();
await Promise.all([lane(), lane()]);
console.log(`test:asan: builds and runs took ${((Date.now() - lanesStarted) / 1000).toFixed(1)} s of wall time in two lanes`);
if (!buildOnly) for (const [label, fn] of alone) await stepAsync(label, fn);
finish();

function finish() {
  const total = (Date.now() - started) / 1000;
  console.log(`\ntest:asan: ${timings.filter((t) => t.ok).length} passed, ${failures.length} failed in ${total.toFixed(1)} s`);
  for (const t of timings) console.log(`  ${t.ok ? 'ok  ' : 'FAIL'} ${(t.ms / 1000).toFixed(1).padStart(6)} s  ${t.label}`);
  process.exit(failures.length > 0 ? 1 : 0);
}
