/**
 * The built-in kernels (Eigen 3.4, native) as a `CpuLinalgKernels`: each call packs the request
 * into kernel arguments and runs it on the context's worker, or — in Inner mode with a pool —
 * splits the batches into one contiguous range per pool lane; one large square LU or Cholesky
 * (order ≥ {@link PARALLEL_MIN_ORDER}) runs as a blocked right-looking factorisation whose steps
 * are split over the lanes (see {@link runBlocked}).
 */
import { type CpuExecutionContext, type CpuProviderOutcome, EXECUTED, type KernelArgs, type WorkerPool, defineKernel, kernelArgs } from '@tenferro/core';
import type { CpuLinalgKernels, LinalgRequest } from './contract/index.js';
import { DTYPE_CODE, FLAG, OP_CODE, STEP, STEP_OP, W } from './native/binding.js';

const kernel = defineKernel<KernelArgs, void>(new URL('./kernels/linalg.js', import.meta.url), 'linalgKernel');

/** The packed task of batches [b0, b1) of `r`. */
export function packLinalgTask(r: LinalgRequest, b0: number, b1: number, abort?: Int32Array): KernelArgs {
  const nb = r.batch.length;
  const w = new Float64Array(W.HEADER + 3 * nb);
  const f = r.flags;
  w[W.op] = OP_CODE[r.op];
  w[W.dtype] = DTYPE_CODE[r.dtype];
  w[W.m] = r.m;
  w[W.n] = r.n;
  w[W.k] = 0;
  w[W.flags] = (f.upper ? FLAG.upper : 0) | (f.left ? FLAG.left : 0) | (f.unitDiagonal ? FLAG.unit : 0) | (f.full ? FLAG.full : 0) | (f.vectors ? FLAG.vectors : 0) | (f.rOnly ? FLAG.rOnly : 0);
  w[W.b0] = b0;
  w[W.b1] = b1;
  w[W.nb] = nb;
  w[W.abortAt] = abort === undefined ? -1 : abort.byteOffset;
  const b = r.b ?? r.a;
  w[W.offA] = r.a.offset;
  w[W.rsA] = r.a.rowStride;
  w[W.csA] = r.a.colStride;
  w[W.offB] = b.offset;
  w[W.rsB] = b.rowStride;
  w[W.csB] = b.colStride;
  for (let t = 0; t < nb; t++) {
    w[W.HEADER + t] = r.batch[t]!;
    w[W.HEADER + nb + t] = r.a.batchStrides[t]!;
    w[W.HEADER + 2 * nb + t] = b.batchStrides[t]!;
  }
  const any = r.a.buffer;
  const buffers = [r.a.buffer, b.buffer, r.out[0] ?? any, r.out[1] ?? any, r.out[2] ?? any, r.info.buffer as SharedArrayBuffer];
  if (abort !== undefined) buffers.push(abort.buffer as SharedArrayBuffer);
  return kernelArgs(w, buffers);
}

function batchCount(r: LinalgRequest): number {
  return r.batch.reduce((p, e) => p * e, 1);
}

/** From this order up, one square luFactor or cholesky with a pool of two or more lanes runs blocked over the lanes. */
export const PARALLEL_MIN_ORDER = 512;
/** The panel width of the blocked factorisations. */
export const PARALLEL_BLOCK = 128;
/** A trailing matrix of at most this order is updated and factored by lane 0 alone, in one task (a split would cost more in synchronisation than it saves). */
export const PARALLEL_TAIL = 256;
/** What factoring a panel of w columns weighs, in columns of trailing update (lane 0 does it besides its share). */
const FACTOR_WEIGHT = 1;

/** The packed step task (native/src/linalg.h) on columns [c0, c1) of `r`'s one matrix, with the panel at j0. */
export function packStepTask(r: LinalgRequest, nb: number, c0: number, c1: number, j0: number, bits: number, abort?: Int32Array): KernelArgs {
  const w = new Float64Array(W.HEADER);
  w[W.op] = r.op === 'luFactor' ? STEP_OP.luFactor : STEP_OP.cholesky;
  w[W.dtype] = DTYPE_CODE[r.dtype];
  w[W.m] = r.m;
  w[W.n] = r.m;
  w[W.k] = nb;
  w[W.flags] = r.flags.upper ? FLAG.upper : 0;
  w[W.b0] = c0;
  w[W.b1] = c1;
  w[W.nb] = 0;
  w[W.abortAt] = abort === undefined ? -1 : abort.byteOffset;
  w[W.offA] = r.a.offset;
  w[W.rsA] = r.a.rowStride;
  w[W.csA] = r.a.colStride;
  w[W.offB] = j0;
  w[W.rsB] = bits;
  w[W.csB] = 0;
  const any = r.a.buffer;
  const buffers = [r.a.buffer, r.a.buffer, r.out[0] ?? any, r.out[1] ?? any, any, r.info.buffer as SharedArrayBuffer];
  if (abort !== undefined) buffers.push(abort.buffer as SharedArrayBuffer);
  return kernelArgs(w, buffers);
}

/**
 * Column bounds lo = b[0] ≤ b[1] ≤ … ≤ b[lanes] = hi giving each lane about the same work: column c
 * weighs weight(c), lane 0 carries `extra` besides its columns and takes at least [lo, min0).
 */
function split(lo: number, hi: number, lanes: number, weight: (c: number) => number, extra: number, min0: number): number[] {
  let total = extra;
  for (let c = lo; c < hi; c++) total += weight(c);
  const bounds = [lo];
  let acc = extra, c = lo;
  for (let l = 1; l < lanes; l++) {
    const target = (total * l) / lanes;
    while (c < hi && acc + weight(c) <= target) acc += weight(c++);
    if (l === 1) while (c < min0) acc += weight(c++);
    bounds.push(c);
  }
  bounds.push(hi);
  return bounds;
}

