import { allocateStorage, STORAGE_ALIGNMENT } from './storage-alignment.js';

/**
 * Fresh storage below 2 MiB is carved from shared slabs (#38). A loop that drops its outputs gets
 * their storage back only through collections, so until the first ones (~2,000 calls of a 64² f64
 * loop when only full collections brought storage home, before death tokens) every output is
 * fresh. As a `SharedArrayBuffer` of its own, each fresh output cost the main thread its
 * allocation and the engine worker a message to learn the buffer (its buffer table,
 * `runtime/workers/buffer-table.ts`), and the kernel a page fault per 4 KiB (~10 µs each on
 * a microVM): a 64² loop dropping its outputs ran 130–230 µs a call for those 2,000 calls, against
 * 10–15 µs disposing them, and a 256² f64 output's 128 faults cost more than its kernel. Carved
 * from a slab of whole huge pages — placed and advised for transparent huge pages like any large
 * storage (`huge-pages.ts`) — a fresh output below 2 MiB costs a few additions: the worker learns
 * the slab once, and the slab's memory faults in a huge page at a time.
 *
 * A block is never split or merged: it goes back to its pool as storage of its own size, and the
 * pool lends it again like any retained buffer (best fit, R111). A slab's memory is freed when
 * nothing names it any more — no tensor over one of its blocks, no block retained by the pool;
 * a block the pool evicts (R113) while its slab is still in use frees nothing by itself, as with
 * any allocator. Like Node's own pooled `Buffer`s, the `SharedArrayBuffer` of a small output
 * (`tensor.buffer`) can be shared with other tensors: the output's data is what `offset`,
 * `shape` and `strides` address in it.
 */

/** Bytes of a slab small storage is carved from: one huge page. */
export const SLAB_BYTES = 2 * 1024 * 1024;

/** Storage of at most this many bytes (after padding) is carved from {@link SLAB_BYTES} slabs. */
export const SLAB_BLOCK_MAX_BYTES = 256 * 1024;

/** Bytes of a slab larger storage below a huge page is carved from: four huge pages. */
export const WIDE_SLAB_BYTES = 8 * 1024 * 1024;

/**
 * Storage of more than {@link SLAB_BLOCK_MAX_BYTES} and at most this many bytes is carved from
 * {@link WIDE_SLAB_BYTES} slabs (four blocks at least); larger storage gets a buffer of its own —
 * from 2 MiB of data on, placed on huge pages itself (`huge-pages.ts`).
 */
export const WIDE_SLAB_BLOCK_MAX_BYTES = 2 * 1024 * 1024 - STORAGE_ALIGNMENT;

/** The part of a buffer one storage holds: `bytes` bytes from byte `start` (the whole buffer unless carved from a slab). */
export interface StorageBlock {
  readonly buffer: SharedArrayBuffer;
  readonly start: number;
  readonly bytes: number;
}

/** Slabs, and the bytes of each that blocks are carved from (the rest places them on huge pages). */
const slabs = new WeakMap<SharedArrayBuffer, number>();

/** Whether `buffer` is a slab that storage is carved from (it is never lent, adopted or returned as a whole). */
export function isSlab(buffer: SharedArrayBuffer): boolean {
  return slabs.has(buffer);
}

/** The bytes of slab `buffer` that blocks are carved from ({@link SLAB_BYTES} or {@link WIDE_SLAB_BYTES}), or undefined for a buffer that is no slab. */
export function slabBytes(buffer: SharedArrayBuffer): number | undefined {
  return slabs.get(buffer);
}

/** The whole of `buffer` as a block. */
export function wholeBlock(buffer: SharedArrayBuffer): StorageBlock {
  return { buffer, start: 0, bytes: buffer.byteLength };
}

/** Bytes a carved block of `bytes` takes: whole 64-byte lines, so that every block starts on one. */
export function blockBytes(bytes: number): number {
  return Math.ceil(Math.max(bytes, 1) / STORAGE_ALIGNMENT) * STORAGE_ALIGNMENT;
}

/**
 * A pool carves storage from slabs of a size only while its cap (R113) holds this many of them:
 * a pool capped lower keeps a buffer per loan, so that a cap of a few MiB (or 0) is not exceeded
 * by the slabs its loans keep alive.
 */
export const SLABS_PER_CAP = 4;

/** The bytes of the slabs storage of `bytes` (after padding) is carved from, or 0 when it gets a buffer of its own. */
export function slabBytesFor(bytes: number): number {
  return bytes <= SLAB_BLOCK_MAX_BYTES ? SLAB_BYTES : bytes <= WIDE_SLAB_BLOCK_MAX_BYTES ? WIDE_SLAB_BYTES : 0;
}

/** Whether storage of `bytes` (after padding) is carved from a slab by a pool capped at `capBytes`. */
export function carvable(bytes: number, capBytes = Infinity): boolean {
  const slab = slabBytesFor(bytes);
  return slab > 0 && capBytes >= SLABS_PER_CAP * slab;
}

/** The slab a pool carves one class of blocks from, and where its next block starts. */
interface Cursor {
  buffer: SharedArrayBuffer | undefined;
  next: number;
  end: number;
}

/**
 * Carves fresh blocks, one after the other, from the current slab of their class — blocks of at
 * most {@link SLAB_BLOCK_MAX_BYTES} from {@link SLAB_BYTES} slabs, larger ones from
 * {@link WIDE_SLAB_BYTES} slabs — for one pool; a block that does not fit in what is left of its
 * slab starts a new one (the rest of the old one, less than a block, is never used).
 */
export class SlabCarver {
  readonly #small: Cursor = { buffer: undefined, next: 0, end: 0 };
  readonly #wide: Cursor = { buffer: undefined, next: 0, end: 0 };
  /** Slabs made so far. */
  #made = 0;

  /** A fresh block of {@link blockBytes}(`bytes`) bytes (`bytes` {@link carvable}); `AllocationFailed` as `allocateStorage`. */
  carve(bytes: number, op: string): StorageBlock {
    const size = blockBytes(bytes);
    const length = slabBytesFor(size);
    const cursor = length === SLAB_BYTES ? this.#small : this.#wide;
    if (cursor.buffer === undefined || cursor.next + size > cursor.end) {
      const { buffer, skip } = allocateStorage(length, 1, op);
      slabs.set(buffer, length);
      cursor.buffer = buffer;
      cursor.next = skip;
      cursor.end = skip + length;
      this.#made += 1;
    }
    const block = { buffer: cursor.buffer, start: cursor.next, bytes: size };
    cursor.next += size;
    return block;
  }

  /** Slabs made so far. */
  get slabs(): number {
    return this.#made;
  }

  /** Carve from new slabs next time (the pool closed or reset: the current slabs go when their blocks do). */
  reset(): void {
    for (const cursor of [this.#small, this.#wide]) {
      cursor.buffer = undefined;
      cursor.next = 0;
      cursor.end = 0;
    }
  }
}
