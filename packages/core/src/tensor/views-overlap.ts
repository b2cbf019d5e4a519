import { bufferAddress } from '../util/buffer-address.js';
import { DTYPE_INFO } from './dtype.js';
import { reachableSpan } from './layout.js';
import type { TensorDescriptor } from './tensor-descriptor.js';

/**
 * Whether the byte spans two views reach (first to last reachable element) share memory: of one
 * buffer, by offset; of two distinct buffer objects, by the addresses of their memory (two objects
 * can share one store — a buffer that went through `postMessage` and back). Without the OS binding
 * only identical objects are compared. Conservative: interleaved views that never touch the same
 * element still count as overlapping. Zero-size views overlap nothing.
 */
export function viewsOverlap(a: TensorDescriptor, b: TensorDescriptor): boolean {
  const sa = reachableSpan(a);
  const sb = reachableSpan(b);
  if (sa === undefined || sb === undefined) return false;
  const loA = sa.first * DTYPE_INFO[a.dtype].bytes;
  const hiA = (sa.last + 1) * DTYPE_INFO[a.dtype].bytes;
  const loB = sb.first * DTYPE_INFO[b.dtype].bytes;
  const hiB = (sb.last + 1) * DTYPE_INFO[b.dtype].bytes;
  if (a.buffer === b.buffer) return loA < hiB && loB < hiA;
  const baseA = bufferAddress(a.buffer);
  const baseB = bufferAddress(b.buffer);
  if (baseA === undefined || baseB === undefined || a.buffer.byteLength === 0 || b.buffer.byteLength === 0) return false;
  return baseA + loA < baseB + hiB && baseB + loB < baseA + hiA;
}
