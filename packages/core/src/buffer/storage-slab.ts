import { allocateStorage, STORAGE_ALIGNMENT } from './storage-alignment.js';

/**
 * Small fresh storage is carved from shared slabs (#38). A loop that drops its small outputs gets
 * their storage back only through full collections, so until the first one (~2,000 calls of a
 * 64² f64 loop) every output is fresh. As a `SharedArrayBuffer` of its own, each fresh output cost
 * the main thread its allocation and the engine worker a message to learn the buffer (its buffer
 * table, `runtime/workers/buffer-table.ts`), and the kernel a page fault per 4 KiB: a 64² loop
 * dropping its outputs ran 146–207 µs a call for those 2,000 calls, against 10–13 µs disposing
 * them. Carved from a 2 MiB slab — placed and advised for a transparent huge page like any large
 * storage (`huge-pages.ts`) — a fresh small output costs a few additions: the worker learns the
 * slab once, and the slab's memory faults in once.
 *
 * A block is never split or merged: it goes back to its pool as storage of its own size, and the
 * pool lends it again like any retained buffer (best fit, R111). A slab's memory is freed when
 * nothing names it any more — no tensor over one of its blocks, no block retained by the pool;
 * a block the pool evicts (R113) while its slab is still in use frees nothing by itself, as with
 * any allocator. Like Node's own pooled `Buffer`s, the `SharedArrayBuffer` of a small output
 * (`tensor.buffer`) can be shared with other tensors: the output's data is what `offset`,
 * `shape` and `strides` address in it.
 */

/** Bytes of one slab: one huge page. */
export const SLAB_BYTES = 2 * 1024 * 1024;

/** Storage of at most this many bytes (after padding) is carved from slabs; larger storage gets a buffer of its own. */
export const SLAB_BLOCK_MAX_BYTES = 256 * 1024;

/** The part of a buffer one storage holds: `bytes` bytes from byte `start` (the whole buffer unless carved from a slab). */
export interface StorageBlock {
  readonly buffer: SharedArrayBuffer;
  readonly start: number;
  readonly bytes: number;
}

/** Buffers that are slabs: never storage as a whole. */
const slabs = new WeakSet<SharedArrayBuffer>();

/** Whether `buffer` is a slab that small storage is carved from (it is never lent, adopted or returned as a whole). */
export function isSlab(buffer: SharedArrayBuffer): boolean {
  return slabs.has(buffer);
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
 * Carves fresh blocks, one after the other, from the current slab of one pool; a block that does
 * not fit in what is left of it starts a new slab (the rest of the old one, at most
 * {@link SLAB_BLOCK_MAX_BYTES}, is never used).
 */
export class SlabCarver {
  #buffer: SharedArrayBuffer | undefined;
  #next = 0;
  #end = 0;
  /** Slabs made so far. */
  #made = 0;

  /** A fresh block of {@link blockBytes}(`bytes`) bytes (`bytes` ≤ {@link SLAB_BLOCK_MAX_BYTES}); `AllocationFailed` as `allocateStorage`. */
  carve(bytes: number, op: string): StorageBlock {
    const size = blockBytes(bytes);
    if (this.#buffer === undefined || this.#next + size > this.#end) {
      const { buffer, skip } = allocateStorage(SLAB_BYTES, 1, op);
      slabs.add(buffer);
      this.#buffer = buffer;
      this.#next = skip;
      this.#end = skip + SLAB_BYTES;
      this.#made += 1;
    }
    const block = { buffer: this.#buffer, start: this.#next, bytes: size };
    this.#next += size;
    return block;
  }

  /** Slabs made so far. */
  get slabs(): number {
    return this.#made;
  }

  /** Carve from a new slab next time (the pool closed or reset: the current slab goes when its blocks do). */
  reset(): void {
    this.#buffer = undefined;
    this.#next = 0;
    this.#end = 0;
  }
}
