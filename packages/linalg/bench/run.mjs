#!/usr/bin/env node
// `pnpm bench` (linalg): luFactor, cholesky, qr, eigh and svd of an n×n f64 matrix — the built-in
// Eigen kernels (faer backend), LAPACK through provider-blas (blas backend), and the same LAPACK
// routines called from C++ (bench/anchor/lapack-anchor.cc, a child process on the same library and
// core) — at 1 and 2 threads, in one run; plus a batch of 10,000 8×8 solves against a C loop over
// dgesv_. Median of repeated calls (one warm-up call first, except for the built-in at n ≥ 2048;
// la LAPACK always warms up, as the anchor does: its first rep is never timed — a cold first la
// call at n = 2048 paid first-touch of fresh outputs, ~15 µs a 4 KiB page on this VM, where the
// anchor's timed reps reuse warm buffers). The anchor is spawned by a helper process started
// before anything large is allocated (bench/anchor/anchor-runner.mjs), never by this process:
// a fork here write-protected every warm page, and la paid a fault per page afterwards.
//   node bench/run.mjs [--sizes 64,256,1024,2048] [--threads 1,2] [--reps 5] [--ops luFactor,qr] [--rounds 1] [--coretype X]
// `--rounds R` times la LAPACK and C LAPACK R times each, alternating (la, C, la, C, …), and reports
// the medians and the median of the per-round C/la ratios: on a busy machine a pair measured back
// to back sees the same load, where one la median and one C median taken minutes apart need not.
// OPENBLAS_CORETYPE: `--coretype X` when given, else SkylakeX on an AVX-512 CPU (as the core
// hot-path bench: OpenBLAS 0.3.21 picks slower kernels on these VMs), else the environment's; the
// anchor inherits the same value, and the table prints both sides' core.
import { readFileSync } from 'node:fs';
import { startAnchorRunner } from './anchor/anchor-runner.mjs';
import { buildLapackAnchor } from './anchor/build-anchor.mjs';
import { arg } from './bench-args.mjs';

if (process.argv.includes('--help')) {
  console.log('node bench/run.mjs [--sizes 64,256,1024,2048] [--threads 1,2] [--reps 5] [--ops luFactor,cholesky,qr,eigh,svd] [--rounds 1] [--coretype X]');
  process.exit(0);
}
const avx512 = /\bavx512f\b/.test(readFileSync('/proc/cpuinfo', 'utf8'));
if (arg('coretype')) process.env.OPENBLAS_CORETYPE = arg('coretype');
else if (avx512) process.env.OPENBLAS_CORETYPE = 'SkylakeX';

const { CpuBackend, Tensor } = await import('@tenferro/core');
const { createBlasProvider, status: blasStatus } = await import('@tenferro/provider-blas');
const { linalg, status: linalgStatus } = await import('../dist/index.js');
// Which kernel ran: tenferro:provider (#35; takeCallRecords is gone).
const { recordLinalgKernels } = await import('../dist/testing/index.js');
const lastKernel = async (fn) => (await recordLinalgKernels(fn)).calls.at(-1)?.kernel;

const sizes = arg('sizes', '64,256,1024,2048').split(',').map(Number);
const threadsList = arg('threads', '1,2').split(',').map(Number);
const baseReps = Number(arg('reps', '5'));
const rounds = Math.max(1, Number(arg('rounds', '1')));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const repsFor = (n) => (n >= 2048 ? 1 : n >= 1024 ? Math.min(baseReps, 3) : baseReps);

function spd(n) {
  const d = new Float64Array(n * n);
  for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) d[i + j * n] = (i === j ? n : 0) + 1 / (1 + Math.abs(i - j)) + 0.01 * Math.sin(Math.min(i, j) * 7 + Math.max(i, j) * 13);
  return Tensor.from(d, [n, n]);
}

async function time(fn, reps, warm = true) {
  if (warm) dispose(await fn());
  const t = [];
  for (let r = 0; r < reps; r++) {
    const s = process.hrtime.bigint();
    const out = await fn();
    t.push(Number(process.hrtime.bigint() - s) / 1e6);
    dispose(out);
  }
  return t.sort((a, b) => a - b)[Math.floor(t.length / 2)];
}
function dispose(out) {
  for (const x of Object.values(out ?? {})) x?.dispose?.();
  out?.dispose?.();
}

let anchor;
try {
  anchor = buildLapackAnchor();
} catch (e) {
  console.error(`no C LAPACK anchor: ${e.message}`);
}
// Started now, while this process is small: the anchor is spawned from that helper, so this
// process never forks again (bench/anchor/anchor-runner.mjs: a fork makes every warm page here
// fault on its next write).
const anchorRunner = anchor === undefined ? undefined : startAnchorRunner(anchor);
let anchorCore = '';
async function anchorMs(op, n, threads, reps, batch = 1) {
  if (anchorRunner === undefined) return undefined;
  const out = await anchorRunner.run([op, String(n), String(threads), String(Math.max(reps, 1)), String(batch)]);
  anchorCore = out.core;
  return out.median * 1e3;
}

