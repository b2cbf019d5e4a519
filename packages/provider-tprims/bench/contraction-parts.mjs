#!/usr/bin/env node
// The parts of bench/contraction.mjs's case, each timed alone (best/median ms of 30 after warm-up),
// on the faer (or --kind blas) backend with provider-tprims, to see where the time goes:
//   dotGeneral         the whole C[i,l] = Σ A[i,j,k]·B[k,j,l] (row-major A, B; contracting [[1,2],[1,0]])
//   permute B          copyInto of B into the layout the one-operand canonical path gives it (k, j, l strides 1, d, d²)
//   GEMM               dotGeneralInto(C, A, B') with B' already in that layout: the direct plan, k = d²
//   tiny add           ops.add of one element: the per-call cost of an operation on the engine
//
//   node bench/contraction-parts.mjs [--d 64] [--threads 1] [--kind faer|blas]
import { CpuBackend, ops, Tensor } from '@tenferro/core';
import { createBlasProvider } from '../../provider-blas/dist/index.js';
import { createFaerProvider } from '../../provider-faer/dist/index.js';
import { createTprimsProvider } from '../dist/index.js';

const argv = process.argv.slice(2);
const arg = (name, fallback) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : fallback);
const d = Number(arg('d', '64'));
const threads = Number(arg('threads', '1'));
const kind = arg('kind', 'faer');
const count = d ** 3;
const rowMajor = (f) => Tensor.from(Float64Array.from({ length: count }, (_, i) => f(i)), [d, d, d]).permute([2, 1, 0]);
const A = rowMajor((i) => Math.sin(i * 0.001) * 2);
const B = rowMajor((i) => Math.cos(i * 0.0007));
const backend = await CpuBackend.create({ kind, threads, providers: [kind === 'blas' ? createBlasProvider() : createFaerProvider(), createTprimsProvider()] });
const t = ops(backend);
const C = Tensor.zeros('f64', [d, d]);
const Bp = Tensor.zeros('f64', [d, d, d]); // column-major: strides 1, d, d²
const one = [Tensor.zeros('f64', [1]), Tensor.zeros('f64', [1]), Tensor.zeros('f64', [1])];
const dims = { contracting: [[1, 2], [1, 0]] };

async function time(name, f, n = 30) {
  await f();
  await f();
  const ts = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await f();
    ts.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ts.sort((x, y) => x - y);
  console.log(`${kind} ${threads}T d=${d}  ${name.padEnd(12)} best ${ts[0].toFixed(3)} ms  median ${ts[n >> 1].toFixed(3)} ms`);
}
try {
  await time('dotGeneral', async () => (await backend.dotGeneral(A, B, dims)).dispose());
  await time('permute B', () => t.copyInto(Bp, B));
  await time('GEMM', () => backend.dotGeneralInto(C, A, Bp, dims));
  await time('tiny add', () => t.add(one[0], one[1], { out: one[2] }));
} finally {
  await backend.close();
}
