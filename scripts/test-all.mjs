#!/usr/bin/env node
// Runs every package's tests (turbo `test`, one package at a time: the concurrency tests
// want both CPUs) and prints one closing line totalled over all packages:
// `N passed, N failed` (`, N skipped` when some were skipped).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { pnpm, path, nodedir } = JSON.parse(readFileSync(join(root, '.tenferro-setup.json'), 'utf8'));
const packagesDir = join(root, 'packages');
const packages = readdirSync(packagesDir).filter((p) => existsSync(join(packagesDir, p, 'package.json')));
const withTests = packages.filter((p) => {
  const pkg = JSON.parse(readFileSync(join(packagesDir, p, 'package.json'), 'utf8'));
  return typeof pkg.scripts?.test === 'string';
});
for (const p of withTests) rmSync(join(packagesDir, p, 'test-results'), { recursive: true, force: true });

// Not on a terminal (CI, a pipe, a log file): no colour codes from turbo, vitest or anything else.
// Cached build tasks are not replayed (--output-logs=new-only): only what runs now prints.
const env = {
  ...process.env,
  PATH: path,
  TURBO_TELEMETRY_DISABLED: '1',
  DO_NOT_TRACK: '1',
  TENFERRO_NODE_ABI: `${process.versions.modules}-${process.version}-${process.arch}`,
};
if (nodedir) env.npm_config_nodedir = nodedir;
if (!process.stdout.isTTY) {
  env.NO_COLOR = '1';
  delete env.FORCE_COLOR;
}
const result = spawnSync(pnpm, ['exec', 'turbo', 'run', 'test', '--concurrency=1', '--continue', '--log-prefix=none', '--output-logs=new-only', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
  env,
});

let passed = 0;
let failed = 0;
let skipped = 0;
console.log('\nper package:');
for (const p of withTests) {
  const file = join(packagesDir, p, 'test-results', 'vitest.json');
  if (!existsSync(file)) {
    console.log(`  ${p}: no results (the test run crashed or did not start) — counted as 1 failed`);
    failed += 1;
    continue;
  }
  const r = JSON.parse(readFileSync(file, 'utf8'));
  const suiteFailures = (r.testResults ?? []).filter((t) => t.status === 'failed' && (t.assertionResults ?? []).length === 0).length;
  passed += r.numPassedTests;
  failed += r.numFailedTests + suiteFailures;
  skipped += r.numPendingTests + r.numTodoTests;
  console.log(`  ${p}: ${r.numPassedTests} passed, ${r.numFailedTests + suiteFailures} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
}
if (result.status !== 0 && failed === 0) {
  console.log('  turbo reported a failing task outside the test counts — counted as 1 failed');
  failed += 1;
}
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
