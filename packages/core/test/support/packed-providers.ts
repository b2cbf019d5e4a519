// Test providers whose kernel tasks cross as packed kernel arguments (`kernelArgs`), like the
// native providers: f64 GEMM (unbatched) and f64 `add`, each split over the context's worker pool
// when it has more than one lane, so that every worker learns the operands' storage. Core's own
// reference providers send structured-clone payloads instead, which never reach the buffer tables.
import {
  type CpuProviderExecutionCapabilities,
  type CpuProviderPackage,
  defineKernel,
  type DType,
  EXECUTED,
  type KernelArgs,
  kernelArgs,
  kernelWords,
  referenceLayoutProvider,
  type TensorDescriptor,
  Unsupported,
} from '../../src/index.js';

const kernels = new URL('../fixtures/kernels/packed-kernels.mjs', import.meta.url);
const gemmKernel = defineKernel<KernelArgs, void>(kernels, 'packedGemm');
const addKernel = defineKernel<KernelArgs, void>(kernels, 'packedAdd');

const CAPABILITIES: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: true,
  acceptsInner: true,
});

const F64: readonly DType[] = Object.freeze(['f64']);

/** `[lo, hi)` ranges splitting `extent` into at most `parts` non-empty pieces. */
function split(extent: number, parts: number): [number, number][] {
  const count = Math.max(1, Math.min(parts, extent));
  return Array.from({ length: count }, (_, p) => [Math.floor((extent * p) / count), Math.floor((extent * (p + 1)) / count)] as [number, number]).filter(([lo, hi]) => hi > lo);
}

function strided(words: Float64Array, at: number, d: TensorDescriptor): number {
  words[at] = d.offset;
  d.strides.forEach((s, i) => (words[at + 1 + i] = s));
  return at + 1 + d.strides.length;
}

/** The package: `kind: 'faer'`, GEMM and tensor primitives (add only; every other request declined before writing). */
export function packedProviders(): CpuProviderPackage {
  return {
    kind: 'faer',
    name: 'packed test providers',
    layoutTransform: referenceLayoutProvider,
    gemm: {
      name: 'packed test GEMM (f64)',
      executionCapabilities: () => CAPABILITIES,
      declaredSupport: () => Object.freeze({ dtypes: F64, stridedOperands: true, conjugation: true, overwritesOutput: true, declinesBeforeWriting: true }),
      async gemm(ctx, r) {
        if (r.dtype !== 'f64') return Unsupported.dtype(r.dtype);
        if (r.batch.length > 0) return Unsupported.of({ kind: 'stridedBatch' });
        if (typeof r.alpha !== 'number' || typeof r.beta !== 'number') return Unsupported.of({ kind: 'accumulation' });
        const pack = ([n0, n1]: [number, number]): KernelArgs => {
          const w = kernelWords(16);
          w.set([r.m, r.n, r.k, r.lhs.offset, r.lhs.rowStride, r.lhs.colStride, r.rhs.offset, r.rhs.rowStride, r.rhs.colStride, r.out.offset, r.out.rowStride, r.out.colStride, r.alpha as number, r.beta as number, n0, n1]);
          return kernelArgs(w, [r.lhs.buffer, r.rhs.buffer, r.out.buffer]);
        };
        const pool = ctx.workerPool();
        if (pool === undefined || pool.size <= 1 || r.n < 2) await ctx.run(gemmKernel, pack([0, r.n]));
        else await pool.map(gemmKernel, split(r.n, pool.size).map(pack));
        return EXECUTED;
      },
    },
    tensorPrimitives: {
      name: 'packed test tensor primitives (f64 add)',
      executionCapabilities: () => CAPABILITIES,
      declaredSupport: () => Object.freeze({ dtypes: F64, stridedOperands: true, conjugation: false, declinesBeforeWriting: true }),
      async binary(ctx, r) {
        if (r.op !== 'add' || r.lhs.dtype !== 'f64' || r.rhs.dtype !== 'f64' || r.out.dtype !== 'f64') return Unsupported.dtype(r.out.dtype);
        const rank = r.out.shape.length;
        const size = r.out.shape.reduce((a, b) => a * b, 1);
        const pack = ([e0, e1]: [number, number]): KernelArgs => {
          const w = kernelWords(1 + rank + 3 * (rank + 1) + 2);
          w[0] = rank;
          r.out.shape.forEach((e, i) => (w[1 + i] = e));
          let at = strided(w, 1 + rank, r.lhs);
          at = strided(w, at, r.rhs);
          at = strided(w, at, r.out);
          w[at] = e0;
          w[at + 1] = e1;
          return kernelArgs(w, [r.out.buffer, r.lhs.buffer, r.rhs.buffer]);
        };
        const pool = ctx.workerPool();
        if (size === 0) return EXECUTED;
        if (pool === undefined || pool.size <= 1) await ctx.run(addKernel, pack([0, size]));
        else await pool.map(addKernel, split(size, pool.size).map(pack));
        return EXECUTED;
      },
      async unary(_ctx, r) {
        return Unsupported.dtype(r.out.dtype);
      },
      async reduce(_ctx, r) {
        return Unsupported.dtype(r.out.dtype);
      },
    },
  };
}
