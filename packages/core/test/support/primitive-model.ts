// A naive per-element model of the tensor primitives, written independently of core's reference
// kernels: logical elements in column-major order (toArray), one scalar function per element.
import type { DType, Tensor } from '../../src/index.js';

export type Value = number | bigint | readonly [number, number];

const COMPLEX = new Set<DType>(['c64', 'c128']);

/** The elements of `t` in column-major order, complex as pairs. */
export function elements(t: Tensor): Value[] {
  const raw = t.toArray() as (number | bigint)[];
  if (!COMPLEX.has(t.dtype)) return raw;
  const out: Value[] = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i] as number, raw[i + 1] as number]);
  return out;
}

/** Column-major multi-index of linear position `p` in `shape`. */
export function unravel(p: number, shape: readonly number[]): number[] {
  const idx: number[] = [];
  for (const e of shape) {
    idx.push(p % e);
    p = Math.floor(p / e);
  }
  return idx;
}

export function ravel(idx: readonly number[], shape: readonly number[]): number {
  let p = 0;
  let step = 1;
  for (let t = 0; t < shape.length; t++) {
    p += (idx[t] ?? 0) * step;
    step *= shape[t]!;
  }
  return p;
}

/** Round a model value to how `dtype` stores it. */
export function store(dtype: DType, v: Value): Value {
  switch (dtype) {
    case 'f32':
      return Math.fround(v as number);
    case 'c64':
      return [Math.fround((v as [number, number])[0]), Math.fround((v as [number, number])[1])];
    case 'i32':
      return (v as number) | 0;
    case 'i64':
      return BigInt.asIntN(64, v as bigint);
    case 'bool':
      return (v as number) === 0 ? 0 : 1;
    default:
      return v;
  }
}

/** Equal as stored, NaN equal to NaN, +0 and −0 distinguished. */
export function same(a: Value, b: Value): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return Object.is(a[0], b[0]) && Object.is(a[1], b[1]);
  return Object.is(a, b);
}

/** Within `rel` of each other relative to max(1, |b|) (parts of complex values separately); NaN and infinities must match. */
export function close(a: Value, b: Value, rel: number): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return close(a[0], b[0], rel) && close(a[1], b[1], rel);
  const x = a as number;
  const y = b as number;
  if (Number.isNaN(y)) return Number.isNaN(x);
  if (!Number.isFinite(y)) return x === y;
  return Math.abs(x - y) <= rel * Math.max(1, Math.abs(y));
}
