#!/usr/bin/env node
// dot-general's summed plan against the copy it replaces, on C[i,l] = Σ A[i,j,k]·B[k,j,l]
// (row-major A, B; contracting [[1,2],[1,0]]) for several d: the same faer GEMM provider, once
// declaring summedAxes (k fused, j summed, no copy) and once not (B copied, then k = d²),
// dotGeneralInto a warm output, interleaved; best, first quartile and median ms.
// The weights of core's cost model (packages/core/src/contraction/summed-cost.ts) come from it.
//
//   node bench/summed-vs-copy.mjs [threads=1] [sizes=16,24,32,48,64,96]
import { CpuBackend, Tensor } from '@tenferro/core';
import { createFaerProvider } from '../../provider-faer/dist/index.js';
import { createTprimsProvider } from '../dist/index.js';
const threads = Number(process.argv[2] ?? 1);
const sizes = (process.argv[3] ?? '16,24,32,48,64,96').split(',').map(Number);
/** The faer provider, not declaring summedAxes: core then copies an operand. */
const noSum = () => { const p = createFaerProvider(); const g = p.gemm; return { ...p, gemm: { name: g.name + ' (no summed)', executionCapabilities: () => g.executionCapabilities(), declaredSupport: () => ({ ...g.declaredSupport(), summedAxes: false }), gemm: (c, r) => g.gemm(c, r), groupedGemm: g.groupedGemm } }; };
const sum = await CpuBackend.create({ kind: 'faer', threads, providers: [createFaerProvider(), createTprimsProvider()] });
const copy = await CpuBackend.create({ kind: 'faer', threads, providers: [noSum(), createTprimsProvider()] });
const dims = { contracting: [[1, 2], [1, 0]] };
for (const d of sizes) {
  const mk = (s) => Tensor.fromArray('f64', [d, d, d], Array.from({ length: d ** 3 }, (_, i) => Math.sin(i * s))).permute([2, 1, 0]);
  const A = mk(0.001), B = mk(0.0007);
  const C = Tensor.zeros('f64', [d, d]);
  const list = [['summed', () => sum.dotGeneralInto(C, A, B, dims)], ['copy', () => copy.dotGeneralInto(C, A, B, dims)]];
  const t = list.map(() => []);
  const reps = Math.max(5, Math.round(2000 / d ** 2));
  for (const [, f] of list) { await f(); await f(); }
  for (let r = 0; r < 15; r++) for (let k = 0; k < list.length; k++) for (let i = 0; i < reps; i++) { const t0 = process.hrtime.bigint(); await list[k][1](); t[k].push(Number(process.hrtime.bigint() - t0) / 1e6); }
  const s = t.map((v) => v.sort((a, b) => a - b)).map((v) => [v[0], v[v.length >> 2], v[v.length >> 1]]);
  console.log(`${threads}T d=${String(d).padStart(3)} summed best ${s[0][0].toFixed(3)} q1 ${s[0][1].toFixed(3)} med ${s[0][2].toFixed(3)} | copy best ${s[1][0].toFixed(3)} q1 ${s[1][1].toFixed(3)} med ${s[1][2].toFixed(3)} | copy/summed best ${(s[1][0] / s[0][0]).toFixed(2)} q1 ${(s[1][1] / s[0][1]).toFixed(2)}`);
}
await sum.close(); await copy.close();
