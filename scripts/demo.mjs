#!/usr/bin/env node
// The main job: what tenferro sees on this machine (`tenferro info`), then short benchmarks:
// empty-execution cost against piscina, and the blas kind's matmul against C calling cblas directly.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'packages', 'cli', 'dist', 'bin.js');
const steps = [
  [cli, 'info'],
  [join(root, 'packages', 'core', 'bench', 'execution.bench.mjs'), '--quick'],
  [join(root, 'packages', 'provider-blas', 'bench', 'run.mjs'), '--quick'],
];
for (const args of steps) {
  const r = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
