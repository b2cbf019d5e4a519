import { adjustExternalMemory } from '@tenferro/os';
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
  /** Bytes reported to V8 as kept alive by this storage (see `adjustExternalMemory`), 0 once taken back. */
  reported: number;
}

/**
 * V8 does not count SharedArrayBuffers towards when to collect: engine storage handed to tensors
 * is reported as external memory while they may hold it, so that a loop dropping large outputs
 * triggers the collections that bring them back (without it, none ever happens).
 */
function unreport(cell: StorageCell): void {
  if (cell.reported === 0) return;
  adjustExternalMemory(-cell.reported);
  cell.reported = 0;
}

/** Pooled storages watched for collection and not yet home: their collection may bring storage back. */
let watched = 0;

/**
 * Whether some engine storage is watched for collection and not yet back home: after a collection
 * its finalizer runs at the next event-loop turn, so a pool miss may be worth one turn.
 */
export function collectionMayReturnStorage(): boolean {
  return watched > 0;
}

const collected = new FinalizationRegistry<StorageCell>((cell) => {
  watched--;
  unreport(cell);
  if (cell.escaped || cell.returned || cell.home === undefined) return;
  cell.returned = true;
  cell.home.returnStorage(cell.dtype, cell.buffer, 'collected');
});

/**
 * Storage made since the last event-loop turn, registered with `collected` at the next one if it
 * is still in use: the loop that disposes each output right away (the idiomatic one) then never
 * pays for a registration and its removal. Until then the list holds the storage, so nothing made
 * here can be collected unregistered. The list is bounded ({@link MAX_DEFERRED},
 * {@link MAX_DEFERRED_BYTES}): a loop that drops its outputs without ever yielding to the event
 * loop (every await resolved by a polled worker answer) registers them in batches, so they can be
 * collected and come back — without the bound it would hold all of them until its end.
 */
const unregistered: TensorStorage[] = [];
let unregisteredBytes = 0;
let flushScheduled = false;
const MAX_DEFERRED = 64;
const MAX_DEFERRED_BYTES = 16 * 1024 * 1024;

/** Register every storage in the list that is still in use (storage already home is skipped), and empty it. */
function registerDeferred(): void {
  for (const storage of unregistered) storage.register();
  unregistered.length = 0;
  unregisteredBytes = 0;
}

/** How many storages wait for their deferred registration now (bounded by {@link MAX_DEFERRED}). @internal test seam */
export function deferredRegistrations(): number {
  return unregistered.length;
}

function registerSurvivors(): void {
  flushScheduled = false;
  registerDeferred();
}

/**
 * The storage under one tensor and all its views. It counts references — every live (not
 * disposed) tensor over it and every operation using it right now — and goes back to its home
 * when the count drops to zero after a dispose, or when it becomes unreachable (unless escaped).
 * Caller-made storage has no home: disposing only invalidates tensors.
 */
export class TensorStorage {
  readonly #cell: StorageCell;
  #refs = 0;
  #registered = false;

  constructor(dtype: DType, buffer: SharedArrayBuffer, home?: StorageHome) {
    this.#cell = { dtype, buffer, home, escaped: false, returned: false, reported: 0 };
    if (home !== undefined) {
      if (buffer.byteLength > 0 && adjustExternalMemory(buffer.byteLength) !== undefined) this.#cell.reported = buffer.byteLength;
      unregistered.push(this);
      unregisteredBytes += buffer.byteLength;
      if (unregistered.length >= MAX_DEFERRED || unregisteredBytes >= MAX_DEFERRED_BYTES) registerDeferred();
      else if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(registerSurvivors).unref();
      }
    }
  }

  /** Watch for the collection of this storage, unless it went home already. */
  register(): void {
    if (this.#registered || this.#cell.returned || this.#cell.home === undefined) return;
    this.#registered = true;
    watched++;
    collected.register(this, this.#cell, this);
  }

  get buffer(): SharedArrayBuffer {
    return this.#cell.buffer;
  }

  /** Where the storage goes back to (an engine pool, an allocation domain), if anywhere. */
  get home(): StorageHome | undefined {
    return this.#cell.home;
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
    if (this.#cell.home === undefined && !this.#cell.returned) {
      this.#cell.home = home;
      this.register();
    }
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
    if (this.#registered && collected.unregister(this)) watched--;
    unreport(cell);
    cell.home.returnStorage(cell.dtype, cell.buffer, 'disposed');
  }
}
