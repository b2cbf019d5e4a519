import { Tensor, TenferroError } from '@tenferro/core';
import { type SvdFactors, applyPseudoInverse, invertAbove, squaredResiduals } from '../pseudo-inverse.js';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, type RealOf, checkOptions, epsOf, isComplex, matrix, realOf, sameBatch, signalOf } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';
import { floats, gather, ints } from '../support/views.js';

/** The result of `linalg(target).lstsq` (torch.linalg.lstsq's fields, gelsd semantics). */
export interface LstsqResult<D extends F> {
  /** X (n×k) minimising ‖A·X − B‖ per column; of minimum norm when A is rank-deficient. */
  readonly solution: Tensor<D>;
  /** ‖A·X − B‖² per column (real, [k, …batch]) when m > n and every matrix has rank n; else shape [0]. */
  readonly residuals: Tensor<RealOf<D>>;
  /** The effective rank (singular values above rcond·σ_max), i32, shape = the batch axes. */
  readonly rank: Tensor<'i32'>;
  /** The singular values of A, real, descending ([min(m, n), …batch]). */
  readonly singularValues: Tensor<RealOf<D>>;
}

/**
 * `linalg(target).lstsq`: least squares with gelsd's semantics from the thin SVD of A (the `svd`
 * primitive), the solution, rank and residuals computed in the same operation.
 */
export async function lstsq<D extends F>(target: LinalgTarget, a: Tensor<D>, b: Tensor<D>, options?: LinalgRunOptions & { readonly rcond?: number }): Promise<LstsqResult<D>> {
  const op = 'linalg.lstsq';
  const o = checkOptions(op, options, ['signal', 'rcond']);
  if (o.rcond !== undefined && (typeof o.rcond !== 'number' || !Number.isFinite(o.rcond))) throw TenferroError.invalidArgument(op, 'options.rcond', 'a finite number', o.rcond);
  const A = matrix(op, 'a', a), B = matrix(op, 'b', b);
  sameBatch(op, A, B);
  const [m, n] = [A.shape[0]!, A.shape[1]!], r = B.shape[1]!, k = Math.min(m, n), batch = A.shape.slice(2);
  if (B.shape[0] !== m) throw new TenferroError('ShapeMismatch', `${op}: a is ${m}×${n} but b has ${B.shape[0]} rows`, { op, detail: { a: A.shape, b: B.shape } });
  const eps = epsOf(A.dtype);
  const rcond = o.rcond === undefined ? eps * Math.max(m, n) : (o.rcond as number) < 0 ? eps : (o.rcond as number);
  const complex = isComplex(A.dtype), real = realOf(A.dtype);
  const { out, own, value: withResiduals } = await runLinalg(
    target,
    op,
    signalOf(o),
    { op: 'svd', dtype: A.dtype, m, n, batch, flags: { ...NO_FLAGS, full: false, vectors: true }, a: A, also: [B], failure: 'NoConvergence' },
    {
      outputs: [[A.dtype, [n, r, ...batch]], ['i32', batch], ...(m > n ? [[real, [r, ...batch]] as const] : [])],
      finish: (res) => {
        const f: SvdFactors = { m, n, k, complex, u: floats(res.out[0]!), s: floats(res.out[1]!), vh: floats(res.out[2]!) };
        const bData = gather(res.inputs[1]!);
        const x = floats(res.own[0]!), rank = ints(res.own[1]!);
        for (let bi = 0; bi < rank.length; bi++) {
          const smax = k > 0 ? f.s[bi * k]! : 0;
          const { inv, rank: rk } = invertAbove(f.s, bi * k, k, rcond * smax);
          rank[bi] = rk;
          applyPseudoInverse(f, bi, inv, bData, bi * m * r, r, x, bi * n * r);
        }
        if (!(m > n && rank.every((v) => v === n))) return false;
        const aData = gather(res.inputs[0]!), residuals = floats(res.own[2]!);
        for (let bi = 0; bi < rank.length; bi++) squaredResiduals(m, n, r, complex, aData, bi * m * n, x, bi * n * r, bData, bi * m * r, residuals, bi * r);
        return true;
      },
    },
  );
  out[0]!.dispose();
  out[2]!.dispose();
  let residuals = own[2];
  if (!withResiduals) {
    residuals?.dispose();
    residuals = Tensor.zeros(real, [0]);
  }
  return { solution: own[0] as Tensor<D>, residuals: residuals as Tensor<RealOf<D>>, rank: own[1] as Tensor<'i32'>, singularValues: out[1] as Tensor<RealOf<D>> };
}
