import { isSharedArrayBuffer } from '../tensor/layout.js';
import { type DType, DTYPE_INFO, DTYPES, isDType } from '../tensor/dtype.js';
import { invalidArgument } from '../errors/tenferro-error.js';
import type { StorageHome } from '../tensor/tensor-storage.js';
import type { PoolLimit, PoolLimitListener } from './pool-limit.js';
import { poolChannel, publishPool } from '../diagnostics/channels.js';
import { alignmentSkip, allocateStorage, paddedBytes } from './storage-alignment.js';
import { RunningTotal } from '../util/running-total.js';
import { SmallSet } from '../util/small-set.js';
import { CollectedStore } from './collected-store.js';
import { SlabCarver, type StorageBlock, carvable, isSlab, wholeBlock } from './storage-slab.js';

/** A buffer checked out of a {@link BufferPool}; give it back with {@link BufferPool.release}. */
export interface BufferLoan {
  readonly dtype: DType;
  readonly buffer: SharedArrayBuffer;
  /** Element offset where the loan's data starts: its first 64-byte line for loans of 256 bytes or more (see `storage-alignment.ts`), else 0. */
  readonly offset: number;
  /** Elements requested. */
  readonly length: number;
  /** Elements the loan holds from `offset` on, ≥ `length`. */
  readonly capacity: number;
  /**
   * Byte offset in `buffer` of the block the loan holds: 0 for a buffer of its own, else where it
   * was carved from a slab shared with other storage (small storage, `storage-slab.ts`).
   */
  readonly blockStart: number;
  /** Bytes of `buffer` the loan holds from `blockStart` on (what the pool counts when it is retained). */
  readonly blockBytes: number;
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
}

export type TakeLoan = (dtype: DType, length: number, options?: AcquireOptions) => BufferLoan;

/** How a pool gets fresh storage. */
export interface BufferPoolOptions {
  /**
   * Carve storage below 2 MiB from shared slabs of whole huge pages instead of a buffer per loan
   * (default true; `storage-slab.ts`), while the cap holds four slabs of the size at least.
   */
  readonly slabs?: boolean;
}

const EMPTY = new SharedArrayBuffer(0);

/** A non-empty loan, which knows the pool that issued it. */
class PoolLoan implements BufferLoan {
  readonly pool: BufferPool;
  readonly dtype: DType;
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly length: number;
  readonly capacity: number;
  readonly blockStart: number;
  readonly blockBytes: number;
  /** Freshly allocated for this loan (never touched: its pages are not yet faulted in), not a retained buffer. */
  readonly fresh: boolean;
  /** The block the loan holds, as the pool keeps it. */
  readonly block: StorageBlock;

