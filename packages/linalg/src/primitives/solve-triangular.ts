import { type Tensor, TenferroError } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, bool, checkOptions, matrix, sameBatch, signalOf, square } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** `linalg(target).solveTriangular`: X with A X = B (`left`, default) or X A = B, A triangular (`upper` required). */
export async function solveTriangular<D extends F>(
  target: LinalgTarget,
  a: Tensor<D>,
  b: Tensor<D>,
  options: LinalgRunOptions & { readonly upper: boolean; readonly left?: boolean; readonly unitDiagonal?: boolean },
): Promise<Tensor<D>> {
  const op = 'linalg.solveTriangular';
  if (options === undefined) throw TenferroError.invalidArgument(op, 'options', 'an options object with upper', options);
  const o = checkOptions(op, options, ['signal', 'upper', 'left', 'unitDiagonal']);
  if (typeof o.upper !== 'boolean') throw TenferroError.invalidArgument(op, 'options.upper', 'a boolean', o.upper);
  const left = bool(op, o, 'left', true), unitDiagonal = bool(op, o, 'unitDiagonal', false);
  const A = matrix(op, 'a', a), B = matrix(op, 'b', b);
  square(op, 'a', A);
  sameBatch(op, A, B);
  const m = B.shape[0]!, n = B.shape[1]!;
  if (A.shape[0] !== (left ? m : n)) throw new TenferroError('ShapeMismatch', `${op}: a is ${A.shape[0]}×${A.shape[0]} but b is ${m}×${n} (${left ? 'rows' : 'columns'} must agree)`, { op, detail: { a: A.shape, b: B.shape } });
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'solveTriangular', dtype: A.dtype, m, n, batch: A.shape.slice(2), flags: { ...NO_FLAGS, upper: o.upper, left, unitDiagonal }, a: A, b: B });
  return out[0] as Tensor<D>;
}
