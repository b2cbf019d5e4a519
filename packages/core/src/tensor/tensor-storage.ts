import type { DType } from './dtype.js';

/** Where storage made by an engine goes back to (its buffer pool). */
export interface StorageHome {
  /** Take `buffer` back for reuse; `how` says whether a dispose or the collection of every tensor over it returned it. */
  returnStorage(dtype: DType, buffer: SharedArrayBuffer, how: 'disposed' | 'collected'): void;
}

/** What outlives the storage object for its finalizer: never a reference back to the storage. */
interface StorageCell {
  readonly dtype: DType;
  readonly buffer: SharedArrayBuffer;
  home: StorageHome | undefined;
  /** The buffer was handed to the caller (`tensor.buffer`, `descriptor()`): never recycled by collection. */
  escaped: boolean;
  /** Handed back already (at most once). */
  returned: boolean;
}

const collected = new FinalizationRegistry<StorageCell>((cell) => {
  if (cell.escaped || cell.returned || cell.home === undefined) return;
  cell.returned = true;
  cell.home.returnStorage(cell.dtype, cell.buffer, 'collected');
});

/**
 * The storage under one tensor and all its views. It counts references — every live (not
 * disposed) tensor over it and every operation using it right now — and goes back to its home
 * when the count drops to zero after a dispose, or when it becomes unreachable (unless escaped).
 * Caller-made storage has no home: disposing only invalidates tensors.
 */
export class TensorStorage {
  readonly #cell: StorageCell;
  #refs = 0;

  constructor(dtype: DType, buffer: SharedArrayBuffer, home?: StorageHome) {
    this.#cell = { dtype, buffer, home, escaped: false, returned: false };
    if (home !== undefined) collected.register(this, this.#cell, this);
  }

  get buffer(): SharedArrayBuffer {
    return this.#cell.buffer;
  }

  /** Whether the storage can go back to an engine pool. */
  get pooled(): boolean {
    return this.#cell.home !== undefined && !this.#cell.returned;
  }

  get escaped(): boolean {
    return this.#cell.escaped;
  }

  /** The caller holds the buffer now: only an explicit dispose may recycle it. */
  escape(): void {
    this.#cell.escaped = true;
  }

  /** Give storage without a home one (`backend.reclaim` of caller-made storage). */
  adoptInto(home: StorageHome): void {
    if (this.#cell.home === undefined && !this.#cell.returned) this.#cell.home = home;
  }

  retain(): void {
    this.#refs++;
  }

  /** Drop one reference; at zero the storage goes home (a dispose). */
  release(): void {
    if (--this.#refs > 0) return;
    const cell = this.#cell;
    if (cell.home === undefined || cell.returned) return;
    cell.returned = true;
    collected.unregister(this);
    cell.home.returnStorage(cell.dtype, cell.buffer, 'disposed');
  }
}
