#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
// Where the Inner-mode split pays: backend.dotGeneralInto (reused output) under several
// `parallelMinWork` settings, against OpenBLAS (bench/anchor) at the same thread count.
//
//   node bench/split.mjs [rounds=4] [sizes=192,256,512,1024] [threads=2] [settings=split,seq,default]
//
// Settings: split = parallelMinWork 0 (always split over the pool), seq = Infinity (always one
// task), default = DEFAULT_PARALLEL_MIN_WORK, or a number (e.g. 884736 = the old 96³ default).
// Each round measures every (dtype, n): the anchor, then each setting in turn (interleaved, so all
// see the same machine state). Printed: best GFLOP/s / best÷anchor best (median÷anchor median).
// OPENBLAS_CORETYPE is left as the environment has it (as in bench/run.mjs).
import { CpuBackend, Tensor } from '@tenferro/core';
import { buildAnchor } from '../../../bench/anchor/build-anchor.mjs';
import { createFaerProvider } from '../dist/index.js';

const rounds = Number(process.argv[2] ?? 4);
const sizes = (process.argv[3] ?? '192,256,512,1024').split(',').map(Number);
const threads = Number(process.argv[4] ?? 2);
const settings = (process.argv[5] ?? 'split,seq,default').split(',');
const minWork = (s) => (s === 'split' ? 0 : s === 'seq' ? Infinity : s === 'default' ? undefined : Number(s));

const bin = buildAnchor();
const backends = new Map();
for (const s of settings) {
  const w = minWork(s);
  backends.set(s, await CpuBackend.create({ kind: 'faer', threads, providers: [createFaerProvider(w === undefined ? {} : { parallelMinWork: w })] }));
}
const gf = (n, s) => (2 * n ** 3) / s / 1e9;
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const reps = (n) => Math.max(5, Math.min(60, Math.round(0.3e9 / (2 * n ** 3))));

async function into(backend, a, b, out, n) {
  const call = () => backend.dotGeneralInto(out, a, b, { contracting: [[1], [0]] });
  for (const until = performance.now() + 150; performance.now() < until; ) await call();
  const secs = [];
  for (let r = 0; r < reps(n); r++) {
    const t0 = process.hrtime.bigint();
    await call();
    secs.push(Number(process.hrtime.bigint() - t0) * 1e-9);
  }
  return secs;
}

const res = {};
let anchorIdentity = '';
try {
  for (let round = 0; round < rounds; round++) {
    for (const dtype of ['f32', 'f64']) {
      for (const n of sizes) {
        const values = (seed) => Array.from({ length: n * n }, (_, i) => (((i * 2654435761 + seed) >>> 0) % 16 - 8) / 4);
        const a = Tensor.fromArray(dtype, [n, n], values(1));
        const b = Tensor.fromArray(dtype, [n, n], values(7));
        const out = Tensor.fromArray(dtype, [n, n], new Array(n * n).fill(0));
        const r = (res[`${dtype} n=${n}`] ??= { n, anchor: [], anchorMedian: [], secs: {} });
        const anc = JSON.parse(execFileSync(bin, [dtype === 'f64' ? 'd' : 's', String(n), String(threads), String(reps(n))], { encoding: 'utf8' }));
        anchorIdentity = `${anc.config} (core ${anc.core})`;
        r.anchor.push(anc.gflopsBest);
        r.anchorMedian.push(anc.gflopsMedian);
        for (const s of settings) (r.secs[s] ??= []).push(...(await into(backends.get(s), a, b, out, n)));
      }
    }
  }
} finally {
  for (const b of backends.values()) await b.close();
}

console.log(`${anchorIdentity}; OPENBLAS_CORETYPE=${process.env.OPENBLAS_CORETYPE ?? '(unset)'}; threads=${threads}, rounds=${rounds}`);
console.log('into GFLOP/s best / best÷anchor best (median÷anchor median)');
for (const [key, r] of Object.entries(res)) {
  const best = Math.max(...r.anchor);
  const med = median(r.anchorMedian);
  const cells = settings.map((s) => `${s} ${gf(r.n, Math.min(...r.secs[s])).toFixed(0)}/${(gf(r.n, Math.min(...r.secs[s])) / best).toFixed(2)} (${(gf(r.n, median(r.secs[s])) / med).toFixed(2)})`);
  console.log(`${key.padEnd(10)} anchor ${best.toFixed(1).padStart(6)}  ${cells.join('  ')}`);
}
