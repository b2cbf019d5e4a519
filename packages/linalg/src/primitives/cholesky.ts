import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, bool, checkOptions, matrix, signalOf, square } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** `linalg(target).cholesky`: L with A = L Lᴴ (lower triangle of A read), or U = Lᴴ with `upper`. */
export async function cholesky<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions & { readonly upper?: boolean }): Promise<Tensor<D>> {
  const op = 'linalg.cholesky';
  const o = checkOptions(op, options, ['signal', 'upper']);
  const upper = bool(op, o, 'upper', false);
  const A = matrix(op, 'a', a);
  square(op, 'a', A);
  const n = A.shape[0]!;
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'cholesky', dtype: A.dtype, m: n, n, batch: A.shape.slice(2), flags: { ...NO_FLAGS, upper }, a: A, failure: 'NotPositiveDefinite' });
  return out[0] as Tensor<D>;
}
