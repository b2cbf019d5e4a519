/**
 * The built-in kernels (Eigen 3.4, native) as a `CpuLinalgKernels`: each call packs the request
 * into kernel arguments and runs it on the context's worker, or — in Inner mode with a pool —
 * splits the batches into one contiguous range per pool lane; one large square LU or Cholesky
 * (order ≥ {@link PARALLEL_MIN_ORDER}) runs as a blocked right-looking factorisation shared by the
 * lanes (see {@link runBlocked}).
 */
import { debuglog } from 'node:util';
import { type CpuExecutionContext, type CpuProviderExecutionCapabilities, type CpuProviderOutcome, EXECUTED, type KernelArgs, type WorkerPool, defineKernel, kernelArgs, kernelWords } from '@tenferro/core';
import type { CpuLinalgKernels, LinalgRequest } from './contract/index.js';
import { DTYPE_CODE, FLAG, OP_CODE, STEP_OP, W } from './native/binding.js';

const kernel = defineKernel<KernelArgs, void>(new URL('./kernels/linalg.js', import.meta.url), 'linalgKernel');

/** The packed task of batches [b0, b1) of `r`. */
export function packLinalgTask(r: LinalgRequest, b0: number, b1: number, abort?: Int32Array): KernelArgs {
  const nb = r.batch.length;
  const w = kernelWords(W.HEADER + 3 * nb);
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
  return kernelArgs(w, outputWords(r, w, [r.a.buffer, b.buffer], abort));
}

/**
 * The output and info words of `r` into `w` (offOut0..2: each output's offset in elements of its
 * type, -1 for none; offInfo: info's offset in int32 words), and the task's buffers after `inputs`:
 * out0, out1, out2 (an absent output: the first input's buffer, never touched), info, abort.
 */
function outputWords(r: LinalgRequest, w: Float64Array, inputs: SharedArrayBuffer[], abort: Int32Array | undefined, out2?: Int32Array): SharedArrayBuffer[] {
  const buffers = inputs;
  for (let o = 0; o < 3; o++) {
    const d = o === 2 && out2 !== undefined ? { buffer: out2.buffer as SharedArrayBuffer, offset: out2.byteOffset >>> 2 } : r.out[o];
    w[W.offOut0 + o] = d === undefined ? -1 : d.offset;
    buffers.push(d === undefined ? inputs[0]! : d.buffer);
  }
  w[W.offInfo] = r.info.byteOffset >>> 2;
  buffers.push(r.info.buffer as SharedArrayBuffer);
  if (abort !== undefined) buffers.push(abort.buffer as SharedArrayBuffer);
  return buffers;
}

function batchCount(r: LinalgRequest): number {
  return r.batch.reduce((p, e) => p * e, 1);
}

/** From this order up, one square luFactor or cholesky with a pool of two or more lanes runs blocked over the lanes. */
export const PARALLEL_MIN_ORDER = 512;
/** The panel (and block) width of the blocked factorisations. */
export const PARALLEL_BLOCK = 128;
/** Sync words before the per-block progress words (native/src/linalg.h kSyncHeader). */
const SYNC_HEADER = 8;
const debug = debuglog('tenferro');

/** The packed team task (native/src/linalg.h) of `r`'s one n×n matrix, blocks of `nb` columns, sync words in `sync`. */
export function packTeamTask(r: LinalgRequest, nb: number, sync: Int32Array, abort?: Int32Array): KernelArgs {
  const w = kernelWords(W.HEADER);
  w[W.op] = r.op === 'luFactor' ? STEP_OP.luFactor : STEP_OP.cholesky;
  w[W.dtype] = DTYPE_CODE[r.dtype];
  w[W.m] = r.m;
  w[W.n] = r.m;
  w[W.k] = nb;
  w[W.flags] = r.flags.upper ? FLAG.upper : 0;
  w[W.abortAt] = abort === undefined ? -1 : abort.byteOffset;
  w[W.offA] = r.a.offset;
  w[W.rsA] = r.a.rowStride;
  w[W.csA] = r.a.colStride;
  return kernelArgs(w, outputWords(r, w, [r.a.buffer, r.a.buffer], abort, sync));
}

