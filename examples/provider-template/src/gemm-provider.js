// The main-thread side: declares what the provider supports and how it uses threads, declines
// what it cannot do before writing anything, and splits the work over the context's workers.
import { EXECUTED, Unsupported, defineKernel, kernelArgs, validateGemmRequest } from '@tenferro/core';

/**
 * Thread and placement behaviour, validated by tenferro before anything runs:
 * - `perCallUpperBound`: each call uses at most the thread budget it is given (here: at most
 *   `ctx.workerPool().size` workers, never a thread of its own);
 * - `engineWorkers`: all its work runs on the engine's pinned workers (ctx.run / the pool);
 * - it accepts every parallel mode: Sequential (budget 1: one task on the context's worker),
 *   Inner (budget > 1: it fans out over the pool itself) and Outer (tenferro fans out many calls,
 *   each Sequential).
 * @type {import('@tenferro/core').CpuProviderExecutionCapabilities}
 */
export const CAPABILITIES = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: true,
  acceptsInner: true,
});

/** What it computes, for the conformance kit to choose cases from (declaring more than the truth fails conformance). */
const SUPPORT = Object.freeze({
  dtypes: Object.freeze(['f64', 'f32']),
  stridedOperands: true,
  conjugation: false,
  // With beta = 0 every output element is written without being read, so fresh outputs need no zeroing.
  overwritesOutput: true,
  // Every decline happens before the output is touched.
  declinesBeforeWriting: true,
});

const DTYPE_CODE = { f64: 0, f32: 1 };

// The kernel: a module workers import the first time they run it, and an export.
const kernel = defineKernel(new URL('./kernels/gemm.js', import.meta.url), 'exampleGemm');

/** @returns {import('@tenferro/core').CpuGemmProvider} */
export function createGemmProvider() {
  return Object.freeze({
    name: 'example JavaScript GEMM',
    executionCapabilities: () => CAPABILITIES,
    declaredSupport: () => SUPPORT,
    async gemm(ctx, request) {
      // Check every number first: a malformed request is a typed error, never a wrong index.
      validateGemmRequest('gemm', request);
      // Decline, before writing anything, what is not supported: core then retries or reports.
      if (!(request.dtype in DTYPE_CODE)) return Unsupported.dtype(request.dtype);
      if (request.conjLhs || request.conjRhs) return Unsupported.conjugation();
      if (typeof request.alpha !== 'number' || typeof request.beta !== 'number') return Unsupported.of({ kind: 'accumulation' });
      const batches = request.batch.reduce((a, b) => a * b, 1);
      if (request.m === 0 || request.n === 0 || batches === 0) return EXECUTED;
      // Inner mode with budget > 1 offers a pool of at most `threadBudget` workers: one task per
      // block of rows. Sequential (budget 1) or Outer mode: no pool, one task on ctx's worker.
      const pool = ctx.workerPool();
      const lanes = Math.min(pool?.size ?? 1, request.m);
      const tasks = [];
      for (let lane = 0; lane < lanes; lane++) {
        const m0 = Math.floor((request.m * lane) / lanes);
        const m1 = Math.floor((request.m * (lane + 1)) / lanes);
        tasks.push(pack(request, m0, m1));
      }
      if (pool === undefined || tasks.length === 1) await ctx.run(kernel, tasks[0]);
      else await pool.map(kernel, tasks);
      return EXECUTED;
    },
  });
}

/**
 * One task as packed kernel arguments: numbers through the worker's shared argument area and
 * the three buffers by id — no structured clone per call.
 */
function pack(r, m0, m1) {
  const head = [DTYPE_CODE[r.dtype], r.m, r.n, r.k, m0, m1, r.alpha, r.beta];
  const strides = [r.lhs.offset, r.lhs.rowStride, r.lhs.colStride, r.rhs.offset, r.rhs.rowStride, r.rhs.colStride, r.out.offset, r.out.rowStride, r.out.colStride];
  const batch = [r.batch.length, ...r.batch, ...r.lhs.batchStrides, ...r.rhs.batchStrides, ...r.out.batchStrides];
  return kernelArgs(Float64Array.from([...head, ...strides, ...batch]), [r.lhs.buffer, r.rhs.buffer, r.out.buffer]);
}
