import { defineKernel } from '../../contract/kernel.js';
import { CONTRACTION_DTYPES, DTYPES } from '../../tensor/dtype.js';
import type { CpuGemmProvider, CpuLayoutTransformProvider } from '../cpu-providers.js';
import type { CpuProviderExecutionCapabilities } from '../execution-capabilities.js';
import type { CpuGemmRequest } from '../gemm-request.js';
import type { CpuLayoutRequest } from '../layout-request.js';
import { EXECUTED, Unsupported } from '../provider-outcome.js';

const kernels = new URL('./reference-kernels.js', import.meta.url);
const gemmKernel = defineKernel<CpuGemmRequest, void>(kernels, 'referenceGemm');
const materializeKernel = defineKernel<CpuLayoutRequest, void>(kernels, 'referenceMaterialize');

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

/** Core's TypeScript GEMM: every dtype of R109, any strides, conjugation; sequential, correct, slow. The oracle of the conformance kit. */
export const referenceGemmProvider: CpuGemmProvider = {
  name: 'reference GEMM (TypeScript, sequential)',
  executionCapabilities: () => SEQUENTIAL_ON_CALLER,
  // It runs `request.summed` correctly (for any caller) but does not declare `summedAxes`: a
  // bundle on it keeps the copy path, where the layout provider (core's, or provider-tprims's) works.
  declaredSupport: () => Object.freeze({ dtypes: CONTRACTION_DTYPES, stridedOperands: true, conjugation: true, overwritesOutput: true, declinesBeforeWriting: true }),
  async gemm(ctx, request) {
    if (!CONTRACTION_DTYPES.includes(request.dtype)) return Unsupported.dtype(request.dtype);
    await ctx.run(gemmKernel, request);
    return EXECUTED;
  },
};
Object.freeze(referenceGemmProvider);

/** Core's TypeScript strided copy with fused conjugation, every dtype. */
export const referenceLayoutProvider: CpuLayoutTransformProvider = {
  name: 'reference layout transform (TypeScript, sequential)',
  executionCapabilities: () => SEQUENTIAL_ON_CALLER,
  declaredSupport: () => Object.freeze({ dtypes: DTYPES, stridedOperands: true, conjugation: true, overwritesOutput: true, declinesBeforeWriting: true }),
  async materialize(ctx, request) {
    await ctx.run(materializeKernel, request);
    return EXECUTED;
  },
};
Object.freeze(referenceLayoutProvider);
