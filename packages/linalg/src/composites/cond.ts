import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, type RealOf, checkOptions, count, matrix, realOf, signalOf } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';
import { floats } from '../support/views.js';

/** `linalg(target).cond`: the 2-norm condition number σ_max/σ_min (∞ when σ_min = 0), real, shape = the batch axes. */
export async function cond<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<RealOf<D>>> {
  const op = 'linalg.cond';
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a);
  const [m, n] = [A.shape[0]!, A.shape[1]!], k = Math.min(m, n), batch = A.shape.slice(2);
  const { out, own } = await runLinalg(target, op, signalOf(o), { op: 'svd', dtype: A.dtype, m, n, batch, flags: { ...NO_FLAGS, vectors: false }, a: A, failure: 'NoConvergence' }, {
    outputs: [[realOf(A.dtype), batch]],
    finish: (r) => {
      const s = floats(r.out[1]!), c = floats(r.own[0]!);
      for (let bi = 0; bi < count(batch); bi++) c[bi] = k === 0 ? 0 : s[bi * k]! / s[bi * k + k - 1]!;
    },
  });
  for (const t of out) t?.dispose();
  return own[0] as Tensor<RealOf<D>>;
}
