#!/usr/bin/env node
// The hot path of this tree against another checkout of the repository, interleaved:
//
//   node bench/compare-trees.mjs --base <path of the other checkout> [--rounds 5] [--quick]
//
// Runs `hot-path.bench.mjs --only breakdown --json` (per call at n = 64, faer, 1 thread: matmul
// with dispose(), the plain loop that drops its outputs, dotGeneralInto a warm output, and the
// parts under them) alternately in this tree and in the base tree — base, this, this, base, … so
// that neither always runs first — and prints, per part and dtype, the median µs of each and the
// difference. The base checkout must be built (`node scripts/setup.mjs` there, or a copy of a
// built tree with the old `packages/core/src` rebuilt by `npx tsc -b`). Each run measures its own
// C anchor; the anchors' difference shows how much the machine drifted between runs.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const arg = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const base = arg('--base');
if (base === undefined) {
  console.error('usage: node bench/compare-trees.mjs --base <path of the other checkout> [--rounds 5] [--quick]');
  process.exit(2);
}
const rounds = Number(arg('--rounds') ?? 5);
const here = resolve(dirname(fileURLToPath(import.meta.url)), 'hot-path.bench.mjs');
const there = resolve(base, 'packages/core/bench/hot-path.bench.mjs');
if (!existsSync(there)) {
  console.error(`no hot-path bench at ${there}`);
  process.exit(2);
}
const extra = args.includes('--quick') ? ['--quick'] : [];

function once(script) {
  const r = spawnSync(process.execPath, [script, '--only', 'breakdown', '--json', ...extra], { encoding: 'utf8', maxBuffer: 64 << 20, cwd: dirname(script) });
  if (r.status !== 0) throw new Error(`${script} failed (${r.status}): ${r.stderr}`);
  const line = r.stdout.trim().split('\n').at(-1);
  return JSON.parse(line).breakdown;
}

const runs = { base: [], this: [] };
for (let i = 0; i < rounds; i++) {
  const order = i % 2 === 0 ? ['base', 'this'] : ['this', 'base'];
  for (const which of order) {
    runs[which].push(once(which === 'base' ? there : here));
    process.stderr.write(`round ${i + 1}/${rounds}: ${which} done\n`);
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const parts = ['c', 'native', 'emptyExecution', 'matmulDispose', 'matmulDrop', 'into', 'promisesEmpty', 'promisesMatmul', 'promisesInto'];
console.log(`per call at n = 64, faer, 1 thread; median µs of ${rounds} interleaved runs each (base: ${base})`);
console.log(`${'part'.padEnd(18)}${'dtype'.padEnd(6)}${'base'.padStart(9)}${'this'.padStart(9)}${'diff'.padStart(9)}`);
for (const dtype of ['f64', 'f32']) {
  for (const k of parts) {
    const b = runs.base.map((r) => r[dtype]?.[k]).filter((v) => typeof v === 'number');
    const t = runs.this.map((r) => r[dtype]?.[k]).filter((v) => typeof v === 'number');
    if (b.length === 0 || t.length === 0) continue;
    const mb = median(b);
    const mt = median(t);
    console.log(`${k.padEnd(18)}${dtype.padEnd(6)}${mb.toFixed(2).padStart(9)}${mt.toFixed(2).padStart(9)}${(mt - mb >= 0 ? '+' : '') + (mt - mb).toFixed(2).padStart(8)}`);
  }
}
