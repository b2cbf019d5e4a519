/**
 * The built-in kernels (Eigen 3.4, native) as a `CpuLinalgKernels`: each call packs the request
 * into kernel arguments and runs it on the context's worker, or — in Inner mode with a pool and
 * more than one batch — splits the batches into one contiguous range per pool lane.
 */
import { type CpuExecutionContext, type CpuProviderOutcome, EXECUTED, type KernelArgs, defineKernel, kernelArgs } from '@tenferro/core';
import type { CpuLinalgKernels, LinalgRequest } from './contract/index.js';
import { DTYPE_CODE, FLAG, OP_CODE, W } from './native/binding.js';

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

async function runBuiltin(ctx: CpuExecutionContext, r: LinalgRequest): Promise<CpuProviderOutcome> {
  const count = batchCount(r);
  if (count === 0) return EXECUTED;
  const pool = ctx.workerPool();
  if (pool === undefined || pool.size <= 1 || count === 1) {
    await ctx.run(kernel, packLinalgTask(r, 0, count, ctx.abortWord));
    return EXECUTED;
  }
  const lanes = Math.min(pool.size, count);
  const step = Math.ceil(count / lanes);
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
