/**
 * The worker module of core's reference tensor primitives: one export per request kind, each a
 * pure function of its request (see `reference-kernels.ts` for the conventions).
 */
import type { CpuBinaryRequest, CpuReduceRequest, CpuUnaryRequest } from '../tensor-primitives.js';

export function referenceBinary(_req: CpuBinaryRequest): void {
  throw new Error('referenceBinary: not implemented yet');
}

export function referenceUnary(_req: CpuUnaryRequest): void {
  throw new Error('referenceUnary: not implemented yet');
}

export function referenceReduce(_req: CpuReduceRequest): void {
  throw new Error('referenceReduce: not implemented yet');
}
