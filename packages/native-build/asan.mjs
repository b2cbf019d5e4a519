#!/usr/bin/env node
// `npm run test:asan`: the addons (@tenferro/os, provider-faer, provider-blas, provider-tprims) rebuilt with
// AddressSanitizer and UndefinedBehaviorSanitizer into a separate build directory
// (<package>/native/build/asan/, never the normal native/build/Release), then exercised under them:
//   - each addon's fuzz driver (test/fuzz/native-fuzz-child.mjs, --addon pointing at the ASan build),
//   - the worker-termination probe of each addon,
//   - @tenferro/os's process-wide arbiter stress across isolates,
//   - provider-faer's abort path (a raised abort word, a worker stopping a running GEMM),
//   - provider-blas's whole vitest suite with TENFERRO_BLAS_ADDON=<the ASan build>.
// Any sanitizer report fails the run: ASan stops at the first error, and UBSan is compiled with
// -fno-sanitize-recover=all, so undefined behaviour aborts too.
//
// An ASan addon cannot be loaded into a node that is not built with ASan unless the ASan runtime
// comes first: every child runs with LD_PRELOAD=$(gcc -print-file-name=libasan.so). Node itself
// leaks at exit by design, so ASAN_OPTIONS has detect_leaks=0.
//
//   node packages/native-build/asan.mjs [--count N] [--skip-build] [--only KEY[,KEY…]]   (keys: os faer blas linalg tprims)
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isaGypArgs } from './isa-paths.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const count = Number(opt('count', '20000'));
const only = opt('only', undefined);
const skipBuild = argv.includes('--skip-build');

const ADDONS = [
  { key: 'os', dir: 'packages/os', file: 'tenferro_os.node', copy: ['binding.gyp', 'src'] },
  { key: 'faer', dir: 'packages/provider-faer', file: 'tenferro_faer.node', copy: ['binding.gyp', 'src', 'include'] },
  { key: 'blas', dir: 'packages/provider-blas', file: 'tenferro_blas.node', copy: ['binding.gyp', 'src'] },
  // linalg: no alignment check. Eigen 3.4's SSE pset1<Packet2cf> reads a std::complex<float> (4-byte
  // aligned, e.g. a Householder coefficient held in an expression on the stack) through a double*
  // (_mm_load_sd / _mm_loaddup_pd: no alignment requirement on x86), which UBSan reports wherever
  // the stack layout puts it at 4 mod 8. linalg's own loads are whole elements of typed arrays.
  { key: 'linalg', dir: 'packages/linalg', file: 'tenferro_linalg.node', copy: ['binding.gyp', 'src', 'eigen-include.cjs'], san: '-fno-sanitize=alignment' },
  { key: 'tprims', dir: 'packages/provider-tprims', file: 'tenferro_tprims.node', copy: ['binding.gyp', 'src', 'include'] },
].filter((a) => only === undefined || only.split(',').includes(a.key));

// -O0 (after the addons' own -O3, so it wins): nothing is optimised away, so every access the
// source makes is instrumented, and faer's and tprims's kernel templates (three ISA paths each)
// build in about a fifth of the time -O1 takes (tprims's AVX2 translation unit: 68 s against 329 s
// on a 2-core Zen 3; 177 s at -O3), which keeps CI's sanitizer step short.
// float-cast-overflow is not part of GCC's -fsanitize=undefined, and a NaN or 1e19 converted to an
// integer is exactly the bug class the descriptor checks exist for. vptr needs RTTI (faer: -fno-rtti).
const SAN = '-O0 -fsanitize=address,undefined,float-cast-overflow -fno-sanitize=vptr -fno-sanitize-recover=all -fno-omit-frame-pointer -g';
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
function step(label, fn) {
  const t = Date.now();
  let ok = false;
  try {
    ok = fn();
  } catch (error) {
    console.error(error);
  }
  const ms = Date.now() - t;
  timings.push({ label, ms, ok });
  console.log(`test:asan: ${ok ? 'ok  ' : 'FAIL'} ${label} (${(ms / 1000).toFixed(1)} s)`);
  if (!ok) failures.push(label);
}

/** Run a command; its output streams through; true when it exited 0 without a sanitizer report. */
function run(command, args, { cwd = root, env = {}, quiet = false } = {}) {
  const r = spawnSync(command, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const report = /ERROR: AddressSanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior)Sanitizer/.test(out);
  if (!quiet || r.status !== 0 || report) process.stdout.write(out.length > 20000 && !report ? `${out.slice(0, 2000)}\n…\n${out.slice(-8000)}` : out);
  if (report) console.error('test:asan: the sanitizer reported an error (above)');
  return r.status === 0 && r.signal === null && !report;
}

