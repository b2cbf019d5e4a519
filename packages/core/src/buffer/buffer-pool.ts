import { isSharedArrayBuffer } from '../tensor/layout.js';
import { type DType, DTYPE_INFO, DTYPES, isDType } from '../tensor/dtype.js';
import { invalidArgument } from '../errors/tenferro-error.js';
import type { StorageHome } from '../tensor/tensor-storage.js';
import type { PoolLimit, PoolLimitListener } from './pool-limit.js';
import { poolChannel, publishPool } from '../diagnostics/channels.js';
import { alignmentSkip, allocateStorage, paddedBytes } from './storage-alignment.js';
import { SmallSet } from '../util/small-set.js';
import { CollectedStore } from './collected-store.js';

/** A buffer checked out of a {@link BufferPool}; give it back with {@link BufferPool.release}. */
export interface BufferLoan {
  readonly dtype: DType;
  readonly buffer: SharedArrayBuffer;
  /** Element offset where the loan's data starts: its first 64-byte line for loans of 256 bytes or more (see `storage-alignment.ts`), else 0. */
  readonly offset: number;
  /** Elements requested. */
  readonly length: number;
  /** Elements the buffer holds from `offset` on, ≥ `length`. */
  readonly capacity: number;
}

/** What the buffer pools of a backend's engines retain and how they were used (`backend.bufferPoolStats()`). */
export interface BufferPoolStats {
  /** Buffers retained for reuse. */
  readonly buffers: number;
  /** Bytes of retained capacity. */
  readonly retainedBytes: number;
  /** Loans not yet returned. */
  readonly outstanding: number;
  /** Acquisitions served from a retained buffer. */
  readonly hits: number;
  /** Acquisitions that allocated a fresh buffer. */
  readonly misses: number;
  /** The current retention cap. */
  readonly limitBytes: number;
  /** Fresh outputs whose storage came back because their last tensor was disposed (`dispose`, `tidy`, `reclaim`). */
  readonly returnedByDispose: number;
  /** Fresh outputs whose storage came back because every tensor over it was collected. */
  readonly returnedByCollection: number;
}

export interface AcquireOptions {
  /** Clear the first `length` elements (default true). */
  readonly zeroed?: boolean;
  /** The public operation the storage is for, named by allocation errors. */
  readonly op?: string;
  /** Start the loan's data on a 64-byte line when it is 256 bytes or more (default true); false: at offset 0. */
  readonly aligned?: boolean;
}

export type TakeLoan = (dtype: DType, length: number, options?: AcquireOptions) => BufferLoan;

const EMPTY = new SharedArrayBuffer(0);

/** A non-empty loan, which knows the pool that issued it. */
class PoolLoan implements BufferLoan {
  readonly pool: BufferPool;
  readonly dtype: DType;
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly length: number;
  readonly capacity: number;
  /** Freshly allocated for this loan (never touched: its pages are not yet faulted in), not a retained buffer. */
  readonly fresh: boolean;

  constructor(pool: BufferPool, dtype: DType, buffer: SharedArrayBuffer, offset: number, length: number, capacity: number, fresh: boolean) {
    this.pool = pool;
    this.fresh = fresh;
    this.dtype = dtype;
    this.buffer = buffer;
    this.offset = offset;
    this.length = length;
    this.capacity = capacity;
    Object.freeze(this);
  }
}

/** Whether `loan` was freshly allocated by its pool (its memory never touched), not a retained buffer. */
export function loanIsFresh(loan: BufferLoan): boolean {
  return loan instanceof PoolLoan && loan.fresh;
}

/** Index of the first buffer with `byteLength > bytes` in an ascending array (where a returned buffer goes: after its equals). */
function upperBound(list: readonly SharedArrayBuffer[], bytes: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.byteLength <= bytes) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Take the buffer at `at` — the first of the smallest capacity ≥ the size asked for — out of `list`
 * (ascending); of that capacity, the buffer returned last: the one most likely still in cache,
 * and, as equal buffers are appended after their equals, the end of its run: O(1) for a loop over
 * one size.
 */
function takeBestFit(list: SharedArrayBuffer[], at: number): SharedArrayBuffer {
  const last = upperBound(list, list[at]!.byteLength) - 1;
  return last === list.length - 1 ? list.pop()! : list.splice(last, 1)[0]!;
}

