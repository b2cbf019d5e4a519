#!/usr/bin/env node
// `npm test`: every tier of every package (#39; scripts/test-tiers.mjs says which file is in which
// tier, docs/contributing/testing.md what goes where), as parallel as is safe on this machine:
//   unit, native, docs      packages two at a time, each package's files in parallel (vitest);
//   stress, serial          one package at a time, one file at a time (serial: nothing else runs
//                           but the sanitizer builds at idle priority);
//   release                 packing and the template from tarballs, alone;
//   sanitizer               last: packages/native-build/asan.mjs (ASan+UBSan builds, reused while
//                           their sources are unchanged). When they are not current, the builds
//                           start before the first tier under SCHED_IDLE and take the CPU time the
//                           tiers leave idle (startAsanBuilds); this tier waits for them, then runs.
// Under SCHED_IDLE a compiler never delays a test: any runnable test thread preempts it at once.
// First the TypeScript builds, test typechecks and native builds (turbo). It ends with the time per
// tier, the ten slowest files, the skip count per reason, and the closing line the CI parses
// (keep it last): `N passed, N failed` (`, N skipped` when some were skipped).
//
//   node scripts/test-all.mjs [--tier=unit[,native…]] [--no-build] [--list] [-- <vitest args>]
//   npm run test:unit        (the unit tier: feedback in under a minute)
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, setPriority, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesInTier, TIER_MEANING, TIERS } from './test-tiers.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const dashdash = argv.indexOf('--');
const vitestExtra = dashdash >= 0 ? argv.slice(dashdash + 1) : [];
const own = dashdash >= 0 ? argv.slice(0, dashdash) : argv;
const tierArg = own.find((a) => a.startsWith('--tier='))?.slice('--tier='.length);
const tiers = tierArg === undefined ? TIERS : tierArg.split(',');
for (const t of tiers) {
  if (!TIERS.includes(t)) {
    console.error(`test-all: unknown tier ${t} (tiers: ${TIERS.join(', ')})`);
    process.exit(2);
  }
}
const packagesDir = join(root, 'packages');
const packages = readdirSync(packagesDir).filter((p) => {
  const file = join(packagesDir, p, 'package.json');
  return existsSync(file) && typeof JSON.parse(readFileSync(file, 'utf8')).scripts?.test === 'string';
});

if (own.includes('--list')) {
  for (const tier of TIERS) {
    console.log(`${tier}: ${TIER_MEANING[tier]}`);
    if (tier === 'sanitizer') continue;
    for (const p of packages) for (const f of filesInTier(p, join(packagesDir, p), tier)) console.log(`  ${p}/${f}`);
  }
  process.exit(0);
}

const { pnpm, path, nodedir, buildIsa } = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8'));
// Not on a terminal (CI, a pipe, a log file): no colour codes from turbo, vitest or anything else.
const env = {
  ...process.env,
  PATH: path,
  TURBO_TELEMETRY_DISABLED: '1',
  DO_NOT_TRACK: '1',
  TENFERRO_NODE_ABI: `${process.versions.modules}-${process.version}-${process.arch}`,
};
delete env.TENFERRO_TIER;
if (nodedir) env.npm_config_nodedir = nodedir;
// The instruction-set paths the set-up built with (`host` under `npm test`): part of turbo's key, so
// that its native builds are reused. Unset, the build scripts default to `all` and `npm test` built
// every native package twice (6 min 22 s more on a 2-vCPU Xeon).
if (env.TENFERRO_NATIVE_ISA === undefined && buildIsa !== undefined) env.TENFERRO_NATIVE_ISA = buildIsa;
if (!process.stdout.isTTY) {
  env.NO_COLOR = '1';
  delete env.FORCE_COLOR;
}
const started = Date.now();
const tmpBefore = new Set(tenferroTmp());
for (const p of packages) rmSync(join(packagesDir, p, 'test-results'), { recursive: true, force: true });

let passed = 0;
let failed = 0;
let skipped = 0;
const tierTimes = [];
const fileTimes = [];
const skipReasons = new Map();
const notes = [];

