/**
 * Tasks of one request: the descriptor words (DESC in native/binding.ts) of the whole request, and
 * its split into parts for the worker pool. A part is a sub-view: the same descriptor with one
 * axis narrowed to a range and every operand's offset moved to the range's start, so the native
 * code needs no notion of parts and re-checks each one like a whole request. Parts never share an
 * output element: element-wise tasks split an axis of the output, reductions a kept axis.
 */
import { DTYPE_INFO, type DType, type Scalar, type TensorDescriptor } from '@tenferro/core';
import { DESC, DTYPE_CODE } from './native/binding.js';

export interface TaskShape {
  readonly kind: number;
  readonly op: number;
  readonly din: DType;
  readonly dout: DType;
  /** The iteration shape: the output's (element-wise) or the source's (reduction). */
  readonly shape: readonly number[];
  readonly out: TensorDescriptor;
  readonly a: TensorDescriptor;
  readonly b?: TensorDescriptor;
  /** Reductions: the reduced axes. */
  readonly reduced?: ReadonlySet<number>;
  readonly alpha?: Scalar;
  /** ISA id (-1: the process's best). */
  readonly isa: number;
}

/** The descriptor of the whole task. */
export function describe(t: TaskShape): Float64Array {
  const rank = t.shape.length;
  const d = new Float64Array(DESC.HEADER + 4 * rank);
  d[DESC.kind] = t.kind;
  d[DESC.op] = t.op;
  d[DESC.din] = DTYPE_CODE[t.din];
  d[DESC.dout] = DTYPE_CODE[t.dout];
  d[DESC.rank] = rank;
  const alpha = t.alpha ?? 0;
  d[DESC.alphaRe] = typeof alpha === 'number' ? alpha : alpha[0];
  d[DESC.alphaIm] = typeof alpha === 'number' ? 0 : alpha[1];
  d[DESC.isa] = t.isa;
  d[DESC.offOut] = t.out.offset;
  d[DESC.offA] = t.a.offset;
  d[DESC.offB] = t.b?.offset ?? 0;
  for (let i = 0; i < rank; i++) {
    d[DESC.HEADER + i] = t.shape[i]!;
    d[DESC.HEADER + rank + i] = t.out.strides[i]!;
    d[DESC.HEADER + 2 * rank + i] = t.a.strides[i]!;
    d[DESC.HEADER + 3 * rank + i] = t.b !== undefined ? t.b.strides[i]! : t.reduced?.has(i) ? 1 : 0;
  }
  return d;
}

/** `count` near-equal contiguous ranges of `[0, extent)`, empty ones dropped. */
export function splitRange(extent: number, count: number): [number, number][] {
  const parts = Math.max(1, Math.min(count, extent));
  const out: [number, number][] = [];
  let at = 0;
  for (let p = 0; p < parts; p++) {
    const take = Math.floor(extent / parts) + (p < extent % parts ? 1 : 0);
    if (take > 0) out.push([at, at + take]);
    at += take;
  }
  return out;
}

/**
 * The axis to split over `lanes` workers, or -1: element-wise, the output's outermost axis (largest
 * stride) of extent ≥ 2; reductions, the kept axis with the source's largest stride.
 */
export function splitAxis(t: TaskShape): number {
  let best = -1;
  for (let i = 0; i < t.shape.length; i++) {
    if (t.shape[i]! < 2 || t.reduced?.has(i)) continue;
    const key = t.reduced !== undefined ? t.a.strides[i]! : t.out.strides[i]!;
    const bestKey = best < 0 ? -1 : t.reduced !== undefined ? t.a.strides[best]! : t.out.strides[best]!;
    if (key > bestKey) best = i;
  }
  return best;
}

/** The descriptors of the parts of `whole` (described from `t`): one per range of `axis`. */
export function partDescriptors(t: TaskShape, whole: Float64Array, axis: number, lanes: number): Float64Array[] {
  return splitRange(t.shape[axis]!, lanes).map(([lo, hi]) => {
    const d = whole.slice();
    d[DESC.HEADER + axis] = hi - lo;
    d[DESC.offOut] = t.out.offset + lo * t.out.strides[axis]!;
    d[DESC.offA] = t.a.offset + lo * t.a.strides[axis]!;
    if (t.b !== undefined) d[DESC.offB] = t.b.offset + lo * t.b.strides[axis]!;
    return d;
  });
}

/** Elements the task visits (the product of its iteration shape). */
export function elementsOf(shape: readonly number[]): number {
  return shape.reduce((n, e) => n * e, 1);
}

/** Bytes of one element of `dtype`. */
export function bytesOf(dtype: DType): number {
  return DTYPE_INFO[dtype].bytes;
}
