import { defineKernel } from '../../contract/kernel.js';
import { DTYPE_INFO, type DType } from '../../tensor/dtype.js';
import type { CpuProviderExecutionCapabilities } from '../execution-capabilities.js';
import { type CpuProviderOutcome, EXECUTED, Unsupported } from '../provider-outcome.js';
import { BINARY_DTYPES, REDUCE_DTYPES, UNARY_DTYPES, binaryOutDType, needsElements, reduceOutDType, unaryOutDType } from '../tensor-primitive-dtypes.js';
import type { CpuBinaryRequest, CpuReduceRequest, CpuTensorPrimitivesProvider, CpuUnaryRequest } from '../tensor-primitives.js';

const kernels = new URL('./tensor-primitive-kernels.js', import.meta.url);
const binaryKernel = defineKernel<CpuBinaryRequest, void>(kernels, 'referenceBinary');
const unaryKernel = defineKernel<CpuUnaryRequest, void>(kernels, 'referenceUnary');
const reduceKernel = defineKernel<CpuReduceRequest, void>(kernels, 'referenceReduce');

/** One kernel task on the context's own worker: sequential by construction, on the calling (worker) thread. */
const SEQUENTIAL_ON_CALLER: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'sequential',
  placement: 'callingThread',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: true,
  acceptsInner: true,
  spawnsThreadsOnFirstUse: false,
});

const ALL_DTYPES: readonly DType[] = Object.freeze(['f32', 'f64', 'c64', 'c128', 'i32', 'i64', 'bool']);

/** Whether `alpha` is a scalar of `dtype`'s kind: a number for real dtypes, `[re, im]` for complex ones. */
function alphaMatches(dtype: DType, alpha: unknown): boolean {
  if (DTYPE_INFO[dtype].complex) return Array.isArray(alpha) && alpha.length === 2 && typeof alpha[0] === 'number' && typeof alpha[1] === 'number';
  return typeof alpha === 'number';
}

/**
 * Core's TypeScript tensor primitives: every operation of the slot over any validated strided
 * views, for every dtype of `tensor-primitive-dtypes.ts`; sequential, exact where the operation
 * is exact, pairwise summation for floating sums. The fallback when a provider declines and the
 * oracle of the conformance kit. Declines before writing (R66): a dtype outside the table or an
 * output of the wrong dtype → dtype; scale's alpha of the wrong kind → accumulation; a max, min,
 * argmax or argmin over zero elements into a non-empty output (no value to write) → rank.
 */
export const referenceTensorPrimitivesProvider: CpuTensorPrimitivesProvider = {
  name: 'reference tensor primitives (TypeScript, sequential)',
  executionCapabilities: () => SEQUENTIAL_ON_CALLER,
  declaredSupport: () => Object.freeze({ dtypes: ALL_DTYPES, stridedOperands: true, conjugation: true, overwritesOutput: true, declinesBeforeWriting: true }),
  async binary(ctx, request): Promise<CpuProviderOutcome> {
    const dtype = request.lhs.dtype;
    if (!BINARY_DTYPES[request.op]?.includes(dtype) || request.rhs.dtype !== dtype) return Unsupported.dtype(dtype);
    if (request.out.dtype !== binaryOutDType(request.op, dtype)) return Unsupported.dtype(request.out.dtype);
    await ctx.run(binaryKernel, request);
    return EXECUTED;
  },
  async unary(ctx, request): Promise<CpuProviderOutcome> {
    const dtype = request.src.dtype;
    if (!UNARY_DTYPES[request.op]?.includes(dtype)) return Unsupported.dtype(dtype);
    if (request.op !== 'cast' && request.out.dtype !== unaryOutDType(request.op, dtype)) return Unsupported.dtype(request.out.dtype);
    if (request.op === 'scale' && !alphaMatches(dtype, request.alpha)) return Unsupported.of({ kind: 'accumulation' });
    await ctx.run(unaryKernel, request);
    return EXECUTED;
  },
  async reduce(ctx, request): Promise<CpuProviderOutcome> {
    const dtype = request.src.dtype;
    if (!REDUCE_DTYPES[request.op]?.includes(dtype)) return Unsupported.dtype(dtype);
    if (request.out.dtype !== reduceOutDType(request.op, dtype)) return Unsupported.dtype(request.out.dtype);
    const empty = request.axes.some((a) => request.src.shape[a] === 0);
    if (empty && needsElements(request.op) && !request.out.shape.includes(0)) return Unsupported.of({ kind: 'rank' });
    await ctx.run(reduceKernel, request);
    return EXECUTED;
  },
};
Object.freeze(referenceTensorPrimitivesProvider);
