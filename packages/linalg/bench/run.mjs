#!/usr/bin/env node
// `pnpm bench` (linalg): luFactor, cholesky, qr, eigh and svd of an n×n f64 matrix, built-in
// Eigen kernels (faer backend) against LAPACK through provider-blas (blas backend), 1 and 2
// threads, in one run; plus a batch of 10,000 8×8 LU solves. Median of repeated calls.
//   node bench/run.mjs [--sizes 64,256,1024] [--threads 1,2] [--reps 5]
import { CpuBackend, Tensor } from '@tenferro/core';
import { createBlasProvider, status as blasStatus } from '@tenferro/provider-blas';
import { linalg } from '../dist/index.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
const sizes = arg('sizes', '64,256,1024').split(',').map(Number);
const threadsList = arg('threads', '1,2').split(',').map(Number);
const reps = Number(arg('reps', '5'));

function spd(n) {
  const d = new Float64Array(n * n);
  for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) d[i + j * n] = (i === j ? n : 0) + 1 / (1 + Math.abs(i - j)) + 0.01 * Math.sin(i * 7 + j * 13);
  for (let j = 0; j < n; j++) for (let i = 0; i < j; i++) d[i + j * n] = d[j + i * n];
  return Tensor.from(d, [n, n]);
}

async function time(fn) {
  await fn();
  const t = [];
  for (let r = 0; r < reps; r++) {
    const s = process.hrtime.bigint();
    const out = await fn();
    t.push(Number(process.hrtime.bigint() - s) / 1e6);
    for (const x of Object.values(out ?? {})) x?.dispose?.();
    out?.dispose?.();
  }
  return t.sort((a, b) => a - b)[Math.floor(t.length / 2)];
}

const OPS = {
  luFactor: (la, a) => la.luFactor(a),
  cholesky: (la, a) => la.cholesky(a),
  qr: (la, a) => la.qr(a),
  eigh: (la, a) => la.eigh(a),
  svd: (la, a) => la.svd(a),
};
const rows = [];
for (const threads of threadsList) {
  const backends = [['builtin', await CpuBackend.create({ threads, providers: [] })]];
  if (blasStatus().available) backends.push(['blas', await CpuBackend.create({ kind: 'blas', threads, providers: [createBlasProvider()] })]);
  for (const n of sizes) {
    const a = spd(n);
    for (const [op, fn] of Object.entries(OPS)) {
      const row = { op, n, threads };
      for (const [name, b] of backends) {
        const la = linalg(b);
        row[name] = await time(() => fn(la, a));
        row[`${name}Kernel`] = la.takeCallRecords().at(-1)?.kernel;
      }
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  // 10,000 × 8×8 f64 solves in one call (per-matrix cost).
  const count = 10_000, m = 8;
  const data = new Float64Array(m * m * count);
  for (let b = 0; b < count; b++) for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) data[b * m * m + i + j * m] = (i === j ? 9 : 0) + Math.sin(b + i * 3 + j);
  const A = Tensor.from(data, [m, m, count]);
  const B = Tensor.from(new Float64Array(m * count).fill(1), [m, 1, count]);
  for (const [name, b] of backends) {
    const la = linalg(b);
    const ms = await time(() => la.solve(A, B));
    console.log(JSON.stringify({ op: 'batched solve 10000×8×8', threads, backend: name, kernel: la.takeCallRecords().at(-1)?.kernel, ms, nsPerMatrix: (ms * 1e6) / count }));
  }
  for (const [, b] of backends) await b.close();
}