/** Index of the first buffer with `byteLength ≥ bytes` in an ascending array. */
function lowerBound(list: readonly SharedArrayBuffer[], bytes: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.byteLength < bytes) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Host storage pool of one engine (R111–R115). Pools are separate per dtype and keyed by
 * capacity; acquire takes the best fit; releases evict the smallest retained buffers (across
 * dtypes) until retained bytes fit the shared {@link PoolLimit}.
 *
 * Storage that comes home by collection is kept apart, in a {@link CollectedStore}: it counts
 * against the same cap but is evicted before anything released, disposed or adopted (by the size
 * touched least recently), so a loop that drops its outputs cannot make R113's smallest-first
 * eviction throw out every smaller buffer another loop disposes.
 */
export class BufferPool implements PoolLimitListener, StorageHome {
  readonly #limit: PoolLimit;
  /** Retained buffers per dtype (released, disposed or adopted), ascending by byte length. */
  readonly #free = new Map<DType, SharedArrayBuffer[]>(DTYPES.map((d) => [d, []]));
  /** Retained storage that came home by collection. */
  readonly #collected = new CollectedStore();
  readonly #outstanding = new SmallSet<BufferLoan>();
  #retainedBytes = 0;
  #buffers = 0;
  #hits = 0;
  #misses = 0;
  #returnedByDispose = 0;
  #returnedByCollection = 0;
  #detachedSinceNudge = 0;
  #nudgeBackoff = 1;
  #returnedAtNudge = -1;
  #closed = false;

  constructor(limit: PoolLimit) {
    this.#limit = limit;
    limit.register(this);
  }

