import { type Tensor, TenferroError } from '@tenferro/core';
import { type SvdFactors, applyPseudoInverse, invertAbove } from '../pseudo-inverse.js';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, bool, checkOptions, count, epsOf, isComplex, matrix, signalOf, square } from '../support/arguments.js';
import { type PrimitiveResult, runLinalg } from '../support/run-linalg.js';
import { floats } from '../support/views.js';

/**
 * `linalg(target).pinv`: the Moore–Penrose pseudo-inverse (n×m per batch) from the thin SVD (or,
 * `hermitian`, from `eigh` of the lower triangle), computed in the same operation.
 */
export async function pinv<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions & { readonly atol?: number; readonly rtol?: number; readonly hermitian?: boolean }): Promise<Tensor<D>> {
  const op = 'linalg.pinv';
  const o = checkOptions(op, options, ['signal', 'atol', 'rtol', 'hermitian']);
  for (const key of ['atol', 'rtol'] as const) {
    const v = o[key];
    if (v !== undefined && (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v))) throw TenferroError.invalidArgument(op, `options.${key}`, 'a finite non-negative number', v);
  }
  const hermitian = bool(op, o, 'hermitian', false);
  const A = matrix(op, 'a', a);
  if (hermitian) square(op, 'a', A);
  const [m, n] = [A.shape[0]!, A.shape[1]!], k = Math.min(m, n), batch = A.shape.slice(2);
  const atol = (o.atol as number | undefined) ?? 0;
  const rtol = (o.rtol as number | undefined) ?? (o.atol !== undefined && atol > 0 ? 0 : epsOf(A.dtype) * Math.max(m, n));
  const complex = isComplex(A.dtype), c = complex ? 2 : 1;
  const factors = (r: PrimitiveResult, nb: number): SvdFactors => {
    if (!hermitian) return { m, n, k, complex, u: floats(r.out[0]!), s: floats(r.out[1]!), vh: floats(r.out[2]!) };
    // eigh: A = V diag(w) Vᴴ, so U = V, s = w (signed: |w| decides) and Vᴴ the conjugate transpose of V.
    const v = floats(r.out[1]!), w = floats(r.out[0]!);
    const vh = new (v.constructor as Float64ArrayConstructor)(v.length);
    for (let bi = 0; bi < nb; bi++)
      for (let j = 0; j < n; j++)
        for (let i = 0; i < n; i++) {
          const from = c * (bi * n * n + i + j * n), to = c * (bi * n * n + j + i * n);
          vh[to] = v[from]!;
          if (complex) vh[to + 1] = -v[from + 1]!;
        }
    return { m, n, k, complex, u: v, s: w, vh };
  };
  const primitive = hermitian
    ? ({ op: 'eigh', flags: { ...NO_FLAGS, vectors: true }, failure: 'NoConvergence' } as const)
    : ({ op: 'svd', flags: { ...NO_FLAGS, full: false, vectors: true }, failure: 'NoConvergence' } as const);
  const { out, own } = await runLinalg(target, op, signalOf(o), { ...primitive, dtype: A.dtype, m, n, batch, a: A }, {
    outputs: [[A.dtype, [n, m, ...batch]]],
    finish: (r) => {
      const x = floats(r.own[0]!), nb = count(batch);
      const f = factors(r, nb);
      const eye = new Float64Array(c * m * m);
      for (let i = 0; i < m; i++) eye[c * (i + i * m)] = 1;
      for (let bi = 0; bi < nb; bi++) {
        let smax = 0;
        for (let l = 0; l < k; l++) smax = Math.max(smax, Math.abs(f.s[bi * k + l]!));
        const { inv } = invertAbove(f.s, bi * k, k, Math.max(atol, rtol * smax));
        applyPseudoInverse(f, bi, inv, eye, 0, m, x, bi * n * m);
      }
    },
  });
  for (const t of out) t?.dispose();
  return own[0] as Tensor<D>;
}
