import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, type RealOf, bool, checkOptions, matrix, signalOf } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** `linalg(target).svd`: `{ u, s, vh }` with A = U diag(S) Vᴴ; `fullMatrices` (default true) gives square U and Vᴴ. */
export async function svd<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions & { readonly fullMatrices?: boolean }): Promise<{ u: Tensor<D>; s: Tensor<RealOf<D>>; vh: Tensor<D> }> {
  const op = 'linalg.svd';
  const o = checkOptions(op, options, ['signal', 'fullMatrices']);
  const full = bool(op, o, 'fullMatrices', true);
  const A = matrix(op, 'a', a);
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'svd', dtype: A.dtype, m: A.shape[0]!, n: A.shape[1]!, batch: A.shape.slice(2), flags: { ...NO_FLAGS, full, vectors: true }, a: A, failure: 'NoConvergence' });
  return { u: out[0] as Tensor<D>, s: out[1] as Tensor<RealOf<D>>, vh: out[2] as Tensor<D> };
}