// --- builds: TypeScript (dist), the test files' typecheck, the native addons -----------------------
if (!own.includes('--no-build')) {
  const t = Date.now();
  const r = spawnSync(pnpm, ['exec', 'turbo', 'run', 'build', 'build:native', 'typecheck', '--concurrency=2', '--continue', '--log-prefix=none', '--output-logs=new-only'], {
    cwd: root,
    stdio: 'inherit',
    env,
  });
  tierTimes.push({ tier: 'build + typecheck', ms: Date.now() - t, counts: '' });
  if (r.status !== 0) {
    console.log('test-all: a build or typecheck failed (above) — counted as 1 failed');
    failed += 1;
  }
}

// --- the tiers ------------------------------------------------------------------------------------
const CONCURRENCY = { unit: 2, native: 2, stress: 1, serial: 1, docs: 2, release: 1 };
const ONE_FILE_AT_A_TIME = new Set(['stress', 'serial']);
const parallel = Math.max(1, Math.min(2, availableParallelism()));

const sanitizerKeys = ['os', 'faer', 'blas', 'linalg', 'tprims'];
const asanInBackground = startAsanBuilds();

for (const tier of tiers) {
  const t = Date.now();
  const before = { passed, failed, skipped };
  console.log(`\n=== tier ${tier}: ${TIER_MEANING[tier]}`);
  if (tier === 'sanitizer') await sanitizer();
  else {
    const runs = packages.filter((p) => filesInTier(p, join(packagesDir, p), tier).length > 0);
    const queue = [...runs];
    const lanes = Math.min(CONCURRENCY[tier] === 1 ? 1 : parallel, queue.length);
    await Promise.all(
      Array.from({ length: lanes }, async () => {
        for (let p = queue.shift(); p !== undefined; p = queue.shift()) await runPackage(p, tier, lanes > 1);
      }),
    );
  }
  const ms = Date.now() - t;
  tierTimes.push({ tier, ms, counts: `${passed - before.passed} passed, ${failed - before.failed} failed, ${skipped - before.skipped} skipped` });
}

const leftovers = tenferroTmp().filter((d) => !tmpBefore.has(d));
if (leftovers.length > 0) notes.push(`temporary folders left in ${tmpdir()} during the run (by these tests or another process): ${leftovers.join(', ')}`);

