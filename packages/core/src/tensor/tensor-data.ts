/** Conversions between JavaScript arrays and tensor storage. Strides and offsets are in elements. */
import { describeValue, invalidArgument, TenferroError } from '../errors/tenferro-error.js';
import { DTYPE_INFO, type DType } from './dtype.js';
import type { DenseOrder } from './layout.js';

export type ComponentArray = Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array;

const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/** A typed array over every whole lane of `buffer` for `dtype` (two components per complex element). */
export function componentView(dtype: DType, buffer: SharedArrayBuffer): ComponentArray {
  const info = DTYPE_INFO[dtype];
  const elements = Math.floor(buffer.byteLength / info.bytes);
  const Ctor = info.array as unknown as new (buffer: SharedArrayBuffer, byteOffset: number, length: number) => ComponentArray;
  return new Ctor(buffer, 0, elements * info.components);
}

function isArrayLike(value: unknown): value is ArrayLike<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const length = (value as { length?: unknown }).length;
  return typeof length === 'number' && Number.isSafeInteger(length) && length >= 0;
}

function scalarOk(dtype: DType, v: unknown): boolean {
  switch (dtype) {
    case 'f32':
    case 'f64':
    case 'c64':
    case 'c128':
      return typeof v === 'number';
    case 'i32':
      return typeof v === 'number' && Number.isInteger(v) && v >= -2147483648 && v <= 2147483647;
    case 'i64':
      return typeof v === 'bigint' ? v >= I64_MIN && v <= I64_MAX : typeof v === 'number' && Number.isSafeInteger(v);
    case 'bool':
      return typeof v === 'boolean' || v === 0 || v === 1;
  }
}

const EXPECTED: Record<DType, string> = {
  f32: 'a number',
  f64: 'a number',
  c64: 'a number (interleaved re, im)',
  c128: 'a number (interleaved re, im)',
  i32: 'an integer in [-2^31, 2^31-1]',
  i64: 'a bigint in [-2^63, 2^63-1] or a safe integer',
  bool: 'a boolean, 0 or 1',
};

/** Validates `data` for `count` elements of `dtype` (length `count × components`, every scalar in range); allocates nothing. */
export function checkData(dtype: DType, data: unknown, count: number, op: string, param = 'data'): asserts data is ArrayLike<number | bigint | boolean> {
  if (!isArrayLike(data)) throw invalidArgument(op, param, 'an array or typed array', data);
  const components = DTYPE_INFO[dtype].components;
  const expected = count * components;
  if (data.length !== expected) {
    throw new TenferroError(
      'ShapeMismatch',
      `expected ${expected} ${components === 2 ? 'scalars (interleaved re, im)' : 'elements'} for ${param} but received ${data.length}`,
      { op, detail: { param, expected, actual: data.length } },
    );
  }
  // Float typed arrays hold only numbers: nothing to check for the float dtypes.
  if (DTYPE_INFO[dtype].float && (data instanceof Float64Array || data instanceof Float32Array)) return;
  for (let i = 0; i < expected; i++) {
    const v = data[i];
    if (!scalarOk(dtype, v)) {
      throw new TenferroError('InvalidArgument', `expected ${EXPECTED[dtype]} for ${param}[${i}] but received ${describeValue(v)}`, {
        op,
        detail: { param: `${param}[${i}]`, dtype },
      });
    }
  }
}

/** Copies checked `data` verbatim into the components of `buffer` from element `offset` on. */
export function writeData(dtype: DType, data: ArrayLike<number | bigint | boolean>, buffer: SharedArrayBuffer, offset = 0): void {
  const info = DTYPE_INFO[dtype];
  const Ctor = info.array as unknown as new (buffer: SharedArrayBuffer, byteOffset: number, length: number) => ComponentArray;
  const view = new Ctor(buffer, offset * info.bytes, Math.floor(buffer.byteLength / info.bytes - offset) * info.components);
  const n = data.length;
  if (view instanceof BigInt64Array) {
    for (let i = 0; i < n; i++) {
      const v = data[i]!;
      view[i] = typeof v === 'bigint' ? v : BigInt(v as number);
    }
  } else if (dtype === 'bool') {
    for (let i = 0; i < n; i++) view[i] = data[i] === true || data[i] === 1 ? 1 : 0;
  } else if (Array.isArray(data) || ArrayBuffer.isView(data)) {
    (view as Float64Array).set(data as ArrayLike<number>);
  } else {
    for (let i = 0; i < n; i++) view[i] = data[i] as number;
  }
}

/** Calls `visit(elementOffset)` for every index of the layout, the first axis fastest (`col`) or the last (`row`). */
export function forEachOffset(
  shape: readonly number[],
  strides: readonly number[],
  offset: number,
  order: DenseOrder,
  visit: (elementOffset: number) => void,
): void {
  const rank = shape.length;
  if (shape.includes(0)) return;
  const axes = Array.from({ length: rank }, (_, k) => (order === 'col' ? k : rank - 1 - k));
  const index = new Array<number>(rank).fill(0);
  let at = offset;
  for (;;) {
    visit(at);
    let k = 0;
    for (; k < rank; k++) {
      const axis = axes[k]!;
      if (++index[axis]! < shape[axis]!) {
        at += strides[axis]!;
        break;
      }
      at -= (shape[axis]! - 1) * strides[axis]!;
      index[axis] = 0;
    }
    if (k === rank) return;
  }
}

/** The logical elements of a view in `order`: complex interleaved, i64 as bigint, bool as 0/1. */
export function readElements(
  dtype: DType,
  buffer: SharedArrayBuffer,
  shape: readonly number[],
  strides: readonly number[],
  offset: number,
  order: DenseOrder,
): number[] | bigint[] {
  const view = componentView(dtype, buffer);
  if (view instanceof BigInt64Array) {
    const out: bigint[] = [];
    forEachOffset(shape, strides, offset, order, (at) => out.push(view[at]!));
    return out;
  }
  const out: number[] = [];
  if (DTYPE_INFO[dtype].components === 2) {
    forEachOffset(shape, strides, offset, order, (at) => out.push(view[2 * at]!, view[2 * at + 1]!));
  } else if (dtype === 'bool') {
    forEachOffset(shape, strides, offset, order, (at) => out.push(view[at] === 0 ? 0 : 1));
  } else {
    forEachOffset(shape, strides, offset, order, (at) => out.push(view[at]!));
  }
  return out;
}
