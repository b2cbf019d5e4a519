#!/usr/bin/env node
// The package's `test` script: the whole suite twice — on the system BLAS (OpenBLAS pthreads on
// Debian with libopenblas-dev) and on the reference BLAS (scripts/test-reference-blas.sh) — and
// ONE merged test-results/vitest.json whose counts are the sums of both runs (the per-run files
// stay beside it: vitest-system.json, vitest-reference.json). Exit 1 when either run fails.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const results = join(packageDir, 'test-results');
mkdirSync(results, { recursive: true });
const reporters = (file) => ['--reporter=default', '--reporter=json', `--outputFile=${join(results, file)}`];
const extra = process.argv.slice(2);

function run(label, cmd, args, env = {}) {
  console.log(`\n@tenferro/provider-blas: tests on ${label}`);
  const r = spawnSync(cmd, args, { cwd: packageDir, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status ?? 1;
}

const runs = [];
rmSync(join(results, 'vitest-system.json'), { force: true });
rmSync(join(results, 'vitest-reference.json'), { force: true });
runs.push({ label: 'system BLAS', file: 'vitest-system.json', status: run('the system BLAS', 'npx', ['vitest', 'run', ...reporters('vitest-system.json'), ...extra]) });
const refDir = process.env.TENFERRO_REFERENCE_BLAS_DIR ?? '/usr/lib/x86_64-linux-gnu/blas';
if (existsSync(join(refDir, 'libblas.so.3'))) {
  runs.push({
    label: 'reference BLAS',
    file: 'vitest-reference.json',
    status: run('the reference BLAS', 'sh', [join(packageDir, 'scripts', 'test-reference-blas.sh'), ...reporters('vitest-reference.json'), ...extra]),
  });
} else {
  console.log(`\n@tenferro/provider-blas: reference BLAS run skipped (${refDir}/libblas.so.3 not found; apt-get install -y libblas-dev)`);
}

const COUNTS = ['numTotalTestSuites', 'numPassedTestSuites', 'numFailedTestSuites', 'numPendingTestSuites', 'numTotalTests', 'numPassedTests', 'numFailedTests', 'numPendingTests', 'numTodoTests'];
const merged = { success: true, startTime: Date.now(), testResults: [] };
for (const key of COUNTS) merged[key] = 0;
for (const r of runs) {
  const path = join(results, r.file);
  if (!existsSync(path)) {
    // The run crashed before reporting: count it as one failed suite so totals cannot look green.
    merged.success = false;
    merged.numTotalTestSuites += 1;
    merged.numFailedTestSuites += 1;
    merged.testResults.push({ name: `(${r.label}: no results, exit ${r.status})`, status: 'failed', assertionResults: [], message: 'the run crashed or did not start' });
    continue;
  }
  const json = JSON.parse(readFileSync(path, 'utf8'));
  for (const key of COUNTS) merged[key] += json[key] ?? 0;
  merged.success &&= json.success !== false && r.status === 0;
  merged.startTime = Math.min(merged.startTime, json.startTime ?? merged.startTime);
  for (const t of json.testResults ?? []) merged.testResults.push({ ...t, name: `${t.name} [${r.label}]` });
}
writeFileSync(join(results, 'vitest.json'), JSON.stringify(merged));
console.log(
  `\n@tenferro/provider-blas: ${runs.map((r) => r.label).join(' + ')}: ${merged.numPassedTests} passed, ${merged.numFailedTests} failed, ${merged.numPendingTests + merged.numTodoTests} skipped (merged into test-results/vitest.json)`,
);
process.exit(runs.every((r) => r.status === 0) && merged.success ? 0 : 1);
