import { type Tensor, TenferroError } from '@tenferro/core';
import { type F, type LinalgRunOptions, type LinalgTarget, NO_FLAGS, checkOptions, matrix, signalOf } from '../support/arguments.js';
import { runLinalg } from '../support/run-linalg.js';

/** `linalg(target).qr`: `{ q, r }` ('reduced', 'complete', or 'r': R only). R's diagonal real and ≥ 0. */
export async function qr<D extends F>(target: LinalgTarget, a: Tensor<D>, options?: LinalgRunOptions & { readonly mode?: 'reduced' | 'complete' | 'r' }): Promise<{ q: Tensor<D> | undefined; r: Tensor<D> }> {
  const op = 'linalg.qr';
  const o = checkOptions(op, options, ['signal', 'mode']);
  const mode = o.mode ?? 'reduced';
  if (mode !== 'reduced' && mode !== 'complete' && mode !== 'r') throw TenferroError.invalidArgument(op, 'options.mode', "'reduced', 'complete' or 'r'", mode);
  const A = matrix(op, 'a', a);
  const { out } = await runLinalg(target, op, signalOf(o), { op: 'qr', dtype: A.dtype, m: A.shape[0]!, n: A.shape[1]!, batch: A.shape.slice(2), flags: { ...NO_FLAGS, full: mode === 'complete', rOnly: mode === 'r' }, a: A });
  return { q: out[0] as Tensor<D> | undefined, r: out[1] as Tensor<D> };
}
