import { TenferroError } from '../errors/tenferro-error.js';

/**
 * A fresh zeroed `SharedArrayBuffer` of `bytes`, or a typed error instead of V8's `RangeError`:
 * `IntegerOverflow` when the size is not a representable byte count, `AllocationFailed` when the
 * memory cannot be had. Nothing has been touched either way.
 */
export function allocateShared(bytes: number, op: string): SharedArrayBuffer {
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    throw new TenferroError('IntegerOverflow', `a buffer of ${bytes} bytes cannot be represented`, { op, detail: { bytes } });
  }
  try {
    return new SharedArrayBuffer(bytes);
  } catch (e) {
    throw new TenferroError('AllocationFailed', `could not allocate ${bytes} bytes of shared memory: ${e instanceof Error ? e.message : String(e)}`, {
      op,
      cause: e,
      detail: { bytes },
    });
  }
}
