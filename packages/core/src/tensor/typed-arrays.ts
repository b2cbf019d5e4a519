/** Conversions between typed arrays and tensor storage (`Tensor.from`, `toTypedArray`). */
import { invalidArgument } from '../errors/tenferro-error.js';
import { DTYPE_INFO, type DType, isDType } from './dtype.js';
import { type DenseOrder, isDenseLayout } from './layout.js';
import { componentView } from './tensor-data.js';

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
  } else {
    copyStrided(view as Float64Array, out as Float64Array, shape, strides, offset, order, info.components);
  }
  if (dtype === 'bool') for (let i = 0; i < out.length; i++) (out as Uint8Array)[i] = out[i] === 0 ? 0 : 1;
  return out;
}

/**
 * The elements of a strided view, in `order`, into `out` (dense): a tight loop along the axis that
 * varies fastest in `order` (the first for column-major, the last for row-major), an odometer over
 * the others. `components` is 2 for interleaved complex values.
 */
function copyStrided(view: Float64Array, out: Float64Array, shape: readonly number[], strides: readonly number[], offset: number, order: DenseOrder, components: number): void {
  const rank = shape.length;
  // Axes from fastest to slowest in `order`.
  const axes = Array.from({ length: rank }, (_, k) => (order === 'col' ? k : rank - 1 - k));
  const inner = axes[0]!;
  const n = shape[inner]!;
  const step = strides[inner]! * components;
  const outer = axes.slice(1);
  const index = new Array<number>(outer.length).fill(0);
  let at = offset * components;
  let i = 0;
  for (;;) {
    if (components === 2) {
      for (let j = 0, p = at; j < n; j++, p += step) {
        out[i++] = view[p]!;
        out[i++] = view[p + 1]!;
      }
    } else {
      for (let j = 0, p = at; j < n; j++, p += step) out[i++] = view[p]!;
    }
    let k = 0;
    for (; k < outer.length; k++) {
      const axis = outer[k]!;
      if (++index[k]! < shape[axis]!) {
        at += strides[axis]! * components;
        break;
      }
      at -= (shape[axis]! - 1) * strides[axis]! * components;
      index[k] = 0;
    }
    if (k === outer.length) return;
  }
}
