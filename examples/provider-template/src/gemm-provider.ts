// src/gemm-provider.ts
import {
  EXECUTED,
  Unsupported,
  defineKernel,
  type CpuGemmProvider,
  type CpuProviderExecutionCapabilities,
  type GemmOperand,
  validateGemmRequest,
} from '@tenferro/core';
import type { XGemmTask } from './kernels/gemm.js';
import type { ResolvedXProviderOptions } from './options.js';

const gemmKernel = defineKernel<XGemmTask, void>(new URL('./kernels/gemm.js', import.meta.url), 'myGemm');

/** Per-call thread bound honoured exactly, on the engine's own workers (R55, R63). */
const CAPABILITIES: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: true,
  acceptsInner: true,
});

// Operands this kernel is fast on: column- or row-major. A side of extent 1 carries its dense
// stride (core never sends 0 there, #40), so 1×1 operands and vectors pass.
const unitStride = (o: GemmOperand): boolean => o.rowStride === 1 || o.colStride === 1;

export function createGemmProvider(options: ResolvedXProviderOptions): CpuGemmProvider {
  const provider: CpuGemmProvider = {
    name: 'x GEMM',
    executionCapabilities: () => CAPABILITIES,
    declaredSupport: () => Object.freeze({ dtypes: ['f32', 'f64'] as const, stridedOperands: false, conjugation: false, overwritesOutput: true, declinesBeforeWriting: true }),
    async gemm(ctx, request) {
      validateGemmRequest('x gemm', request); // a malformed request is a typed error, never a wrong index
      // Decline before writing anything (R64); the first three make core retry once (R105).
      if (request.dtype !== 'f32' && request.dtype !== 'f64') return Unsupported.dtype(request.dtype);
      if (request.conjLhs || request.conjRhs) return Unsupported.conjugation();
      if (!unitStride(request.lhs)) return Unsupported.layout('lhs');
      if (!unitStride(request.rhs)) return Unsupported.layout('rhs');
      if (!unitStride(request.out)) return Unsupported.layout('output'); // terminal
      const pool = ctx.workerPool(); // Inner with a budget above one only (R75)
      if (pool === undefined || pool.size === 1 || request.m * request.n * request.k < options.parallelMinWork) {
        await ctx.run(gemmKernel, { request, rows: [0, request.m] }, { threads: 1 }); // this context's own worker; the kernel starts no thread
      } else {
        // One task per disjoint block of output rows, at most pool.size at a time (R76).
        const step = Math.ceil(request.m / pool.size);
        const tasks: XGemmTask[] = [];
        for (let first = 0; first < request.m; first += step) tasks.push({ request, rows: [first, Math.min(request.m, first + step)] });
        await pool.map(gemmKernel, tasks);
      }
      return EXECUTED;
    },
  };
  return Object.freeze(provider);
}
