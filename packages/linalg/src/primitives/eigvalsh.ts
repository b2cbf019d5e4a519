import type { Tensor } from '@tenferro/core';
import type { F, LinalgTarget, RealOf } from '../support/arguments.js';
import { type EighOptions, eighOf } from './eigh.js';

/** `linalg(target).eigvalsh`: the eigenvalues of a Hermitian A, real, ascending. */
export async function eigvalsh<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: EighOptions): Promise<Tensor<RealOf<D>>> {
  return (await eighOf(target, 'linalg.eigvalsh', a, options, false))[0] as Tensor<RealOf<D>>;
}