// --- summary (the last line is the one CI parses) -------------------------------------------------
console.log('\ntime per tier:');
for (const { tier, ms, counts } of tierTimes) console.log(`  ${tier.padEnd(18)} ${(ms / 1000).toFixed(1).padStart(7)} s  ${counts}`);
console.log(`  ${'total'.padEnd(18)} ${((Date.now() - started) / 1000).toFixed(1).padStart(7)} s`);
console.log('\nslowest ten files:');
for (const f of [...fileTimes].sort((a, b) => b.ms - a.ms).slice(0, 10)) console.log(`  ${(f.ms / 1000).toFixed(1).padStart(7)} s  [${f.tier}] ${f.file}`);
const slowUnit = fileTimes.filter((f) => f.tier === 'unit' && f.ms > 5000);
if (slowUnit.length > 0) notes.push(`unit files over 5 s (move them to another tier, or make them faster): ${slowUnit.map((f) => `${f.file} ${(f.ms / 1000).toFixed(1)} s`).join(', ')}`);
if (skipReasons.size > 0) {
  console.log('\nskipped, per reason:');
  for (const [reason, n] of [...skipReasons].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(4)}  ${reason}`);
}
for (const n of notes) console.log(`\nnote: ${n}`);
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);

// --- helpers --------------------------------------------------------------------------------------
function tenferroTmp() {
  try {
    return readdirSync(tmpdir()).filter((d) => d.startsWith('tenferro-'));
  } catch {
    return [];
  }
}

/** Run one package's files of one tier; read its JSON results and skips into the totals. */
async function runPackage(pkg, tier, buffered) {
  const dir = join(packagesDir, pkg);
  const results = join(dir, 'test-results');
  mkdirSync(results, { recursive: true });
  const json = join(results, `${tier}.json`);
  const skips = join(results, `skips-${tier}.jsonl`);
  rmSync(json, { force: true });
  rmSync(skips, { force: true });
  const reporters = [`--reporter=${join(root, 'scripts', 'vitest-skip-reporter.mjs')}`];
  // vitest's own default is one worker fewer than the CPUs (one on 2 CPUs); the unit tier's files are
  // TypeScript only and core holds most of them, so core's run gets every CPU once the other lane is done.
  const flags = ONE_FILE_AT_A_TIME.has(tier) ? ['--no-file-parallelism', '--maxWorkers=1'] : tier === 'unit' ? [`--maxWorkers=${parallel}`] : [];
  const runEnv = { ...env, TENFERRO_TIER: tier, TENFERRO_SKIPS_FILE: skips };
  // provider-blas runs its suite twice (system and reference BLAS) and merges the results.
  const blas = pkg === 'provider-blas';
  const vitest = existsSync(join(dir, 'node_modules', '.bin', 'vitest')) ? join(dir, 'node_modules', '.bin', 'vitest') : join(root, 'node_modules', '.bin', 'vitest');
  const [cmd, args] = blas
    ? [process.execPath, [join(dir, 'scripts', 'run-tests.mjs'), ...reporters, ...flags, ...vitestExtra]]
    : [vitest, ['run', '--reporter=default', '--reporter=json', `--outputFile=${json}`, ...reporters, ...flags, ...vitestExtra]];
  const t = Date.now();
  if (!buffered) console.log(`\n--- ${pkg} (${tier})`);
  const status = await new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: dir, env: runEnv, stdio: buffered ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let out = '';
    if (buffered) {
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
    }
    child.on('close', (code, signal) => {
      if (buffered) process.stdout.write(`\n--- ${pkg} (${tier}, ${((Date.now() - t) / 1000).toFixed(1)} s)\n${out}`);
      resolve(signal === null ? code : 1);
    });
  });
  if (blas && existsSync(join(results, 'vitest.json'))) copyFileSync(join(results, 'vitest.json'), json);
  if (!existsSync(json)) {
    console.log(`  ${pkg} (${tier}): no results (the test run crashed or did not start, exit ${status}) — counted as 1 failed`);
    failed += 1;
    return;
  }
  const r = JSON.parse(readFileSync(json, 'utf8'));
  const suiteFailures = (r.testResults ?? []).filter((f) => f.status === 'failed' && (f.assertionResults ?? []).length === 0).length;
  const f = r.numFailedTests + suiteFailures;
  passed += r.numPassedTests;
  failed += f;
  skipped += r.numPendingTests + r.numTodoTests;
  if (status !== 0 && f === 0) {
    console.log(`  ${pkg} (${tier}): vitest exited ${status} with no failed test (an unhandled error outside a test?) — counted as 1 failed`);
    failed += 1;
  }
  for (const file of r.testResults ?? []) {
    const ms = (file.endTime ?? 0) - (file.startTime ?? 0);
    fileTimes.push({ tier, ms, file: `${pkg}/${file.name.startsWith(dir) ? file.name.slice(dir.length + 1) : file.name}` });
  }
  if (existsSync(skips)) {
    for (const line of readFileSync(skips, 'utf8').split('\n')) {
      if (line === '') continue;
      const { reason } = JSON.parse(line);
      skipReasons.set(reason, (skipReasons.get(reason) ?? 0) + 1);
    }
  }
}

/**
 * The sanitizer tier's builds, started before the first tier when that tier comes later in this run
 * and its builds are not current: `asan.mjs --build-only` under SCHED_IDLE (`chrt --idle 0`, else
 * nice 19), so that the compilers take only the CPU time the tiers before leave idle — a test
 * process that wakes takes its CPU back at once — and the sanitizer tier then mostly runs. Resolves
 * to { text, code, ms, chrt }; undefined when not started.
 */
function startAsanBuilds() {
  const at = tiers.indexOf('sanitizer');
  if (at <= 0 || asanBuildsCurrent(sanitizerKeys)) return undefined;
  const script = [join(root, 'packages', 'native-build', 'asan.mjs'), '--only', sanitizerKeys.join(','), '--build-only'];
  const chrt = spawnSync('chrt', ['--idle', '0', 'true']).status === 0;
  const t = Date.now();
  return new Promise((resolve) => {
    const child = chrt ? spawn('chrt', ['--idle', '0', process.execPath, ...script], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] }) : spawn(process.execPath, script, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (!chrt) {
      try {
        setPriority(child.pid, 19);
      } catch {
        // The builds then share the CPUs evenly with the tiers: slower tiers, the same results.
      }
    }
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('error', (error) => (text += `${error}\n`));
    child.on('close', (code, signal) => resolve({ text, code: signal === null ? code : 1, ms: Date.now() - t, chrt }));
  });
}

/** The sanitizer tier: asan.mjs; each of its steps counts as one test. */
async function sanitizer() {
  // linalg: its baseline-ISA, f64-only sanitizer build (asan.mjs says why, #39).
  const keys = sanitizerKeys;
  if (asanInBackground !== undefined) {
    const waitedFrom = Date.now();
    const built = await asanInBackground;
    console.log(
      `test-all: the ASan builds ran in the background (${built.chrt ? 'SCHED_IDLE' : 'nice 19'}) from the first tier on: ${(built.ms / 1000).toFixed(1)} s, ` +
        `of which ${((Date.now() - waitedFrom) / 1000).toFixed(1)} s in this tier`,
    );
    process.stdout.write(built.text);
    const ok = (built.text.match(/^test:asan: ok /gm) ?? []).length;
    const bad = (built.text.match(/^test:asan: FAIL /gm) ?? []).length;
    passed += ok;
    failed += bad;
    if (built.code !== 0 && bad === 0) {
      console.log(`test-all: asan.mjs --build-only exited ${built.code} with no failed step — counted as 1 failed`);
      failed += 1;
    }
  }
  const args = [join(root, 'packages', 'native-build', 'asan.mjs'), '--only', keys.join(',')];
  if (asanInBackground !== undefined) {
    // Each addon the background built is reused; one whose build failed (its addon missing) is built
    // again here and reported again.
    args.push('--skip-build');
  } else if (asanBuildsCurrent(keys)) {
    args.push('--skip-build');
    console.log('test-all: the ASan builds are newer than their native sources: reused (--skip-build)');
  }
  const out = await new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
      process.stdout.write(d);
    });
    child.on('close', (code) => resolve({ text, code }));
  });
  const ok = (out.text.match(/^test:asan: ok /gm) ?? []).length;
  const bad = (out.text.match(/^test:asan: FAIL /gm) ?? []).length;
  passed += ok;
  failed += bad;
  if (out.code !== 0 && bad === 0) {
    console.log(`test-all: asan.mjs exited ${out.code} with no failed step — counted as 1 failed`);
    failed += 1;
  }
}

/** True when every ASan addon exists and is newer than every file of its native sources. */
function asanBuildsCurrent(keys) {
  const dirs = { os: ['packages/os', 'tenferro_os.node'], faer: ['packages/provider-faer', 'tenferro_faer.node'], blas: ['packages/provider-blas', 'tenferro_blas.node'], linalg: ['packages/linalg', 'tenferro_linalg.node'], tprims: ['packages/provider-tprims', 'tenferro_tprims.node'] };
  const newest = (p) => {
    if (!existsSync(p)) return 0;
    const s = statSync(p);
    if (!s.isDirectory()) return s.mtimeMs;
    return Math.max(0, ...readdirSync(p).filter((e) => e !== 'build').map((e) => newest(join(p, e))));
  };
  const asanScripts = Math.max(newest(join(root, 'packages', 'native-build', 'asan.mjs')), newest(join(root, 'packages', 'native-build', 'isa-paths.mjs')));
  return keys.every((k) => {
    const [dir, file] = dirs[k];
    const addon = join(root, dir, 'native', 'build', 'asan', 'build', 'Release', file);
    if (!existsSync(addon)) return false;
    const built = statSync(addon).mtimeMs;
    return built > newest(join(root, dir, 'native')) && built > newest(join(root, dir, 'scripts')) && built > asanScripts;
  });
}
