/**
 * Typed views of the descriptors `runExtension` hands an operation (#35: never `Tensor.buffer`):
 * fresh outputs are dense, column-major and batch-contiguous from their offset; inputs may be
 * strided and are gathered when the host needs them dense.
 */
import type { TensorDescriptor } from '@tenferro/core';
import type { LinalgOperand } from '../contract/index.js';

export type Floats = Float32Array | Float64Array;

const single = (dtype: string): boolean => dtype === 'f32' || dtype === 'c64';
const lanes = (dtype: string): number => (dtype === 'c64' || dtype === 'c128' ? 2 : 1);
const size = (shape: readonly number[]): number => shape.reduce((p, e) => p * e, 1);

/** The components (complex: interleaved re, im) of a dense float descriptor, from its offset. */
export function floats(d: TensorDescriptor): Floats {
  const c = lanes(d.dtype), n = size(d.shape) * c;
  return single(d.dtype) ? new Float32Array(d.buffer, d.offset * 4 * c, n) : new Float64Array(d.buffer, d.offset * 8 * c, n);
}

/** The elements of a dense i32 descriptor, from its offset. */
export function ints(d: TensorDescriptor): Int32Array {
  return new Int32Array(d.buffer, d.offset * 4, size(d.shape));
}

/** A dense column-major, batch-contiguous copy of a (possibly strided) float descriptor's components, on the heap. */
export function gather(d: TensorDescriptor): Floats {
  const c = lanes(d.dtype), rank = d.shape.length, total = size(d.shape);
  const src = single(d.dtype) ? new Float32Array(d.buffer) : new Float64Array(d.buffer);
  const out = single(d.dtype) ? new Float32Array(total * c) : new Float64Array(total * c);
  const index = new Array<number>(rank).fill(0);
  for (let k = 0; k < total; k++) {
    let at = d.offset;
    for (let t = 0; t < rank; t++) at += index[t]! * d.strides[t]!;
    for (let l = 0; l < c; l++) out[k * c + l] = src[at * c + l]!;
    for (let t = 0; t < rank; t++) {
      if (++index[t]! < d.shape[t]!) break;
      index[t] = 0;
    }
  }
  return out;
}

/** A matrix stack operand (`LinalgRequest.a`, `.b`) over a descriptor: its offset and strides as they are. */
export function operand(d: TensorDescriptor): LinalgOperand {
  return Object.freeze({ buffer: d.buffer, offset: d.offset, rowStride: d.strides[0]!, colStride: d.strides[1]!, batchStrides: Object.freeze(d.strides.slice(2)) });
}

/** Write the m×m identity into a dense fresh descriptor (every element: it may hold what the storage last held). */
export function writeIdentity(d: TensorDescriptor, m: number): void {
  const v = floats(d), c = lanes(d.dtype);
  v.fill(0);
  for (let i = 0; i < m; i++) v[c * (i + i * m)] = 1;
}
