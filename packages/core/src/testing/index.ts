// @tenferro/core/testing — what provider packages run in their own tests. vitest is optional: the
// plain functions work without it; runProviderConformance and runTensorPrimitivesConformance need it
// (kit-vitest.ts, #40).
export { providerConformanceCases, runProviderConformance } from './run-provider-conformance.js';
export type { ProviderConformanceCase, ProviderConformanceOptions } from './run-provider-conformance.js';
export { naiveDotGeneral, relativeError, toleranceFor } from './naive-dot-general.js';
export { peakThreadsDuring, threadCensus } from './thread-census.js';
export { taskEventsDuring } from './task-events.js';
export { int, randomOperand, randomValues, seededRandom } from './random-operands.js';
export { forgingGemmProvider } from './forging-gemm-provider.js';
export type { ForgedCallObservation, ForgingGemmProvider } from './forging-gemm-provider.js';
export { randomElementValues, randomView } from './random-views.js';
export type { RandomViewOptions } from './random-views.js';
export { primitiveTolerance, runTensorPrimitivesConformance, tensorPrimitivesConformanceCases } from './tensor-primitives-conformance.js';
export type { TensorPrimitivesConformanceOptions } from './tensor-primitives-conformance.js';
