/**
 * Same-memory detection for SharedArrayBuffers: two distinct SharedArrayBuffer objects can share
 * one backing store (one sent to a worker with postMessage and back is a new object over the same
 * memory), so object identity cannot tell whether two buffers overlap. Their address ranges can.
 */
import { types } from 'node:util';
import { loadOs } from './load.js';
import { OsError, describeValue } from './os-error.js';

/** Where a SharedArrayBuffer's memory is: `[address, address + byteLength)` in this process. */
export interface SharedMemoryRange {
  /** The backing store's data pointer (0n for a zero-length buffer, which reaches no memory). */
  readonly address: bigint;
  /** The buffer's length in bytes (for a growable buffer: its length now). */
  readonly byteLength: number;
}

/** Buffers up to this many bytes are viewed whole to read their address. */
const MAX_WHOLE_VIEW = 2 ** 31;

/**
 * The address range of `buffer`'s backing store. Two SharedArrayBuffers share memory exactly when
 * their ranges intersect (and both are non-empty) — also when they are distinct objects, e.g. one
 * that went through `postMessage` to a worker and back. The address is valid only in this
 * process and only while some object keeps the memory alive.
 *
 * Throws `InvalidArgument` for anything but a real SharedArrayBuffer (a brand check, not
 * `instanceof`), `AffinityUnavailable` when the addon is not available.
 *
 * @example
 * ```ts
 * import { rangesOverlap, sharedMemoryRange } from '@tenferro/os';
 *
 * const buffer = new SharedArrayBuffer(64);
 * const range = sharedMemoryRange(buffer);
 * console.log(range.byteLength, typeof range.address); // prints: 64 bigint
 * console.log(rangesOverlap(range, sharedMemoryRange(new SharedArrayBuffer(64)))); // prints: false
 * ```
 */
export function sharedMemoryRange(buffer: SharedArrayBuffer): SharedMemoryRange {
  const op = 'sharedMemoryRange';
  if (!types.isSharedArrayBuffer(buffer)) {
    throw new OsError('InvalidArgument', op, `expected a SharedArrayBuffer for buffer but received ${describeValue(buffer)}`, { detail: { param: 'buffer' } });
  }
  const status = loadOs();
  if (!status.available) {
    throw new OsError('AffinityUnavailable', op, `the @tenferro/os addon is unavailable: ${status.reason}. Possible solutions: ${status.possibleSolutions.join('; ')}`, {
      detail: { reason: status.reason, reasons: [...status.reasons], possibleSolutions: [...status.possibleSolutions] },
    });
  }
  // A view of a buffer above the longest typed array (2^32 elements in Node 20) cannot be made
  // whole; its first byte has the same address.
  const view = buffer.byteLength <= MAX_WHOLE_VIEW ? new Uint8Array(buffer) : new Uint8Array(buffer, 0, 1);
  const range = status.binding.typedArrayRange(view);
  if (range === null || typeof range.address !== 'bigint' || range.byteLength !== view.byteLength) {
    // The binding answers for every Uint8Array; anything else means a mismatched build.
    throw new OsError('AffinityUnavailable', op, 'the @tenferro/os addon could not report the buffer\'s memory (rebuild the addon)', { detail: {} });
  }
  return Object.freeze({ address: range.address, byteLength: buffer.byteLength });
}

/**
 * Whether two ranges share at least one byte.
 *
 * @example
 * ```ts
 * import { rangesOverlap } from '@tenferro/os';
 *
 * const a = { address: 0x1000n, byteLength: 256 };
 * console.log(rangesOverlap(a, { address: 0x10f0n, byteLength: 16 })); // prints: true
 * console.log(rangesOverlap(a, { address: 0x1100n, byteLength: 16 })); // prints: false
 * console.log(rangesOverlap(a, { address: 0x1000n, byteLength: 0 })); // prints: false
 * ```
 */
export function rangesOverlap(a: SharedMemoryRange, b: SharedMemoryRange): boolean {
  if (a.byteLength === 0 || b.byteLength === 0) return false;
  return a.address < b.address + BigInt(b.byteLength) && b.address < a.address + BigInt(a.byteLength);
}

/**
 * Tell V8 that `deltaBytes` of memory outside its heap became (positive) or stopped being
 * (negative) owned by collectable JavaScript objects. V8 does not count SharedArrayBuffer backing
 * stores towards when to collect, so tenferro reports the storage of the tensors it hands out:
 * otherwise a loop that drops large outputs never triggers a collection. A no-op (answers
 * `undefined`) when the addon is unavailable; a delta that is not a safe integer is ignored.
 *
 * @example
 * ```ts
 * import { adjustExternalMemory } from '@tenferro/os';
 *
 * const storage = new SharedArrayBuffer(1 << 20);
 * const total = adjustExternalMemory(storage.byteLength); // V8 now counts the megabyte
 * console.log(total === undefined || total >= storage.byteLength); // prints: true
 * adjustExternalMemory(-storage.byteLength); // when the owner of the storage is collected
 * console.log(adjustExternalMemory(0.5)); // prints: undefined
 * ```
 */
export function adjustExternalMemory(deltaBytes: number): number | undefined {
  if (!Number.isSafeInteger(deltaBytes)) return undefined;
  const status = loadOs();
  return status.available ? status.binding.adjustExternalMemory(deltaBytes) : undefined;
}
