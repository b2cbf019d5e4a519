import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, checkOptions, matrix, signalOf } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** `linalg(target).lu`: `{ p, l, u }` with A = P L U (P m×m, L m×k unit lower, U k×n). */
export async function lu<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<{ p: Tensor<D>; l: Tensor<D>; u: Tensor<D> }> {
  const op = 'linalg.lu';
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a);
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'lu', dtype: A.dtype, m: A.shape[0]!, n: A.shape[1]!, batch: A.shape.slice(2), flags: NO_FLAGS, a: A });
  return { p: out[0] as Tensor<D>, l: out[1] as Tensor<D>, u: out[2] as Tensor<D> };
}
