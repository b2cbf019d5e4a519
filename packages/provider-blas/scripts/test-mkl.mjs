#!/usr/bin/env node
// `npm run test:mkl` (root; not in .ci/run — see README "Tests"): the provider suite on Intel MKL
// from Debian's non-free component, once per threading layer, leaving the machine as it was (#42).
//
//   1. records the installed packages and the libblas.so.3 / liblapack.so.3 alternatives;
//   2. adds the distribution's `non-free` component in a separate apt source file (removed again)
//      and runs apt-get update;
//   3. answers debconf's "use MKL as the default BLAS/LAPACK?" with no, so OpenBLAS stays the
//      system's libblas.so.3, and installs `libmkl-rt` (MKL's single dynamic library with every
//      layer's libraries; the addon links nothing at build time, so no -dev package and no rebuild
//      is needed) and `libomp5-14` (LLVM's OpenMP runtime, which implements Intel's ABI: Debian has
//      no `libiomp5`) and `libtbb12` (oneTBB without MKL's TBB layer, which Debian lacks: the refusal
//      is tested); GNU OpenMP is `libgomp1`, already there with gcc;
//   4. runs the whole suite (vitest, JSON report per layer) with TENFERRO_BLAS_LIBRARY=mkl and
//      MKL_THREADING_LAYER = SEQUENTIAL, GNU and INTEL (each only when its runtime is present),
//      TENFERRO_BLAS_EXPECT=mkl, and prints passed / failed / skipped per layer;
//   5. purges exactly the packages it installed, removes the apt source, runs apt-get update, and
//      fails when the alternatives differ from step 1. TENFERRO_KEEP_MKL=1 keeps MKL installed.
// Extra arguments go to vitest (e.g. a test file). Exit 1 when any layer fails or anything is left.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const results = join(packageDir, 'test-results');
const SOURCE = '/etc/apt/sources.list.d/tenferro-mkl-non-free.sources';
// libtbb12: the TBB runtime without MKL's TBB layer (Debian has none), the case MKL would exit on.
const PACKAGES = ['libmkl-rt', 'libomp5-14', 'libtbb12'];
const ALTERNATIVES = ['libblas.so.3-x86_64-linux-gnu', 'liblapack.so.3-x86_64-linux-gnu'];
const LAYERS = [
  { env: 'SEQUENTIAL', runtime: () => true },
  { env: 'GNU', runtime: () => hasLib('libgomp.so.1') },
  { env: 'INTEL', runtime: () => hasLib('libiomp5.so') || hasLib('libomp.so.5') },
];
const started = Date.now();
const log = (m) => console.log(`test-mkl: ${m}`);
const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: opts.inherit ? 'inherit' : [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'], env: opts.env ?? process.env, cwd: opts.cwd, input: opts.input });
  if (opts.check !== false && r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status}): ${(r.stderr ?? '').trim().slice(-800)}`);
  return r;
}
function hasLib(soname) {
  return new RegExp(`\\b${soname.replace(/\./g, '\\.')}\\b`).test(run('ldconfig', ['-p'], { check: false }).stdout ?? '');
}
function installed() {
  const out = run('dpkg-query', ['-W', '-f=${db:Status-Status} ${Package}\\n']).stdout;
  return new Set(out.split('\n').filter((l) => l.startsWith('installed ')).map((l) => l.slice(10).trim()));
}
function alternatives() {
  return ALTERNATIVES.map((name) => {
    const r = run('update-alternatives', ['--query', name], { check: false });
    const value = /^Value: (.*)$/m.exec(r.stdout ?? '')?.[1] ?? '(none)';
    const status = /^Status: (.*)$/m.exec(r.stdout ?? '')?.[1] ?? '?';
    return `${name}: ${value} (${status})`;
  });
}

if (process.getuid?.() !== 0) {
  console.error('test-mkl: needs root (apt-get): run it as root, e.g. sudo npm run test:mkl');
  process.exit(2);
}
const keep = process.env.TENFERRO_KEEP_MKL === '1';
const before = installed();
const altBefore = alternatives();
log(`system BLAS before: ${altBefore.join('; ')}`);
const codename = /^VERSION_CODENAME=(.*)$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'bookworm';
let addedSource = false;
let newPackages = [];
const layerResults = [];
let failed = false;

try {
  if (!existsSync(SOURCE)) {
    log(`enabling ${codename} non-free (${SOURCE})`);
    writeFileSync(SOURCE, `Types: deb\nURIs: http://deb.debian.org/debian\nSuites: ${codename}\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n`);
    addedSource = true;
  }
  const t0 = Date.now();
  run('apt-get', ['update', '-qq'], { env: aptEnv });
  run('debconf-set-selections', [], { input: 'libmkl-rt libmkl-rt/use-as-default-blas-lapack boolean false\n' });
  log(`apt-get install ${PACKAGES.join(' ')} (about 280 MB; nothing new when already cached)`);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...PACKAGES], { env: aptEnv });
  newPackages = [...installed()].filter((p) => !before.has(p));
  log(`installed ${newPackages.length} packages in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const altDuring = alternatives();
  if (altDuring.join() !== altBefore.join()) {
    failed = true;
    log(`ERROR: installing MKL changed the system BLAS: ${altDuring.join('; ')}`);
  }
  mkdirSync(results, { recursive: true });
  for (const layer of LAYERS) {
    if (!layer.runtime()) {
      log(`MKL_THREADING_LAYER=${layer.env}: skipped (its OpenMP runtime is not installed)`);
      layerResults.push({ layer: layer.env, absent: true });
      continue;
    }
    const file = join(results, `vitest-mkl-${layer.env.toLowerCase()}.json`);
    rmSync(file, { force: true });
    const t = Date.now();
    log(`the provider suite on MKL, MKL_THREADING_LAYER=${layer.env}`);
    const r = run('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile=${file}`, ...process.argv.slice(2)], {
      inherit: true,
      check: false,
      cwd: packageDir,
      env: { ...process.env, TENFERRO_BLAS_LIBRARY: 'mkl', MKL_THREADING_LAYER: layer.env, TENFERRO_BLAS_EXPECT: 'mkl' },
    });
    const json = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
    const counts = json === undefined ? { passed: 0, failed: 1, skipped: 0 } : { passed: json.numPassedTests, failed: json.numFailedTests, skipped: json.numPendingTests + json.numTodoTests };
    if (r.status !== 0 || counts.failed > 0) failed = true;
    layerResults.push({ layer: layer.env, ...counts, exit: r.status, seconds: Math.round((Date.now() - t) / 1000) });
  }
} catch (e) {
  failed = true;
  log(`ERROR: ${e instanceof Error ? e.message : String(e)}`);
} finally {
  if (!keep) {
    if (newPackages.length > 0) {
      log(`removing what it installed: ${newPackages.join(' ')}`);
      const r = run('apt-get', ['purge', '-y', '-qq', ...newPackages], { env: aptEnv, check: false });
      if (r.status !== 0) {
        failed = true;
        log(`ERROR: apt-get purge failed: ${(r.stderr ?? '').trim().slice(-400)}`);
      }
    }
    if (addedSource) {
      rmSync(SOURCE, { force: true });
      run('apt-get', ['update', '-qq'], { env: aptEnv, check: false });
    }
    const left = [...installed()].filter((p) => !before.has(p));
    if (left.length > 0) {
      failed = true;
      log(`ERROR: still installed: ${left.join(' ')}`);
    }
    const altAfter = alternatives();
    log(`system BLAS after: ${altAfter.join('; ')}`);
    if (altAfter.join() !== altBefore.join()) {
      failed = true;
      log('ERROR: the system BLAS alternatives differ from before');
    }
  } else log('TENFERRO_KEEP_MKL=1: MKL stays installed (and the non-free source)');
}

console.log('\ntest-mkl: results per MKL threading layer');
for (const r of layerResults) {
  console.log(r.absent ? `  ${r.layer}: not run (its runtime is not installed)` : `  ${r.layer}: ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped (${r.seconds} s)`);
}
const total = layerResults.filter((r) => !r.absent).reduce((t, r) => ({ passed: t.passed + r.passed, failed: t.failed + r.failed, skipped: t.skipped + r.skipped }), { passed: 0, failed: 0, skipped: 0 });
console.log(`test-mkl: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped in ${Math.round((Date.now() - started) / 1000)} s (install, ${layerResults.length} layers, removal)`);
process.exit(failed ? 1 : 0);
