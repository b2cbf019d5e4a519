import { type Tensor, TenferroError } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, checkOptions, matrix, sameBatch, signalOf, square } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** `linalg(target).solve`: X with A X = B (A square, B n×k, same batch axes). `SingularMatrix` for an exactly singular U. */
export async function solve<D extends F>(target: LinalgTarget, a: Tensor<D>, b: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<D>> {
  const op = 'linalg.solve';
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a), B = matrix(op, 'b', b);
  square(op, 'a', A);
  sameBatch(op, A, B);
  if (B.shape[0] !== A.shape[0]) throw new TenferroError('ShapeMismatch', `${op}: a is ${A.shape[0]}×${A.shape[0]} but b has ${B.shape[0]} rows`, { op, detail: { a: A.shape, b: B.shape } });
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'solve', dtype: A.dtype, m: A.shape[0]!, n: B.shape[1]!, batch: A.shape.slice(2), flags: NO_FLAGS, a: A, b: B, failure: 'SingularMatrix' });
  return out[0] as Tensor<D>;
}
