/**
 * Typed-array views of a descriptor's whole buffer, by dtype family, for the reference tensor
 * primitives. Offsets and strides are in elements; a complex element `e` is lanes `2e` (re) and
 * `2e + 1` (im) of the real view.
 */
import { DTYPE_INFO, type DType } from '../../tensor/dtype.js';

/** How the reference kernels compute on a dtype: JS numbers (floats, i32, bool), bigints (i64) or pairs of numbers (complex). */
export type Family = 'real' | 'i32' | 'i64' | 'bool' | 'complex';

export function familyOf(dtype: DType): Family {
  switch (dtype) {
    case 'f32':
    case 'f64':
      return 'real';
    case 'c64':
    case 'c128':
      return 'complex';
    default:
      return dtype;
  }
}

type LaneCtor = new (buffer: SharedArrayBuffer, byteOffset: number, length: number) => ArrayLike<number | bigint>;

/** The whole buffer as `dtype`'s lane array (length rounded down: never throws). */
export function numberLanes(dtype: DType, buffer: SharedArrayBuffer): Float32Array | Float64Array | Int32Array | Uint8Array {
  const array = DTYPE_INFO[dtype].array;
  return new (array as unknown as LaneCtor)(buffer, 0, Math.floor(buffer.byteLength / array.BYTES_PER_ELEMENT)) as Float32Array | Float64Array | Int32Array | Uint8Array;
}

export function bigintLanes(buffer: SharedArrayBuffer): BigInt64Array {
  return new BigInt64Array(buffer, 0, Math.floor(buffer.byteLength / 8));
}

/** Strides scaled to lanes (×2 for complex). */
export function laneStrides(dtype: DType, strides: readonly number[]): number[] {
  const c = DTYPE_INFO[dtype].components;
  return c === 1 ? [...strides] : strides.map((s) => s * c);
}
