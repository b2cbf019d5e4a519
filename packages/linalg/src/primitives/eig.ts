import type { Tensor } from '@tenferro/core';
import { type ComplexOf, type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, checkOptions, matrix, signalOf, square } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** The `eig` primitive behind `eig` and `eigvals` (validation and one call). */
export async function eigOf(target: LinalgTarget, op: string, a: Tensor<F>, options: LinalgRunOptions | undefined, vectors: boolean): Promise<(Tensor | undefined)[]> {
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a);
  square(op, 'a', A);
  const n = A.shape[0]!;
  return (await runLinalg(target, op, signalOf(o), { op: 'eig', dtype: A.dtype, m: n, n, batch: A.shape.slice(2), flags: { ...NO_FLAGS, vectors }, a: A, failure: 'NoConvergence' })).out;
}

/** `linalg(target).eig`: `{ eigenvalues, eigenvectors }` of a general square A, complex. */
export async function eig<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<{ eigenvalues: Tensor<ComplexOf<D>>; eigenvectors: Tensor<ComplexOf<D>> }> {
  const [w, v] = await eigOf(target, 'linalg.eig', a, options, true);
  return { eigenvalues: w as Tensor<ComplexOf<D>>, eigenvectors: v as Tensor<ComplexOf<D>> };
}
