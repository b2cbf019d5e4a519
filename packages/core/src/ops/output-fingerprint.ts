import { DTYPE_INFO } from '../tensor/dtype.js';
import { reachableSpan } from '../tensor/layout.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';

/**
 * A 64-bit fingerprint (two independent 32-bit multiplicative hashes) of the bytes an output view
 * spans: any write a provider makes inside the span changes it with overwhelming probability.
 * Taken around a provider call that declines, it shows whether the provider wrote first (R106).
 */
export function fingerprint(out: TensorDescriptor): string {
  const span = reachableSpan(out);
  if (span === undefined) return '';
  const bytes = DTYPE_INFO[out.dtype].bytes;
  const start = span.first * bytes;
  const end = (span.last + 1) * bytes;
  const first = start - (start % 4);
  const whole = Math.floor((end - first) / 4);
  const words = new Uint32Array(out.buffer, first, whole);
  const tail = new Uint8Array(out.buffer, first + whole * 4, end - first - whole * 4);
  let h1 = 0x811c9dc5;
  let h2 = 0x9e3779b9;
  const mix = (w: number) => {
    h1 = Math.imul(h1 ^ w, 0x01000193);
    h2 = Math.imul(h2 + w, 0x85ebca6b) ^ (h2 >>> 13);
  };
  for (let i = 0; i < words.length; i++) mix(words[i]!);
  for (let i = 0; i < tail.length; i++) mix(tail[i]!);
  return `${(h1 >>> 0).toString(16)}:${(h2 >>> 0).toString(16)}`;
}
