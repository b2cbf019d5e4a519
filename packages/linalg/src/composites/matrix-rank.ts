import { type Tensor, TenferroError } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, checkOptions, count, epsOf, matrix, signalOf } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';
import { floats, ints } from '../support/views.js';

/** `linalg(target).matrixRank`: singular values above `tol` (default max(m, n)·ε·σ_max), i32, shape = the batch axes. */
export async function matrixRank<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions & { readonly tol?: number }): Promise<Tensor<'i32'>> {
  const op = 'linalg.matrixRank';
  const o = checkOptions(op, options, ['signal', 'tol']);
  if (o.tol !== undefined && (typeof o.tol !== 'number' || !(o.tol >= 0))) throw TenferroError.invalidArgument(op, 'options.tol', 'a non-negative number', o.tol);
  const A = matrix(op, 'a', a);
  const [m, n] = [A.shape[0]!, A.shape[1]!], k = Math.min(m, n), batch = A.shape.slice(2), eps = epsOf(A.dtype);
  const { out, own } = await runLinalg(target, op, signalOf(o), { op: 'svd', dtype: A.dtype, m, n, batch, flags: { ...NO_FLAGS, vectors: false }, a: A, failure: 'NoConvergence' }, {
    outputs: [['i32', batch]],
    finish: (r) => {
      const s = floats(r.out[1]!), rank = ints(r.own[0]!);
      for (let bi = 0; bi < count(batch); bi++) {
        const max = k > 0 ? s[bi * k]! : 0;
        const tol = (o.tol as number | undefined) ?? Math.max(m, n) * eps * max;
        let rk = 0;
        for (let i = 0; i < k; i++) if (s[bi * k + i]! > tol) rk++;
        rank[bi] = rk;
      }
    },
  });
  for (const t of out) t?.dispose();
  return own[0] as Tensor<'i32'>;
}