/**
 * One square n×n LU (partial pivoting) or Cholesky in place in its output, blocked and
 * right-looking (LAPACK getrf/potrf's order), every step split over the pool's lanes by column:
 * first each lane gathers its columns and lane 0 factors panel 0; then, for each panel p, each lane
 * applies panel p to its columns of the trailing matrix (LU: swaps, triangular solve, GEMM;
 * Cholesky: the lower part of A22 −= L21 L21ᴴ) and lane 0, whose columns begin with panel p + 1,
 * factors that panel next — one `pool.map` per panel — until the trailing matrix is of order
 * ≤ {@link PARALLEL_TAIL}: lane 0 then applies the last panel to it and factors it whole, in one
 * task; last, the lanes finish their columns (LU: the swaps of the panels right of them; Cholesky
 * with `upper`: U = Lᴴ — its gather zeroed the upper triangle, which nothing writes). The panels are
 * factored with the same kernels as the sequential path (the recursive getrf, Eigen's blocked
 * LLT), so pivots and info follow the same convention. A Cholesky that meets a non-positive minor
 * stops after that step (its info is set; the caller disposes the output unread).
 */
async function runBlocked(ctx: CpuExecutionContext, pool: WorkerPool, lanes: number, r: LinalgRequest): Promise<void> {
  const n = r.m, nb = PARALLEL_BLOCK, lu = r.op === 'luFactor';
  const abort = ctx.abortWord;
  const step = async (bounds: number[], j0: number, bits: number, bits0: number): Promise<void> => {
    const tasks: KernelArgs[] = [];
    for (let l = 0; l < lanes; l++) {
      const c0 = bounds[l]!, c1 = bounds[l + 1]!, b = bits | (l === 0 ? bits0 : 0);
      if (c1 > c0) tasks.push(packStepTask(r, nb, c0, c1, j0, b, abort));
    }
    await pool.map(kernel, tasks);
  };
  const failed = (): boolean => !lu && r.info[0] !== 0;
  const uniform = (): number => 1;
  // LU: every trailing column costs the same; Cholesky: column c's update has n − c rows.
  const weight = lu ? uniform : (c: number) => n - c;
  const w0 = Math.min(nb, n);
  await step(split(0, n, lanes, uniform, FACTOR_WEIGHT * w0, w0), 0, STEP.gather, STEP.factor);
  // The first column the rest step factors (n: none).
  let rest = n;
  for (let j0 = 0; j0 + nb < n && !failed(); j0 += nb) {
    const c = j0 + nb, w = Math.min(nb, n - c);
    if (n - c <= PARALLEL_TAIL) {
      // Lane 0 alone: the last update and the whole trailing matrix.
      await step([c, n, ...Array<number>(lanes - 1).fill(n)], j0, STEP.update, STEP.rest);
      rest = c;
      break;
    }
    await step(split(c, n, lanes, weight, FACTOR_WEIGHT * w * weight(c), c + w), j0, STEP.update, STEP.factor);
  }
  if (failed()) return;
  // LU: column c below `rest` takes the swaps of the panels right of its own (the last panel's columns none).
  const swaps = (c: number): number => (c >= rest ? 0 : n - Math.min(n, (Math.floor(c / nb) + 1) * nb));
  if (lu) await step(split(0, rest, lanes, swaps, 0, 0), rest, STEP.finish, 0);
  // Cholesky: the gather zeroed the strict upper triangle and nothing wrote it; U = Lᴴ needs a pass.
  else if (r.flags.upper) await step(split(0, n, lanes, uniform, 0, 0), 0, STEP.finish, 0);
}

async function runBuiltin(ctx: CpuExecutionContext, r: LinalgRequest): Promise<CpuProviderOutcome> {
  const count = batchCount(r);
  if (count === 0) return EXECUTED;
  const pool = ctx.workerPool();
  const lanes = pool === undefined ? 1 : Math.min(pool.size, Math.max(1, ctx.threadBudget));
  if (pool !== undefined && lanes > 1 && count === 1 && (r.op === 'luFactor' || r.op === 'cholesky') && r.m === r.n && r.m >= PARALLEL_MIN_ORDER) {
    await runBlocked(ctx, pool, lanes, r);
    return EXECUTED;
  }
  if (pool === undefined || pool.size <= 1 || count === 1) {
    await ctx.run(kernel, packLinalgTask(r, 0, count, ctx.abortWord));
    return EXECUTED;
  }
  const parts = Math.min(pool.size, count);
  const step = Math.ceil(count / parts);
  const tasks: KernelArgs[] = [];
  for (let b0 = 0; b0 < count; b0 += step) tasks.push(packLinalgTask(r, b0, Math.min(count, b0 + step), ctx.abortWord));
  await pool.map(kernel, tasks);
  return EXECUTED;
}

/** The built-in kernels: every primitive, every dtype (f32, f64, c64, c128). */
export const BUILTIN_KERNELS: CpuLinalgKernels = Object.freeze({
  name: 'tenferro built-in (Eigen)',
  // Every op writes every element of its outputs (failed batches: zeros, or an error that disposes them); never declines.
  overwritesOutputs: true,
  declinesBeforeWriting: true,
  cholesky: runBuiltin,
  solveTriangular: runBuiltin,
  luFactor: runBuiltin,
  lu: runBuiltin,
  solve: runBuiltin,
  qr: runBuiltin,
  svd: runBuiltin,
  eigh: runBuiltin,
  eig: runBuiltin,
  luFullPivot: runBuiltin,
});
