import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, type RealOf, checkOptions, matrix, signalOf } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** `linalg(target).svdvals`: the singular values, real, descending. */
export async function svdvals<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<RealOf<D>>> {
  const op = 'linalg.svdvals';
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a);
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'svd', dtype: A.dtype, m: A.shape[0]!, n: A.shape[1]!, batch: A.shape.slice(2), flags: { ...NO_FLAGS, vectors: false }, a: A, failure: 'NoConvergence' });
  return out[1] as Tensor<RealOf<D>>;
}
