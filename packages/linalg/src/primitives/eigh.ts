import { type Tensor, TenferroError } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, type RealOf, checkOptions, matrix, signalOf, square } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

export type EighOptions = LinalgRunOptions & { readonly uplo?: 'L' | 'U' };

/** The `eigh` primitive behind `eigh` and `eigvalsh` (validation and one call). */
export async function eighOf(target: LinalgTarget, op: string, a: Tensor<F>, options: EighOptions | undefined, vectors: boolean): Promise<(Tensor | undefined)[]> {
  const o = checkOptions(op, options, ['signal', 'uplo']);
  const uplo = o.uplo ?? 'L';
  if (uplo !== 'L' && uplo !== 'U') throw TenferroError.invalidArgument(op, 'options.uplo', "'L' or 'U'", uplo);
  const A = matrix(op, 'a', a);
  square(op, 'a', A);
  const n = A.shape[0]!;
  return (await runLinalg(target, op, signalOf(o), { op: 'eigh', dtype: A.dtype, m: n, n, batch: A.shape.slice(2), flags: { ...NO_FLAGS, upper: uplo === 'U', vectors }, a: A, failure: 'NoConvergence' })).out;
}

/** `linalg(target).eigh`: `{ eigenvalues, eigenvectors }` of a Hermitian A; eigenvalues real, ascending. */
export async function eigh<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: EighOptions): Promise<{ eigenvalues: Tensor<RealOf<D>>; eigenvectors: Tensor<D> }> {
  const [w, v] = await eighOf(target, 'linalg.eigh', a, options, true);
  return { eigenvalues: w as Tensor<RealOf<D>>, eigenvectors: v as Tensor<D> };
}
