#!/usr/bin/env node
// The native GEMM alone (this thread, no worker) on C[i,l] = Σ A[i,j,k]·B[k,j,l], row-major A, B:
//   summed               k = d fused, j summed (CpuGemmRequest.summed): A and B as they are
//   k=d², B col-major    B already copied column-major (the canonical layout), one GEMM
//   k=d², B row-major    B already copied row-major in (j,k) order (dot-general's kept-lhs copy), one GEMM
// Then thin items (k = 4, 256 of them) gathered into one K, against the GEMM on a copied B.
// Interleaved rounds; best, p10 and median ms.   node bench/summed.mjs [d=64]
import { loadFaer } from '../dist/native/load.js';
import { describeTask } from '../dist/kernels/gemm.js';
const st = loadFaer(); const bind = st.binding;
const d = Number(process.argv[2] ?? 64);
const A = new Float64Array(new SharedArrayBuffer(8 * d ** 3)).map((_, i) => Math.sin(i * 0.001));
const B = new Float64Array(new SharedArrayBuffer(8 * d ** 3)).map((_, i) => Math.cos(i * 0.0007));
const Bp = new Float64Array(new SharedArrayBuffer(8 * d ** 3)).map((_, i) => Math.cos(i * 0.0007));
const C = new Float64Array(new SharedArrayBuffer(8 * d * d));
const op = (buffer, rs, cs) => ({ buffer, offset: 0, rowStride: rs, colStride: cs, batchStrides: [] });
const base = { dtype: 'f64', m: d, n: d, batch: [], alpha: 1, beta: 0, conjLhs: false, conjRhs: false, out: op(C.buffer, 1, d) };
const task = (request) => ({ request, isa: -1, m0: 0, m1: d, n0: 0, n1: d, b0: 0, b1: 1 });
// A[i,j,k] row-major: i stride d², j stride d, k stride 1.  B[k,j,l]: k d², j d, l 1.
const summed = describeTask(task({ ...base, k: d, lhs: op(A.buffer, d * d, 1), rhs: op(B.buffer, d * d, 1), summed: { extents: [d], lhsStrides: [d], rhsStrides: [d] } }));
const plain = describeTask(task({ ...base, k: d * d, lhs: op(A.buffer, d * d, 1), rhs: op(Bp.buffer, 1, d * d) }));
const plainRow = describeTask(task({ ...base, k: d * d, lhs: op(A.buffer, d * d, 1), rhs: op(Bp.buffer, d, 1) }));
const cases = { summed: () => bind.gemm(summed, A, B, C), 'k=d², B col-major': () => bind.gemm(plain, A, Bp, C), 'k=d², B row-major': () => bind.gemm(plainRow, A, Bp, C) };
const t = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let r = 0; r < 40; r++) for (const [k, f] of Object.entries(cases)) for (let i = 0; i < 5; i++) { const t0 = process.hrtime.bigint(); if (f() !== 0) throw new Error('status'); t[k].push(Number(process.hrtime.bigint() - t0) / 1e6); }
for (const [k, v] of Object.entries(t)) { v.sort((a, b) => a - b); console.log(`d=${d} ${k.padEnd(26)} best ${v[0].toFixed(3)} p10 ${v[v.length / 10 | 0].toFixed(3)} med ${v[v.length >> 1].toFixed(3)} ms  ${(2 * d ** 4 / v[0] / 1e6).toFixed(1)} GF/s`); }

// Thin items: A[i,j,k] (64 × 256 × 4) and B[k,j,l] (4 × 256 × 64) row-major, k = 4 fused and 256
// items of j summed — the native task gathers them into one K of 1,024 steps (gemm.cc
// run_gather_task) — against one GEMM on B already copied to a column-major (j,k) × l operand.
const [tm, tj, tk, tn] = [64, 256, 4, 64];
const TA = new Float64Array(new SharedArrayBuffer(8 * tm * tj * tk)).map((_, i) => Math.sin(i * 0.001));
const TB = new Float64Array(new SharedArrayBuffer(8 * tk * tj * tn)).map((_, i) => Math.cos(i * 0.0007));
const TBc = new Float64Array(new SharedArrayBuffer(8 * tk * tj * tn));
for (let k = 0; k < tk; k++) for (let j = 0; j < tj; j++) for (let l = 0; l < tn; l++) TBc[l * tj * tk + j * tk + k] = TB[k * tj * tn + j * tn + l];
const TC = new Float64Array(new SharedArrayBuffer(8 * tm * tn));
const thin = { ...base, m: tm, n: tn, out: op(TC.buffer, 1, tm) };
const thinTask = (request) => ({ request, isa: -1, m0: 0, m1: tm, n0: 0, n1: tn, b0: 0, b1: 1 });
const thinSummed = describeTask(thinTask({ ...thin, k: tk, lhs: op(TA.buffer, tj * tk, 1), rhs: op(TB.buffer, tj * tn, 1), summed: { extents: [tj], lhsStrides: [tk], rhsStrides: [tn] } }));
const thinCopied = describeTask(thinTask({ ...thin, k: tj * tk, lhs: op(TA.buffer, tj * tk, 1), rhs: op(TBc.buffer, 1, tj * tk) }));
const thinCases = { 'thin summed (gathered)': () => bind.gemm(thinSummed, TA, TB, TC), 'thin, B copied': () => bind.gemm(thinCopied, TA, TBc, TC) };
const tt = Object.fromEntries(Object.keys(thinCases).map((k) => [k, []]));
for (let r = 0; r < 40; r++) for (const [k, f] of Object.entries(thinCases)) for (let i = 0; i < 5; i++) { const t0 = process.hrtime.bigint(); if (f() !== 0) throw new Error('status'); tt[k].push(Number(process.hrtime.bigint() - t0) / 1e6); }
for (const [k, v] of Object.entries(tt)) { v.sort((a, b) => a - b); console.log(`${tm}×${tj}×${tk}·${tk}×${tj}×${tn} ${k.padEnd(24)} best ${v[0].toFixed(3)} p10 ${v[v.length / 10 | 0].toFixed(3)} med ${v[v.length >> 1].toFixed(3)} ms`); }
