// Which tier every test file belongs to (#39; docs/contributing/testing.md says what goes where).
// `node scripts/test-all.mjs` runs the tiers in the order of TIERS; `--tier=<name>` (or
// `npm run test:<name>`) runs one. Each package's vitest.config.ts asks `vitestInclude(...)` for its
// files when TENFERRO_TIER is set (scripts/vitest-config.mjs), so a file runs in exactly one tier.
//
// Membership, first match wins:
//   1. a naming convention, for new files: `*.serial.test.ts`, `*.stress.test.ts`,
//      `*.native.test.ts`, `*.docs.test.ts`, `*.release.test.ts`, `*.unit.test.ts`, or a
//      directory `test/<tier>/…` (e.g. `test/serial/census.test.ts`);
//   2. the explicit lists below (files that existed before the convention);
//   3. the package's default tier (DEFAULT_TIER).
// packages/release-checks/test/test-tiers.test.ts checks that every test file lands in one tier,
// that every listed file exists, and that no unit file starts a child process.
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * The tiers, in the order `npm test` runs them. `sanitizer` is not a vitest tier (asan.mjs); it runs
 * last because its builds run in the background, at idle priority, while the others run
 * (scripts/test-all.mjs: the CPU time the tiers before leave idle, ~200 CPU s on 2 CPUs).
 */
export const TIERS = ['unit', 'native', 'stress', 'serial', 'docs', 'release', 'sanitizer'];

/** What each tier holds (printed by `node scripts/test-all.mjs --list`). */
export const TIER_MEANING = {
  unit: 'TypeScript on the reference kernels: no child process, no native rebuild, each file ≤ 5 s; files in parallel',
  native: 'native addons (providers, os, linalg), their fuzz drivers, and CLI runs that load them; files in parallel',
  stress: 'load, soak and fault injection; one file at a time',
  serial: 'files that pin or spin workers on every CPU, count threads or time overlaps, or run several processes: alone (but the sanitizer builds at idle priority), one file at a time',
  sanitizer: 'the addons rebuilt with ASan+UBSan (in the background from the first tier on), their fuzz drivers and native tests under them (packages/native-build/asan.mjs)',
  docs: 'README, docs/ and @example blocks run as written',
  release: 'packing every package, the staged prebuild folders configured and os packed with its prebuilt binary (#40), the provider template installed from tarballs, changesets',
};

/** Tier of a package's files that no rule names. */
export const DEFAULT_TIER = {
  core: 'unit',
  'ext-example': 'unit',
  cli: 'native',
  os: 'native',
  'provider-blas': 'native',
  'provider-faer': 'native',
  'provider-tprims': 'native',
  linalg: 'native',
  'api-docs': 'docs',
  'release-checks': 'release',
};

/** Files placed by name (paths relative to the package). */
export const LISTED = {
  core: {
    // child processes or temporary apps with native providers installed
    'test/default-kind.test.ts': 'native',
    'test/tensor-primitives-slot.test.ts': 'native',
    'test/reliability/bad-input.fuzz.test.ts': 'native',
    // load, soak, faults
    'test/reliability/memory-soak.test.ts': 'stress',
    'test/reliability/fault-injection.test.ts': 'stress',
    'test/reliability/close-and-abort.test.ts': 'stress',
    // thread census, monitors, arbiters on workers, overlap timing, every CPU, several processes
    'test/thread-census.test.ts': 'serial',
    'test/reliability/cross-isolate-monitor.test.ts': 'serial',
    'test/reliability/load-monitor.test.ts': 'serial',
    'test/resource-arbiter.model.test.ts': 'serial',
    'test/process-arbiter.workers.test.ts': 'serial',
    'test/isolate-arbiter.test.ts': 'serial',
    'test/lane-spread.test.ts': 'serial',
    'test/spawns-threads-on-first-use.test.ts': 'serial',
    'test/engine-workers.test.ts': 'serial',
    'test/import-side-effects.test.ts': 'serial',
    'test/cpu-backend.test.ts': 'serial',
    'test/conformance-kit.test.ts': 'serial',
    'test/external-domains.test.ts': 'serial',
    'test/event-loop-turns.test.ts': 'serial',
    'test/drop-loop-turn.test.ts': 'serial',
    // It watches a spinning worker's scheduler state (R, then S once parked): beside another
    // file's workers on 2 CPUs it once timed out in the unit tier (a fresh clone at 75bacb4).
    'test/park-idle-workers.test.ts': 'serial',
    // documents checked against the code
    'test/docs-operations-example.test.ts': 'docs',
    'test/rulebook.test.ts': 'docs',
  },
  cli: { 'test/census.test.ts': 'serial' },
  os: {
    'test/affinity.test.ts': 'serial',
    'test/arbiter.test.ts': 'serial',
    'test/load.test.ts': 'serial',
    'test/never-widen.test.ts': 'serial',
  },
  'provider-blas': {
    'test/threads.test.ts': 'serial',
    'test/exclusive.test.ts': 'serial',
    'test/exclusive-isolates.test.ts': 'serial',
    'test/fork.test.ts': 'serial',
    'test/close-permit.test.ts': 'serial',
  },
  'provider-faer': {
    'test/blocking.test.ts': 'serial',
    'test/integration.test.ts': 'serial',
    'test/abort.test.ts': 'stress',
  },
  'provider-tprims': {
    'test/integration.test.ts': 'serial',
    'test/large.test.ts': 'stress',
    'test/abort.test.ts': 'stress',
  },
  linalg: {
    'test/blocked-parallel.test.ts': 'serial',
    'test/memory-soak.test.ts': 'stress',
  },
  'release-checks': { 'test/doc-examples.test.ts': 'docs' },
};

const VITEST_TIERS = TIERS.filter((t) => t !== 'sanitizer');

/** The tier of one test file of a package (path relative to the package, `/`-separated). */
export function tierOf(pkg, file) {
  const name = file.split('/').pop();
  const bySuffix = /\.(unit|native|stress|serial|docs|release)\.test\.[cm]?[jt]s$/.exec(name);
  if (bySuffix !== null) return bySuffix[1];
  const dir = file.split('/')[1];
  if (file.split('/').length > 2 && VITEST_TIERS.includes(dir)) return dir;
  const listed = LISTED[pkg]?.[file];
  if (listed !== undefined) return listed;
  const fallback = DEFAULT_TIER[pkg];
  if (fallback === undefined) throw new Error(`scripts/test-tiers.mjs: package ${pkg} has no default tier (add it to DEFAULT_TIER)`);
  return fallback;
}

/** Every test file of a package directory (`test/**\/*.test.ts`, fixtures excluded), relative. */
export function testFiles(pkgDir) {
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir)) {
      if (entry === 'node_modules' || entry === 'fixtures' || entry.startsWith('.')) continue;
      const full = join(dir, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (/\.test\.[cm]?[jt]s$/.test(entry)) out.push(relative(pkgDir, full).split(sep).join('/'));
    }
  };
  try {
    walk(join(pkgDir, 'test'));
  } catch {
    return [];
  }
  return out.sort();
}

/** The files of `pkg` (directory `pkgDir`) in `tier`. */
export function filesInTier(pkg, pkgDir, tier) {
  return testFiles(pkgDir).filter((f) => tierOf(pkg, f) === tier);
}
