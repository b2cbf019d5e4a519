import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, checkOptions, matrix, signalOf, square } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** `linalg(target).luFullPivot`: P·A·Q = L·U as LAPACK getc2 (`{ lu, pivots, colPivots }`, i32 1-based). */
export async function luFullPivot<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<{ lu: Tensor<D>; pivots: Tensor<'i32'>; colPivots: Tensor<'i32'> }> {
  const op = 'linalg.luFullPivot';
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a);
  square(op, 'a', A);
  const n = A.shape[0]!;
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'luFullPivot', dtype: A.dtype, m: n, n, batch: A.shape.slice(2), flags: NO_FLAGS, a: A });
  return { lu: out[0] as Tensor<D>, pivots: out[1] as Tensor<'i32'>, colPivots: out[2] as Tensor<'i32'> };
}
