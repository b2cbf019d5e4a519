import type { DotGeneralDims } from '../contraction/validate-dot-general.js';
import { DTYPE_INFO } from '../tensor/dtype.js';
import type { Tensor } from '../tensor/tensor.js';

/**
 * The oracle: dot-general by definition on logical elements (no GEMM planning, no strides
 * beyond `toArray`), in float64 arithmetic. Returns interleaved `[re, im]` values for complex
 * dtypes, in column-major order of the output shape `[lhs free…, rhs free…, batch…]`.
 *
 * @example
 * ```ts
 * import { Tensor } from '@tenferro/core';
 * import { naiveDotGeneral } from '@tenferro/core/testing';
 *
 * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4], { order: 'row' });
 * const { shape, values } = naiveDotGeneral(a, a, { contracting: [[1], [0]] }); // a·a, column-major values
 * console.log(shape, values); // prints: [ 2, 2 ] [ 7, 15, 10, 22 ]
 * ```
 */
export function naiveDotGeneral(lhs: Tensor, rhs: Tensor, dims: DotGeneralDims, options: { conjLhs?: boolean; conjRhs?: boolean } = {}): { shape: number[]; values: number[] } {
  const complex = DTYPE_INFO[lhs.dtype].complex;
  const [lc, rc] = dims.contracting;
  const [lb, rb] = dims.batch ?? [[], []];
  const lf = lhs.shape.map((_, i) => i).filter((i) => !lc.includes(i) && !lb.includes(i));
  const rf = rhs.shape.map((_, i) => i).filter((i) => !rc.includes(i) && !rb.includes(i));
  const L = (lhs.toArray({ order: 'col' }) as number[]).map(Number);
  const R = (rhs.toArray({ order: 'col' }) as number[]).map(Number);
  const lanes = complex ? 2 : 1;
  const colStrides = (shape: readonly number[]) => shape.map((_, i) => shape.slice(0, i).reduce((p, e) => p * e, 1));
  const ls = colStrides(lhs.shape);
  const rs = colStrides(rhs.shape);
  const outShape = [...lf.map((a) => lhs.shape[a]!), ...rf.map((a) => rhs.shape[a]!), ...lb.map((a) => lhs.shape[a]!)];
  const kShape = lc.map((a) => lhs.shape[a]!);
  const outSize = outShape.reduce((p, e) => p * e, 1);
  const kSize = kShape.reduce((p, e) => p * e, 1);
  const values = new Array<number>(outSize * lanes).fill(0);
  const unravel = (i: number, shape: readonly number[]) =>
    shape.map((e) => {
      const v = i % e;
      i = Math.floor(i / e);
      return v;
    });
  // Element offsets (in the operands' column-major order) of every contracted index, once.
  const lk = new Array<number>(kSize);
  const rk = new Array<number>(kSize);
  for (let q = 0; q < kSize; q++) {
    const ki = unravel(q, kShape);
    lk[q] = lc.reduce((acc, a, j) => acc + ki[j]! * ls[a]!, 0);
    rk[q] = rc.reduce((acc, a, j) => acc + ki[j]! * rs[a]!, 0);
  }
  for (let o = 0; o < outSize; o++) {
    const oi = unravel(o, outShape);
    let lBase = 0;
    let rBase = 0;
    lf.forEach((a, j) => (lBase += oi[j]! * ls[a]!));
    rf.forEach((a, j) => (rBase += oi[lf.length + j]! * rs[a]!));
    lb.forEach((a, j) => {
      const v = oi[lf.length + rf.length + j]!;
      lBase += v * ls[a]!;
      rBase += v * rs[rb[j]!]!;
    });
    let re = 0;
    let im = 0;
    for (let q = 0; q < kSize; q++) {
      const lp = (lBase + lk[q]!) * lanes;
      const rp = (rBase + rk[q]!) * lanes;
      if (!complex) {
        re += L[lp]! * R[rp]!;
        continue;
      }
      const ar = L[lp]!;
      const ai = options.conjLhs ? -L[lp + 1]! : L[lp + 1]!;
      const br = R[rp]!;
      const bi = options.conjRhs ? -R[rp + 1]! : R[rp + 1]!;
      re += ar * br - ai * bi;
      im += ar * bi + ai * br;
    }
    values[o * lanes] = re;
    if (complex) values[o * lanes + 1] = im;
  }
  return { shape: outShape, values };
}

/**
 * Relative tolerance by dtype for results against the oracle.
 *
 * @example
 * ```ts
 * import { toleranceFor } from '@tenferro/core/testing';
 *
 * console.log(toleranceFor('f32'), toleranceFor('f64')); // prints: 0.0002 1e-10
 * ```
 */
export function toleranceFor(dtype: string): number {
  return dtype === 'f32' || dtype === 'c64' ? 2e-4 : 1e-10;
}

/**
 * Largest error of `actual` against `expected`, relative to the largest magnitude of `expected` (and 1).
 *
 * @example
 * ```ts
 * import { relativeError, toleranceFor } from '@tenferro/core/testing';
 *
 * const err = relativeError([1, 2.000001, 4], [1, 2, 4]); // scaled by the largest magnitude, 4
 * console.log(err < toleranceFor('f32'), relativeError([1], [1, 2])); // prints: true Infinity
 * ```
 */
export function relativeError(actual: readonly number[], expected: readonly number[]): number {
  let scale = 1;
  for (const v of expected) scale = Math.max(scale, Math.abs(v));
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    const err = Number.isNaN(a) !== Number.isNaN(e) ? Infinity : Number.isNaN(a) ? 0 : Math.abs(a - e) / scale;
    worst = Math.max(worst, err);
  }
  return actual.length === expected.length ? worst : Infinity;
}