// --- build ---------------------------------------------------------------------------------------
for (const a of ADDONS) {
  const native = join(root, a.dir, 'native');
  const asanDir = join(native, 'build', 'asan');
  a.addon = join(asanDir, 'build', 'Release', a.file);
  if (skipBuild && existsSync(a.addon)) continue;
  step(`build ${a.key} with -fsanitize=address,undefined`, () => {
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
    // Only the ISA paths this CPU runs: a path it cannot run would be built and never exercised.
    return run(process.execPath, [nodeGyp, 'rebuild', `--nodedir=${nodedir}`, '--jobs=2', '--', ...isaGypArgs('host')], {
      cwd: asanDir,
      quiet: true,
      env: { CFLAGS: `${SAN} ${a.san ?? ''}`, CXXFLAGS: `${SAN} ${a.san ?? ''}`, LDFLAGS: '-fsanitize=address,undefined,float-cast-overflow', npm_config_build_from_source: 'true' },
    });
  });
}
// The builds really are instrumented (and link the sanitizer runtimes), or the runs prove nothing.
for (const a of ADDONS) {
  if (!existsSync(a.addon)) continue;
  step(`${a.key}: the build is instrumented (ASan and UBSan calls, libasan and libubsan linked)`, () => {
    const symbols = spawnSync('nm', ['-D', '--undefined-only', a.addon], { encoding: 'utf8' }).stdout ?? '';
    const libs = spawnSync('ldd', [a.addon], { encoding: 'utf8' }).stdout ?? '';
    return /__asan_report_(load|store)/.test(symbols) && /__ubsan_handle_/.test(symbols) && /libasan\.so/.test(libs) && /libubsan\.so/.test(libs);
  });
}
if (failures.length > 0) finish();

// --- run -----------------------------------------------------------------------------------------
const node = process.execPath;
for (const a of ADDONS) {
  const child = join(root, a.dir, 'test', 'fuzz', 'native-fuzz-child.mjs');
  step(`${a.key}: fuzz, ${count} cases`, () => run(node, [child, '--addon', a.addon, '--seed', '20260401', '--count', String(count), '--trace', join(dirname(a.addon), 'fuzz-trace.json')], { env: sanitizerEnv }));
  const probeFn = a.key === 'os' ? 'getThreadAffinity' : 'info';
  step(`${a.key}: worker termination during ${probeFn}()`, () =>
    run(node, ['--input-type=module', '-e', `import { spawnTerminationProbe } from '@tenferro/native-build/fuzz'; const r = spawnTerminationProbe({ addon: ${JSON.stringify(a.addon)}, fn: '${probeFn}', rounds: 10 }); process.stdout.write(r.stdout + r.stderr); process.exit(r.status === 0 && r.stdout.trim() === 'ok' ? 0 : 1);`], {
      cwd: join(root, a.dir),
      env: sanitizerEnv,
    }),
  );
  if (a.key === 'os') {
    step('os: process-wide arbiter stress across isolates (terminated workers included)', () =>
      run(node, [join(root, a.dir, 'test', 'fuzz', 'arbiter-stress-child.mjs'), '--addon', a.addon, '--ops', '20000', '--workers', '4'], { env: sanitizerEnv }));
    step('os: never widen under taskset -c <one cpu>', () => run('taskset', ['-c', '0', node, join(root, a.dir, 'test', 'fuzz', 'native-fuzz-child.mjs'), '--addon', a.addon, '--seed', '7', '--count', '2000', '--trace', join(dirname(a.addon), 'fuzz-trace-taskset.json')], { env: sanitizerEnv }));
  }
  if (a.key === 'faer') {
    step('faer: abort word raised before and during a GEMM', () => run(node, [join(root, 'packages/native-build/asan-faer-abort.mjs'), a.addon], { env: sanitizerEnv }));
  }
  if (a.key === 'blas') {
    step('blas: the vitest suite against the ASan addon (system BLAS)', () =>
      // handle_segv=0: the fuzz test's sabotaged run kills its child with SIGSEGV on purpose and
      // expects to see that signal, not ASan's report of it (real bad accesses are still caught
      // by the instrumentation before they could fault).
      run(join(root, 'node_modules', '.bin', 'vitest'), ['run', '--reporter=dot'], {
        cwd: join(root, a.dir),
        env: { ...sanitizerEnv, ASAN_OPTIONS: `${sanitizerEnv.ASAN_OPTIONS}:handle_segv=0`, TENFERRO_BLAS_ADDON: a.addon },
        quiet: true,
      }),
    );
  }
}
finish();

function finish() {
  const total = (Date.now() - started) / 1000;
  console.log(`\ntest:asan: ${timings.filter((t) => t.ok).length} passed, ${failures.length} failed in ${total.toFixed(1)} s`);
  for (const t of timings) console.log(`  ${t.ok ? 'ok  ' : 'FAIL'} ${(t.ms / 1000).toFixed(1).padStart(6)} s  ${t.label}`);
  process.exit(failures.length > 0 ? 1 : 0);
}
