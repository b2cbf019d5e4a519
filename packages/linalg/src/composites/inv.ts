import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, checkOptions, matrix, signalOf, square } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/**
 * `linalg(target).inv`: the inverse, as `solve` against the identity — written into a fresh output
 * of the same operation, whose pooled storage goes back when the call ends (#35: no identity of its
 * own per call, so a loop of `inv` holds nothing). `SingularMatrix` for an exactly singular U.
 */
export async function inv<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<D>> {
  const op = 'linalg.inv';
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a);
  square(op, 'a', A);
  const n = A.shape[0]!;
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'solve', dtype: A.dtype, m: n, n, batch: A.shape.slice(2), flags: NO_FLAGS, a: A, b: 'identity', failure: 'SingularMatrix' });
  return out[0] as Tensor<D>;
}
