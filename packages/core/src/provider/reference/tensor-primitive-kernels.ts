/**
 * The worker module of core's reference tensor primitives: engine workers import it and call an
 * export with its request. Each is a pure function of its request (see `reference-kernels.ts`
 * for the conventions): it reads and writes only the storage the request names and never throws
 * for a request the reference provider accepted.
 */
export { referenceBinary } from './binary-kernel.js';
export { referenceReduce } from './reduce-kernel.js';
export { referenceUnary } from './unary-kernel.js';
