import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, checkOptions, matrix, signalOf } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** `linalg(target).luFactor`: `{ lu, pivots }` as LAPACK getrf (pivots i32, 1-based). */
export async function luFactor<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<{ lu: Tensor<D>; pivots: Tensor<'i32'> }> {
  const op = 'linalg.luFactor';
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a);
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'luFactor', dtype: A.dtype, m: A.shape[0]!, n: A.shape[1]!, batch: A.shape.slice(2), flags: NO_FLAGS, a: A });
  return { lu: out[0] as Tensor<D>, pivots: out[1] as Tensor<'i32'> };
}
