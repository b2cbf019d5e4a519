import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';

/**
 * Copy `src` into `dst` element by element (same dtype, same shape, any strides), conjugating
 * complex values when `conjugate`. Used to materialise canonical operands (R105) and views.
 * `dst` never overlaps `src` (core guarantees it).
 */
export interface CpuLayoutRequest {
  readonly src: TensorDescriptor;
  readonly dst: TensorDescriptor;
  readonly conjugate: boolean;
}