  /**
   * Borrow storage for `length` elements of `dtype`: the smallest retained capacity ≥ `length`
   * (R111), else a fresh buffer of `length` elements — padded, from 256 bytes on, so that the
   * loan's data starts on a 64-byte line at `offset`. `zeroed` (default) clears the `length`
   * elements from `offset`. Length 0 returns an empty loan and never touches the pool (R112).
   */
  acquire(dtype: DType, length: number, options?: AcquireOptions): BufferLoan {
    const op = 'BufferPool.acquire';
    if (!isDType(dtype)) throw invalidArgument(op, 'dtype', 'a dtype', dtype);
    if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) {
      throw invalidArgument(op, 'length', 'a non-negative safe integer element count', length);
    }
    if (length === 0) return Object.freeze({ dtype, buffer: EMPTY, offset: 0, length: 0, capacity: 0 });
    const bytes = DTYPE_INFO[dtype].bytes;
    const needed = length * bytes;
    const caller = options?.op ?? op;
    const padded = paddedBytes(needed);
    const list = this.#free.get(dtype)!;
    const at = lowerBound(list, padded);
    const warm = at < list.length ? list[at]!.byteLength : Infinity;
    let buffer: SharedArrayBuffer | undefined;
    if (warm === padded) buffer = takeBestFit(list, at);
    else if (this.#collected.count > 0 || warm !== Infinity) {
      const cold = this.#collected.fit(dtype, padded);
      if (cold < warm) buffer = this.#collected.take(dtype, cold);
      else if (warm !== Infinity) buffer = takeBestFit(list, at);
    }
    let skip: number;
    let fresh = false;
    if (buffer !== undefined) {
      this.#retainedBytes -= buffer.byteLength;
      this.#buffers -= 1;
      this.#hits += 1;
      skip = options?.aligned === false ? 0 : alignmentSkip(buffer, needed, bytes);
      if (options?.zeroed !== false) new Uint8Array(buffer, skip, needed).fill(0);
      if (poolChannel().hasSubscribers) publishPool('hit', dtype, buffer.byteLength, this.#retainedBytes);
    } else {
      ({ buffer, skip } = allocateStorage(needed, bytes, caller, options?.aligned !== false));
      fresh = true;
      this.#misses += 1;
      if (poolChannel().hasSubscribers) publishPool('miss', dtype, buffer.byteLength, this.#retainedBytes);
    }
    const loan = new PoolLoan(this, dtype, buffer, skip / bytes, length, Math.floor((buffer.byteLength - skip) / bytes), fresh);
    this.#outstanding.add(loan);
    return loan;
  }

  /** How many retained buffers `acquire(dtype, length)` could lend now (each fits). */
  lendable(dtype: DType, length: number): number {
    const list = this.#free.get(dtype);
    if (list === undefined) return 0;
    const bytes = paddedBytes(length * DTYPE_INFO[dtype].bytes);
    return list.length - lowerBound(list, bytes) + (this.#collected.count > 0 ? this.#collected.countFitting(dtype, bytes) : 0);
  }

  /** How many storages came back through collection so far (cheap; `stats()` builds an object). */
  get returnedByCollection(): number {
    return this.#returnedByCollection;
  }

  /**
   * Return a loan. Empty loans and loans already returned are no-ops; a loan of another pool
   * is an `InvalidArgument`. Afterwards the smallest retained buffers are evicted until the
   * retained bytes fit the cap (R113).
   */
  release(loan: BufferLoan): void {
    if (typeof loan !== 'object' || loan === null || !isSharedArrayBuffer(loan.buffer)) {
      throw invalidArgument('BufferPool.release', 'loan', 'a buffer loan', loan);
    }
    if (loan.capacity === 0 || loan.buffer.byteLength === 0) return;
    if (!this.#outstanding.delete(loan)) {
      // Issued here and returned already (a loan remembers its pool: no set of every loan ever issued).
      if (loan instanceof PoolLoan && loan.pool === this) return;
      throw invalidArgument('BufferPool.release', 'loan', 'a loan of this pool', `${loan.dtype}[${loan.capacity}]`);
    }
    if (this.#closed) return;
    const list = this.#free.get(loan.dtype)!;
    list.splice(upperBound(list, loan.buffer.byteLength), 0, loan.buffer);
    this.#retainedBytes += loan.buffer.byteLength;
    this.#buffers += 1;
    this.trimToLimit();
  }

  /** Give a loan away for good (as a fresh output's storage): no longer outstanding, never retained; a later release is a no-op. */
  detach(loan: BufferLoan): void {
    if (this.#outstanding.delete(loan)) this.#detachedSinceNudge += loan.buffer.byteLength;
  }

  /** Bytes of storage given away as fresh outputs since the last {@link nudged} (see `ops/fresh-output.ts`, #38). */
  get detachedSinceNudge(): number {
    return this.#detachedSinceNudge;
  }

  /**
   * How many times farther apart this pool's collection nudges are now: 1 while they bring storage
   * home, doubled (up to 4) after each one that brought nothing back — a program that keeps its
   * outputs pays no more collections than V8's own cadence.
   */
  get nudgeBackoff(): number {
    return this.#nudgeBackoff;
  }

  /** A collection was asked for on this pool's behalf: count given-away storage from zero again. */
  nudged(): void {
    // Did the last nudge bring anything home (by collection) since? Back off while it does not.
    this.#nudgeBackoff = this.#returnedByCollection > this.#returnedAtNudge ? 1 : Math.min(4, this.#nudgeBackoff * 2);
    this.#returnedAtNudge = this.#returnedByCollection;
    this.#detachedSinceNudge = 0;
  }

  /**
   * Retain `buffer` as storage of `dtype` (a tensor's storage handed back by its owner). A buffer
   * already retained is a no-op; one lent out right now is an `InvalidArgument` (it is in use).
   */
  adopt(dtype: DType, buffer: SharedArrayBuffer): void {
    const op = 'BufferPool.adopt';
    if (!isDType(dtype)) throw invalidArgument(op, 'dtype', 'a dtype', dtype);
    if (!isSharedArrayBuffer(buffer)) throw invalidArgument(op, 'buffer', 'a SharedArrayBuffer', buffer);
    if (buffer.byteLength === 0 || this.#closed) return;
    for (const loan of this.#outstanding) {
      if (loan.buffer === buffer) throw invalidArgument(op, 'buffer', 'storage that is not lent out', 'a buffer an operation is using');
    }
    for (const list of this.#free.values()) if (list.includes(buffer)) return;
    if (this.#collected.has(buffer)) return;
    const list = this.#free.get(dtype)!;
    list.splice(upperBound(list, buffer.byteLength), 0, buffer);
    this.#retainedBytes += buffer.byteLength;
    this.#buffers += 1;
    this.trimToLimit();
  }

  /**
   * Storage of a fresh output coming back (its last tensor was disposed, or collected): retained
   * for reuse within the cap (`made`: when its storage was made, i.e. lent — of collected storage
   * the most recently lent goes out first). Each storage comes back at most once and is never lent out at the
   * time (it was detached when its tensor was made), so nothing is checked here.
   */
  returnStorage(dtype: DType, buffer: SharedArrayBuffer, how: 'disposed' | 'collected', made?: number): void {
    if (how === 'disposed') this.#returnedByDispose++;
    else this.#returnedByCollection++;
    if (buffer.byteLength === 0 || this.#closed) return;
    // Storage just disposed is likely still in cache: it goes where the next fitting acquire looks
    // first (the end of its run of equal sizes). Storage that was collected has not been touched
    // since it became unreachable: it is lent only when no disposed buffer of its size is left,
    // and it is the first to go when the cap is exceeded.
    if (how === 'collected') this.#collected.add(dtype, buffer, made);
    else {
      const list = this.#free.get(dtype)!;
      list.splice(upperBound(list, buffer.byteLength), 0, buffer);
    }
    this.#retainedBytes += buffer.byteLength;
    this.#buffers += 1;
    this.trimToLimit();
  }

  /**
   * Evict until retained bytes ≤ cap: collected storage first (the size touched least recently
   * first), then the smallest retained buffers (across dtypes, ties in dtype order; R113).
   */
  trimToLimit(): void {
    const cap = this.#limit.bytes;
    while (this.#retainedBytes > cap && this.#collected.count > 0) {
      const { dtype, buffer } = this.#collected.evictOne()!;
      this.#retainedBytes -= buffer.byteLength;
      this.#buffers -= 1;
      if (poolChannel().hasSubscribers) publishPool('evict', dtype, buffer.byteLength, this.#retainedBytes);
    }
    while (this.#retainedBytes > cap) {
      let victim: SharedArrayBuffer[] | undefined;
      let victimDtype: DType | undefined;
      for (const dtype of DTYPES) {
        const list = this.#free.get(dtype)!;
        if (list.length > 0 && (victim === undefined || list[0]!.byteLength < victim[0]!.byteLength)) {
          victim = list;
          victimDtype = dtype;
        }
      }
      if (victim === undefined) break;
      const evicted = victim.shift()!;
      this.#retainedBytes -= evicted.byteLength;
      this.#buffers -= 1;
      if (poolChannel().hasSubscribers) publishPool('evict', victimDtype!, evicted.byteLength, this.#retainedBytes);
    }
  }

  stats(): BufferPoolStats {
    return Object.freeze({
      buffers: this.#buffers,
      retainedBytes: this.#retainedBytes,
      outstanding: this.#outstanding.size,
      hits: this.#hits,
      misses: this.#misses,
      limitBytes: this.#limit.bytes,
      returnedByDispose: this.#returnedByDispose,
      returnedByCollection: this.#returnedByCollection,
    });
  }

  /** Retained capacities (elements) per dtype, ascending — for diagnostics and tests. */
  retained(dtype: DType): number[] {
    const bytes = DTYPE_INFO[dtype].bytes;
    const all = (this.#free.get(dtype) ?? []).map((b) => b.byteLength);
    if (this.#collected.count > 0) all.push(...this.#collected.sizes(dtype));
    return all.sort((x, y) => x - y).map((b) => b / bytes);
  }

  /** Drop all retained buffers (R114); outstanding loans are unaffected. */
  reset(): void {
    for (const list of this.#free.values()) list.length = 0;
    this.#collected.clear();
    this.#retainedBytes = 0;
    this.#buffers = 0;
  }

  /**
   * Run `fn` with a loan scope: every loan taken through `take` is released (in reverse order)
   * when `fn` settles — success, thrown error or rejection (R88).
   */
  async withLoans<R>(fn: (take: TakeLoan) => Promise<R> | R): Promise<R> {
    const loans: BufferLoan[] = [];
    let open = true;
    const take: TakeLoan = (dtype, length, options) => {
      if (!open) throw invalidArgument('BufferPool.withLoans', 'take', 'a call while the loan scope is open', 'a call after it settled');
      const loan = this.acquire(dtype, length, options);
      loans.push(loan);
      return loan;
    };
    try {
      return await fn(take);
    } finally {
      open = false;
      for (let i = loans.length - 1; i >= 0; i--) this.release(loans[i]!);
    }
  }

  /** Unregister from the limit and drop everything; later releases retain nothing. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#limit.unregister(this);
    this.reset();
  }

  get closed(): boolean {
    return this.#closed;
  }
}
