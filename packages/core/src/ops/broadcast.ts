import { TenferroError } from '../errors/tenferro-error.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';

/**
 * tenferro's broadcasting rule. Operands of different rank are aligned at their LEADING axes: the
 * shorter one gets size-1 axes appended (tenferro is column-major with batch axes trailing, so a
 * matrix `[m, n]` meets a batch of matrices `[m, n, b]` axis for axis, and a column vector `[m]`
 * broadcasts along the columns of `[m, n]`). Then, axis by axis, equal extents stay, and an extent
 * of 1 stretches to the other's (stride 0). Anything else is `ShapeMismatch`.
 */
export function broadcastShapes(op: string, a: readonly number[], b: readonly number[], names: readonly [string, string] = ['lhs', 'rhs']): number[] {
  const rank = Math.max(a.length, b.length);
  const out = new Array<number>(rank);
  for (let t = 0; t < rank; t++) {
    const x = a[t] ?? 1;
    const y = b[t] ?? 1;
    if (x !== y && x !== 1 && y !== 1) {
      throw new TenferroError('ShapeMismatch', `${names[0]} shape [${a.join(', ')}] and ${names[1]} shape [${b.join(', ')}] do not broadcast: axis ${t} has extents ${x} and ${y} (operands align at their leading axes)`, {
        op,
        detail: { kind: 'Broadcast', lhs: [...a], rhs: [...b], axis: t },
      });
    }
    out[t] = x === 1 ? y : x;
  }
  return out;
}

/** Whether `from` broadcasts to exactly `to` (leading alignment, size-1 axes stretch). */
export function broadcastsTo(from: readonly number[], to: readonly number[]): boolean {
  if (from.length > to.length) return false;
  return from.every((e, t) => e === to[t] || e === 1);
}

/** `d` viewed with `shape` (which it broadcasts to): stretched and appended axes get stride 0. */
export function broadcastDescriptor(d: TensorDescriptor, shape: readonly number[]): TensorDescriptor {
  const strides = shape.map((e, t) => (t < d.shape.length && d.shape[t] === e ? d.strides[t]! : 0));
  return Object.freeze({ dtype: d.dtype, shape: Object.freeze([...shape]), strides: Object.freeze(strides), offset: d.offset, buffer: d.buffer });
}
