import type { DType } from './dtype.js';

/**
 * A validated, frozen view of tensor storage: what kernels and native code receive. Strides and
 * offset are in elements (a complex element is one element). Every reachable element
 * `offset + Σ index[i]·strides[i]` lies inside `buffer` (checked by `validateLayout`).
 */
export interface TensorDescriptor {
  readonly dtype: DType;
  readonly shape: readonly number[];
  readonly strides: readonly number[];
  readonly offset: number;
  readonly buffer: SharedArrayBuffer;
}
