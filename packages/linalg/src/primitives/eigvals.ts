import type { Tensor } from '@tenferro/core';
import type { ComplexOf, F, LinalgRunOptions, LinalgTarget } from '../support/arguments.js';
import { eigOf } from './eig.js';

/** `linalg(target).eigvals`: the eigenvalues of a general square A, complex. */
export async function eigvals<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<ComplexOf<D>>> {
  return (await eigOf(target, 'linalg.eigvals', a, options, false))[0] as Tensor<ComplexOf<D>>;
}
