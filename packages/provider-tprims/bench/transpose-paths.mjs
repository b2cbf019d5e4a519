#!/usr/bin/env node
// The transposing copy of a 4096² f64 (copyInto(out, t.transpose()), warm output) on the avx2 path
// against the portable path (scalar blocks, 8-byte non-temporal stores) and TypedArray.set of the
// same bytes, interleaved in one process: the A/B behind the AVX2 register blocks (README).
//   node bench/transpose-paths.mjs [threads=1]
import { CpuBackend, Tensor, ops } from '@tenferro/core';
import { createTprimsProvider } from '../dist/index.js';
const N = 4096, T = Number(process.argv[2] ?? 1);
const big = Tensor.from(new Float64Array(new SharedArrayBuffer(N * N * 8)).fill(1.5), [N, N]);
const out = Tensor.from(new Float64Array(new SharedArrayBuffer(N * N * 8)), [N, N]);
const src = new Float64Array(new SharedArrayBuffer(N * N * 8)).fill(2), dst = new Float64Array(new SharedArrayBuffer(N * N * 8));
const bs = { avx2: await CpuBackend.create({ kind: 'faer', threads: T, providers: [createTprimsProvider({ isa: 'avx2' })] }), portable: await CpuBackend.create({ kind: 'faer', threads: T, providers: [createTprimsProvider({ isa: 'portable' })] }) };
const res = { avx2: [], portable: [], set: [] };
for (let r = 0; r < 14; r++) {
  for (const k of ['avx2', 'portable']) { const t = ops(bs[k]); const t0 = performance.now(); await t.copyInto(out, big.transpose()); res[k].push(performance.now() - t0); }
  const t0 = performance.now(); dst.set(src); res.set.push(performance.now() - t0);
}
for (const k of Object.keys(res)) { const xs = res[k].slice(2).sort((a, b) => a - b); console.log(`${T}T ${k} min ${xs[0].toFixed(1)} med ${xs[xs.length >> 1].toFixed(1)} ms`); }
for (const b of Object.values(bs)) await b.close();
