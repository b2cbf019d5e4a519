import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, type RealOf, checkOptions, count, isComplex, matrix, realOf, signalOf, square } from '../support/arguments.js';
import { type PrimitiveResult, runLinalg } from '../support/run-linalg.js';
import { type Floats, floats, ints } from '../support/views.js';

/**
 * sign (unit phase, 0 when singular) and log|det| (−∞ when singular) per batch from an LU
 * factorisation (packed LU and 1-based pivots), written into `sign` and `logabs`.
 */
export function signAndLog(r: PrimitiveResult, n: number, nb: number, complex: boolean, sign: Floats, logabs: Floats): void {
  const f = floats(r.out[0]!), p = ints(r.out[1]!);
  for (let b = 0; b < nb; b++) {
    let sr = 1, si = 0, l = 0;
    for (let i = 0; i < n; i++) {
      if (p[b * n + i] !== i + 1) {
        sr = -sr;
        si = -si;
      }
      const at = b * n * n + i + i * n;
      const re = complex ? f[2 * at]! : f[at]!, im = complex ? f[2 * at + 1]! : 0;
      const mag = Math.hypot(re, im);
      if (mag === 0) {
        sr = 0;
        si = 0;
        l = -Infinity;
        break;
      }
      l += Math.log(mag);
      const ur = re / mag, ui = im / mag;
      [sr, si] = [sr * ur - si * ui, sr * ui + si * ur];
    }
    if (complex) {
      sign[2 * b] = sr;
      sign[2 * b + 1] = si;
    } else sign[b] = sr;
    logabs[b] = l;
  }
}

/** `linalg(target).slogdet`: `{ sign, logabsdet }` from `luFactor`, in one operation. */
export async function slogdet<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<{ sign: Tensor<D>; logabsdet: Tensor<RealOf<D>> }> {
  const op = 'linalg.slogdet';
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a);
  square(op, 'a', A);
  const n = A.shape[0]!, batch = A.shape.slice(2), nb = count(batch);
  const { out, own } = await runLinalg(target, op, signalOf(o), { op: 'luFactor', dtype: A.dtype, m: n, n, batch, flags: NO_FLAGS, a: A }, {
    outputs: [[A.dtype, batch], [realOf(A.dtype), batch]],
    finish: (r) => signAndLog(r, n, nb, isComplex(A.dtype), floats(r.own[0]!), floats(r.own[1]!)),
  });
  for (const t of out) t?.dispose();
  return { sign: own[0] as Tensor<D>, logabsdet: own[1] as Tensor<RealOf<D>> };
}
