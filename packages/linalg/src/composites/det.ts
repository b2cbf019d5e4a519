import type { Tensor } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, checkOptions, count, isComplex, matrix, signalOf, square } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';
import { floats } from '../support/views.js';
import { signAndLog } from './slogdet.js';

/** `linalg(target).det`: the determinant from `luFactor`, in one operation; shape = the batch axes. */
export async function det<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<D>> {
  const op = 'linalg.det';
  const o = checkOptions(op, options, ['signal']);
  const A = matrix(op, 'a', a);
  square(op, 'a', A);
  const n = A.shape[0]!, batch = A.shape.slice(2), nb = count(batch), complex = isComplex(A.dtype);
  const { out, own } = await runLinalg(target, op, signalOf(o), { op: 'luFactor', dtype: A.dtype, m: n, n, batch, flags: NO_FLAGS, a: A }, {
    outputs: [[A.dtype, batch]],
    finish: (r) => {
      const sign = new Float64Array(nb * (complex ? 2 : 1)), logabs = new Float64Array(nb);
      signAndLog(r, n, nb, complex, sign, logabs);
      const d = floats(r.own[0]!);
      for (let i = 0; i < nb; i++) {
        const mag = Math.exp(logabs[i]!);
        if (complex) {
          d[2 * i] = sign[2 * i]! * mag;
          d[2 * i + 1] = sign[2 * i + 1]! * mag;
        } else d[i] = sign[i]! * mag;
      }
    },
  });
  for (const t of out) t?.dispose();
  return own[0] as Tensor<D>;
}