const OPS = {
  luFactor: [(la, a) => la.luFactor(a), 'getrf'],
  cholesky: [(la, a) => la.cholesky(a), 'potrf'],
  qr: [(la, a) => la.qr(a), 'qr'],
  eigh: [(la, a) => la.eigh(a), 'syevd'],
  svd: [(la, a) => la.svd(a), 'gesdd'],
};
const only = arg('ops');
const ops = Object.entries(OPS).filter(([k]) => only === undefined || only.split(',').includes(k));
const rows = [];
const r2 = (x) => (x === undefined ? '-' : x.toFixed(2));
const ms = (x) => (x === undefined ? '-' : x < 10 ? x.toFixed(3) : x.toFixed(1));
for (const threads of threadsList) {
  const builtin = await CpuBackend.create({ threads, providers: [] });
  const blas = blasStatus().available ? await CpuBackend.create({ kind: 'blas', threads, providers: [createBlasProvider()] }) : undefined;
  for (const n of sizes) {
    const a = spd(n);
    const reps = repsFor(n);
    for (const [op, [fn, routine]] of ops) {
      const row = { op, n, threads };
      const lf = linalg(builtin);
      row.builtinMs = await time(() => fn(lf, a), reps, n < 2048);
      if (blas !== undefined) {
        const lb = linalg(blas);
        const laTimes = [], cTimes = [], ratios = [];
        for (let round = 0; round < rounds; round++) {
          const t = await time(() => fn(lb, a), reps, true);
          const c = await anchorMs(routine, n, threads, reps);
          laTimes.push(t);
          if (c !== undefined) { cTimes.push(c); ratios.push(c / t); }
        }
        row.blasMs = median(laTimes);
        row.blasKernel = await lastKernel(() => fn(lb, a));
        row.cMs = cTimes.length > 0 ? median(cTimes) : undefined;
        // ≥ 0.95: la.* costs ≤ 5% over C (the median of the rounds' ratios)
        row.overhead = ratios.length > 0 ? median(ratios) : undefined;
        row.builtinVsLapack = row.blasMs / row.builtinMs; // > 1: the built-in is faster
      }
      rows.push(row);
      console.log(JSON.stringify(row));
    }
    a.dispose();
  }
  // 10,000 × 8×8 f64 solves (one right-hand side) in one call, against a C loop over dgesv_.
  const count = 10_000, m = 8;
  const data = new Float64Array(m * m * count);
  for (let b = 0; b < count; b++) for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) data[b * m * m + i + j * m] = (i === j ? 9 : 0) + Math.sin(b + i * 3 + j);
  const A = Tensor.from(data, [m, m, count]);
  const B = Tensor.from(new Float64Array(m * count).fill(1), [m, 1, count]);
  for (const [name, backend] of [['builtin', builtin], ['blas', blas]]) {
    if (backend === undefined) continue;
    const la = linalg(backend);
    const laTimes = [], cTimes = [], ratios = [];
    for (let round = 0; round < rounds; round++) {
      const t = await time(() => la.solve(A, B), 9);
      const c = await anchorMs('gesv', m, threads, 9, count);
      laTimes.push(t);
      if (c !== undefined) { cTimes.push(c); ratios.push(c / t); }
    }
    const t = median(laTimes), cMs = cTimes.length > 0 ? median(cTimes) : undefined;
    const kernel = await lastKernel(() => la.solve(A, B));
    const row = { op: 'batched solve 10000×8×8', n: m, threads, backend: name, kernel, ms: t, nsPerMatrix: (t * 1e6) / count, cMs, cNsPerMatrix: cMs === undefined ? undefined : (cMs * 1e6) / count, vsC: ratios.length > 0 ? median(ratios) : undefined };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  A.dispose();
  B.dispose();
  await builtin.close();
  await blas?.close();
}

anchorRunner?.close();
const builtinStatus = linalgStatus();
console.log(`\n@tenferro/linalg bench — f64; built-in: ${builtinStatus.available ? builtinStatus.name : 'unavailable'}; OPENBLAS_CORETYPE=${process.env.OPENBLAS_CORETYPE ?? '(unset)'}; C anchor core ${anchorCore || '-'}`);
console.log('ratios: C/la (LAPACK through la.* vs the same routine from C; goal ≥ 0.95), LAPACK/built-in (> 1: built-in faster; goals LU, Cholesky ≥ 0.6, QR ≥ 0.5, eigh/SVD ≥ 0.4 at 1024)');
console.log('op        n     thr  built-in ms  la LAPACK ms   C LAPACK ms   C/la   LAPACK/built-in');
for (const r of rows.filter((x) => x.builtinMs !== undefined)) {
  console.log(`${r.op.padEnd(9)} ${String(r.n).padStart(5)} ${String(r.threads).padStart(4)} ${ms(r.builtinMs).padStart(12)} ${ms(r.blasMs).padStart(13)} ${ms(r.cMs).padStart(13)} ${r2(r.overhead).padStart(6)} ${r2(r.builtinVsLapack).padStart(17)}`);
}
// Goal: the built-in LU and Cholesky at 2 threads (blocked over the pool's lanes) ≥ 1.2× their own 1-thread speed.
for (const r2t of rows.filter((x) => x.threads === 2 && x.builtinMs !== undefined)) {
  const r1t = rows.find((x) => x.threads === 1 && x.op === r2t.op && x.n === r2t.n);
  if (r1t === undefined) continue;
  console.log(`${r2t.op} n=${r2t.n}: built-in 1 → 2 threads ${r2((r1t.builtinMs) / r2t.builtinMs)}× (goal ≥ 1.2 for luFactor, cholesky at 1024); C LAPACK ${r1t.cMs === undefined || r2t.cMs === undefined ? '-' : r2(r1t.cMs / r2t.cMs)}×; la LAPACK ${r1t.blasMs === undefined ? '-' : r2(r1t.blasMs / r2t.blasMs)}×`);
}
for (const r of rows.filter((x) => x.backend !== undefined)) {
  console.log(`batched 10000×8×8 solve, ${r.threads} thread(s), ${r.backend} (${r.kernel}): ${ms(r.ms)} ms = ${r.nsPerMatrix.toFixed(0)} ns/matrix; C dgesv_ loop ${ms(r.cMs)} ms = ${r.cNsPerMatrix?.toFixed(0) ?? '-'} ns/matrix; C/la ${r2(r.vsC)} (goal ≥ 0.8)`);
}
