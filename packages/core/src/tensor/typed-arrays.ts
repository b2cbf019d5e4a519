/** Conversions between typed arrays and tensor storage (`Tensor.from`, `toTypedArray`). */
import { invalidArgument } from '../errors/tenferro-error.js';
import { DTYPE_INFO, type DType, isDType } from './dtype.js';
import { type DenseOrder, isDenseLayout } from './layout.js';
import { componentView, forEachOffset } from './tensor-data.js';

/** The dtypes each typed array type can hold. */
const DTYPES_OF: ReadonlyArray<readonly [Function, readonly DType[]]> = [
  [Float64Array, ['f64', 'c128']],
  [Float32Array, ['f32', 'c64']],
  [Int32Array, ['i32']],
  [BigInt64Array, ['i64']],
  [Uint8Array, ['bool']],
];

/** The dtype of a `Tensor.from` source: `wanted` when the array type can hold it, else the array type's own. */
export function typedArrayDType(data: unknown, wanted: unknown, op: string): DType {
  const entry = DTYPES_OF.find(([Ctor]) => data instanceof Ctor);
  if (entry === undefined) throw invalidArgument(op, 'data', 'a Float64Array, Float32Array, Int32Array, BigInt64Array or Uint8Array', data);
  if (wanted === undefined) return entry[1][0]!;
  if (!isDType(wanted) || !entry[1].includes(wanted)) {
    throw invalidArgument(op, 'options.dtype', `a dtype a ${(entry[0] as { name: string }).name} holds (${entry[1].join(' or ')})`, wanted);
  }
  return wanted;
}

/** A dense copy of a view's elements in `order` as the dtype's typed array (complex interleaved, bool as 0/1). */
export function copyDense(dtype: DType, buffer: SharedArrayBuffer, shape: readonly number[], strides: readonly number[], offset: number, order: DenseOrder): ArrayBufferView {
  const info = DTYPE_INFO[dtype];
  const size = shape.reduce((a, b) => a * b, 1);
  const Ctor = info.array as unknown as new (length: number) => Float64Array | Float32Array | Int32Array | BigInt64Array | Uint8Array;
  const out = new Ctor(size * info.components);
  if (size === 0) return out;
  const view = componentView(dtype, buffer);
  if (isDenseLayout(shape, strides, order)) {
    // One contiguous block in the requested order: a single copy.
    const start = offset * info.components;
    (out as Float64Array).set((view as Float64Array).subarray(start, start + size * info.components));
  } else if (info.components === 2) {
    let i = 0;
    forEachOffset(shape, strides, offset, order, (at) => {
      (out as Float64Array)[i++] = (view as Float64Array)[2 * at]!;
      (out as Float64Array)[i++] = (view as Float64Array)[2 * at + 1]!;
    });
  } else {
    let i = 0;
    forEachOffset(shape, strides, offset, order, (at) => {
      (out as Float64Array)[i++] = (view as Float64Array)[at]!;
    });
  }
  if (dtype === 'bool') for (let i = 0; i < out.length; i++) (out as Uint8Array)[i] = out[i] === 0 ? 0 : 1;
  return out;
}