/**
 * One square n×n LU (partial pivoting) or Cholesky in place in its output, blocked and
 * right-looking (LAPACK getrf/potrf's order) with look-ahead, shared by the pool's lanes in ONE
 * `pool.map` of identical team tasks: the lanes take the tasks of a fixed sequence (gather each
 * block of nb columns; factor panel 0; then per panel p: update block p + 1, factor panel p + 1,
 * update the blocks right of it; last, LU's deferred row swaps or Cholesky's Lᴴ) by atomic ticket,
 * each waiting in native code until its inputs are done (native/src/linalg.h). No engine round trip
 * per panel, and a lane that starts late only takes fewer tasks. The panels are factored with the
 * same kernels as the sequential path (the recursive getrf, Eigen's blocked LLT), so pivots and
 * info follow the same convention. A Cholesky that meets a non-positive minor stops the team (its
 * info is set; the caller disposes the output unread).
 */
async function runBlocked(ctx: CpuExecutionContext, pool: WorkerPool, lanes: number, r: LinalgRequest): Promise<void> {
  const nb = PARALLEL_BLOCK;
  const sync = new Int32Array(new SharedArrayBuffer(4 * (SYNC_HEADER + Math.ceil(r.m / nb))));
  const task = packTeamTask(r, nb, sync, ctx.abortWord);
  await pool.map(kernel, Array.from({ length: lanes }, () => task));
  // NODE_DEBUG=tenferro: when the second lane started after the first, and how many tasks it took.
  if (debug.enabled) debug(`linalg: ${r.op} n=${r.m}: ${sync[4]} lanes arrived; the second started ${sync[4]! > 1 ? (sync[6]! - sync[5]!) | 0 : '-'} µs after the first and ran ${sync[7]} of ${teamTasks(r)} tasks`);
}

/** The number of tasks of a team (native/src/linalg.h's sequence). */
function teamTasks(r: LinalgRequest): number {
  const p = Math.ceil(r.m / PARALLEL_BLOCK);
  return p + (p * (p + 1)) / 2 + (r.op === 'luFactor' ? p - 1 : r.flags.upper ? p : 0);
}

/** What a task of the built-in kernels keeps busy: its own worker's thread (Eigen is built with EIGEN_DONT_PARALLELIZE; see provider-faer's gemm-provider.ts). */
const ONE_THREAD = Object.freeze({ threads: 1 });

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
    await ctx.run(kernel, packLinalgTask(r, 0, count, ctx.abortWord), ONE_THREAD);
    return EXECUTED;
  }
  const parts = Math.min(pool.size, count);
  const step = Math.ceil(count / parts);
  const tasks: KernelArgs[] = [];
  for (let b0 = 0; b0 < count; b0 += step) tasks.push(packLinalgTask(r, b0, Math.min(count, b0 + step), ctx.abortWord));
  await pool.map(kernel, tasks);
  return EXECUTED;
}

const BUILTIN_CAPABILITIES: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: false,
  acceptsInner: true,
});

/** The built-in kernels: every primitive, every dtype (f32, f64, c64, c128). */
export const BUILTIN_KERNELS: CpuLinalgKernels = Object.freeze({
  name: 'tenferro built-in (Eigen)',
  // Kernel tasks on the context's worker, or one per lane of ctx.workerPool() within its thread
  // budget: bounded per call, on engine workers, any mode but Outer. Declared (#35: an extension
  // that declares nothing is refused on strict bundles and caller-managed domains), so that these
  // kernels can be installed as an extension too (the conformance kit's reference).
  executionCapabilities: () => BUILTIN_CAPABILITIES,
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