  constructor(pool: BufferPool, dtype: DType, block: StorageBlock, offset: number, length: number, capacity: number, fresh: boolean) {
    this.pool = pool;
    this.fresh = fresh;
    this.dtype = dtype;
    this.block = block;
    this.buffer = block.buffer;
    this.blockStart = block.start;
    this.blockBytes = block.bytes;
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

/** Index of the first block with more than `bytes` bytes in an ascending array (where a returned block goes: after its equals). */
function upperBound(list: readonly StorageBlock[], bytes: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.bytes <= bytes) lo = mid + 1;
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
function takeBestFit(list: StorageBlock[], at: number): StorageBlock {
  const last = upperBound(list, list[at]!.bytes) - 1;
  return last === list.length - 1 ? list.pop()! : list.splice(last, 1)[0]!;
}

/** Index of the first block with at least `bytes` bytes in an ascending array. */
function lowerBound(list: readonly StorageBlock[], bytes: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.bytes < bytes) lo = mid + 1;
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
  /** Retained blocks per dtype (released, disposed or adopted), ascending by byte length. */
  readonly #free = new Map<DType, StorageBlock[]>(DTYPES.map((d) => [d, []]));
  /** Where fresh small storage is carved from (undefined: every loan gets a buffer of its own). */
  readonly #slabs: SlabCarver | undefined;
  /** Retained storage that came home by collection. */
  readonly #collected = new CollectedStore();
  readonly #outstanding = new SmallSet<BufferLoan>();
  #retainedBytes = 0;
  #buffers = 0;
  #hits = 0;
  #misses = 0;
  #returnedByDispose = 0;
  #returnedByCollection = 0;
  /** Bytes given away as fresh outputs since the last nudge: past 2^31 in a disposing loop, which never nudges (see RunningTotal). */
  readonly #detachedSinceNudge = new RunningTotal();
  #nudgeBackoff = 1;
  #returnedAtNudge = -1;
  #missesSinceFullAsk = 0;
  #fullAskWait = 1;
  #returnedAtFullAsk = -1;
  #fullAskJudged = true;
  #closed = false;

  constructor(limit: PoolLimit, options?: BufferPoolOptions) {
    this.#limit = limit;
    this.#slabs = options?.slabs === false ? undefined : new SlabCarver();
    limit.register(this);
  }

  /**
   * Borrow storage for `length` elements of `dtype`: the smallest retained capacity ≥ `length`
   * (R111), else fresh storage of `length` elements — padded, from 256 bytes on, so that the
   * loan's data starts on a 64-byte line at `offset`; storage below 2 MiB is carved from a shared
   * slab (`storage-slab.ts`), larger storage is a buffer of its own. `zeroed` (default) clears the
   * `length` elements from `offset`. Length 0 returns an empty loan and never touches the pool (R112).
   */
  acquire(dtype: DType, length: number, options?: AcquireOptions): BufferLoan {
    const op = 'BufferPool.acquire';
    if (!isDType(dtype)) throw invalidArgument(op, 'dtype', 'a dtype', dtype);
    if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) {
      throw invalidArgument(op, 'length', 'a non-negative safe integer element count', length);
    }
    if (length === 0) return Object.freeze({ dtype, buffer: EMPTY, offset: 0, length: 0, capacity: 0, blockStart: 0, blockBytes: 0 });
    const bytes = DTYPE_INFO[dtype].bytes;
    const needed = length * bytes;
    const caller = options?.op ?? op;
    const padded = paddedBytes(needed);
    const list = this.#free.get(dtype)!;
    const at = lowerBound(list, padded);
    const warm = at < list.length ? list[at]!.bytes : Infinity;
    let block: StorageBlock | undefined;
    if (warm === padded) block = takeBestFit(list, at);
    else if (this.#collected.count > 0 || warm !== Infinity) {
      const cold = this.#collected.fit(dtype, padded);
      if (cold < warm) block = this.#collected.take(dtype, cold);
      else if (warm !== Infinity) block = takeBestFit(list, at);
    }
    let skip: number;
    let fresh = false;
    if (block !== undefined) {
      this.#retainedBytes -= block.bytes;
      this.#buffers -= 1;
      this.#hits += 1;
      skip = alignmentSkip(block.buffer, needed, bytes, block.start, block.start + block.bytes);
      if (options?.zeroed !== false) new Uint8Array(block.buffer, block.start + skip, needed).fill(0);
      if (poolChannel().hasSubscribers) publishPool('hit', dtype, block.bytes, this.#retainedBytes);
    } else {
      if (this.#slabs !== undefined && carvable(padded, this.#limit.bytes)) {
        block = this.#slabs.carve(padded, caller);
        skip = alignmentSkip(block.buffer, needed, bytes, block.start, block.start + block.bytes);
        // Zero already, unless a caller wrote past its own storage through a shared `tensor.buffer`.
        if (options?.zeroed !== false) new Uint8Array(block.buffer, block.start + skip, needed).fill(0);
      } else {
        let buffer: SharedArrayBuffer;
        ({ buffer, skip } = allocateStorage(needed, bytes, caller));
        block = wholeBlock(buffer);
      }
      fresh = true;
      this.#misses += 1;
      if (poolChannel().hasSubscribers) publishPool('miss', dtype, block.bytes, this.#retainedBytes);
    }
    const loan = new PoolLoan(this, dtype, block, (block.start + skip) / bytes, length, Math.floor((block.bytes - skip) / bytes), fresh);
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
    this.#retain(loan.dtype, (loan as PoolLoan).block);
    this.trimToLimit();
  }

  /** Add `block` to the retained blocks of `dtype` (after its equals) and count it. */
  #retain(dtype: DType, block: StorageBlock): void {
    const list = this.#free.get(dtype)!;
    const at = upperBound(list, block.bytes);
    if (at === list.length) list.push(block);
    else list.splice(at, 0, block);
    this.#retainedBytes += block.bytes;
    this.#buffers += 1;
  }



  /** Give a loan away for good (as a fresh output's storage): no longer outstanding, never retained; a later release is a no-op. */
  detach(loan: BufferLoan): void {
    if (this.#outstanding.delete(loan)) this.#detachedSinceNudge.add(loan.blockBytes);
  }

  /** Bytes of storage given away as fresh outputs since the last {@link nudged} (see `ops/fresh-output.ts`, #38). */
  get detachedSinceNudge(): number {
    return this.#detachedSinceNudge.value;
  }

  /**
   * How many times farther apart this pool's collection nudges are now: 1 while they bring storage
   * home, doubled (up to 4) after each one that brought nothing back — a program that keeps its
   * outputs pays no more collections than V8's own cadence.
   */
  get nudgeBackoff(): number {
    return this.#nudgeBackoff;
  }

  /**
   * This pool is about to miss while outputs promoted past a scavenge's reach are out: whether to
   * ask V8 for a full collection now (then counted as asked). A program that keeps its outputs
   * would ask at every miss in vain (a loop keeping 1024² f64 products: 120 full-collection
   * entries of the `gc` observer in 60 calls), so an ask that brought nothing home doubles the
   * misses the next one waits for (up to 64), judged once when the next is due (its collection has
   * finished by then); one that brought storage home resets the wait to the next miss.
   */
  fullCollectionDue(): boolean {
    this.#missesSinceFullAsk++;
    if (this.#missesSinceFullAsk < this.#fullAskWait) return false;
    if (!this.#fullAskJudged) {
      this.#fullAskJudged = true;
      this.#fullAskWait = this.#returnedByCollection > this.#returnedAtFullAsk ? 1 : Math.min(64, 2 * this.#fullAskWait);
      if (this.#missesSinceFullAsk < this.#fullAskWait) return false;
    }
    this.#missesSinceFullAsk = 0;
    this.#returnedAtFullAsk = this.#returnedByCollection;
    this.#fullAskJudged = false;
    return true;
  }

  /** A collection was asked for on this pool's behalf: count given-away storage from zero again. */
  nudged(): void {
    // Did the last nudge bring anything home (by collection) since? Back off while it does not.
    this.#nudgeBackoff = this.#returnedByCollection > this.#returnedAtNudge ? 1 : Math.min(4, this.#nudgeBackoff * 2);
    this.#returnedAtNudge = this.#returnedByCollection;
    this.#detachedSinceNudge.reset();
  }

  /**
   * Retain `buffer` as storage of `dtype` (a tensor's storage handed back by its owner). A buffer
   * already retained is a no-op; one lent out right now, or a slab small storage is carved from,
   * is an `InvalidArgument` (it is in use).
   */
  adopt(dtype: DType, buffer: SharedArrayBuffer): void {
    const op = 'BufferPool.adopt';
    if (!isDType(dtype)) throw invalidArgument(op, 'dtype', 'a dtype', dtype);
    if (!isSharedArrayBuffer(buffer)) throw invalidArgument(op, 'buffer', 'a SharedArrayBuffer', buffer);
    if (buffer.byteLength === 0 || this.#closed) return;
    if (isSlab(buffer)) throw invalidArgument(op, 'buffer', 'storage that is not lent out', 'a slab storage is carved from');
    for (const loan of this.#outstanding) {
      if (loan.buffer === buffer) throw invalidArgument(op, 'buffer', 'storage that is not lent out', 'a buffer an operation is using');
    }
    for (const list of this.#free.values()) if (list.some((b) => b.buffer === buffer)) return;
    if (this.#collected.has(buffer)) return;
    this.#retain(dtype, wholeBlock(buffer));
    this.trimToLimit();
  }

  /**
   * Storage of a fresh output coming back (its last tensor was disposed, or collected): the block
   * of `buffer` from byte `start` (`bytes` long; default the whole buffer), retained for reuse
   * within the cap (`made`: when its storage was made, i.e. lent — of collected storage the most
   * recently lent goes out first). Each storage comes back at most once and is never lent out at
   * the time (it was detached when its tensor was made), so nothing is checked here — but a slab
   * as a whole (caller-made storage over one, reclaimed) is never retained.
   */
  returnStorage(dtype: DType, buffer: SharedArrayBuffer, how: 'disposed' | 'collected', made?: number, start = 0, bytes = buffer.byteLength): void {
    if (how === 'disposed') this.#returnedByDispose++;
    else this.#returnedByCollection++;
    if (bytes === 0 || this.#closed) return;
    if (bytes === buffer.byteLength && isSlab(buffer)) return;
    const block: StorageBlock = { buffer, start, bytes };
    // Storage just disposed is likely still in cache: it goes where the next fitting acquire looks
    // first (the end of its run of equal sizes). Storage that was collected has not been touched
    // since it became unreachable: it is lent only when no disposed buffer of its size is left,
    // and it is the first to go when the cap is exceeded.
    if (how === 'collected') {
      this.#collected.add(dtype, block, made);
      this.#retainedBytes += bytes;
      this.#buffers += 1;
    } else this.#retain(dtype, block);
    this.trimToLimit();
  }

  /**
   * Evict until retained bytes ≤ cap: collected storage first (the size touched least recently
   * first), then the smallest retained buffers (across dtypes, ties in dtype order; R113).
   */
  trimToLimit(): void {
    const cap = this.#limit.bytes;
    while (this.#retainedBytes > cap && this.#collected.count > 0) {
      const { dtype, block } = this.#collected.evictOne()!;
      this.#retainedBytes -= block.bytes;
      this.#buffers -= 1;
      if (poolChannel().hasSubscribers) publishPool('evict', dtype, block.bytes, this.#retainedBytes);
    }
    while (this.#retainedBytes > cap) {
      let victim: StorageBlock[] | undefined;
      let victimDtype: DType | undefined;
      for (const dtype of DTYPES) {
        const list = this.#free.get(dtype)!;
        if (list.length > 0 && (victim === undefined || list[0]!.bytes < victim[0]!.bytes)) {
          victim = list;
          victimDtype = dtype;
        }
      }
      if (victim === undefined) break;
      const evicted = victim.shift()!;
      this.#retainedBytes -= evicted.bytes;
      this.#buffers -= 1;
      if (poolChannel().hasSubscribers) publishPool('evict', victimDtype!, evicted.bytes, this.#retainedBytes);
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
    const all = (this.#free.get(dtype) ?? []).map((b) => b.bytes);
    if (this.#collected.count > 0) all.push(...this.#collected.sizes(dtype));
    return all.sort((x, y) => x - y).map((b) => b / bytes);
  }

  /** Drop all retained buffers (R114); outstanding loans are unaffected. */
  reset(): void {
    for (const list of this.#free.values()) list.length = 0;
    this.#collected.clear();
    this.#slabs?.reset();
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
