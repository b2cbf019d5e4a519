import type { DType } from '../tensor/dtype.js';
import type { StorageBlock } from './storage-slab.js';

/** One size of one dtype: blocks of equal byte length. */
interface Run {
  readonly dtype: DType;
  readonly bytes: number;
  /** Each block with when it was last lent (the storage's `made` stamp). */
  readonly held: Held[];
  /** `held` ascends by `made` (the most recently lent buffer last): false after an out-of-order add. */
  sorted: boolean;
}

interface Held {
  readonly block: StorageBlock;
  readonly made: number;
}

/** A block leaving the store by eviction. */
export interface Evicted {
  readonly dtype: DType;
  readonly block: StorageBlock;
}

function keyOf(dtype: DType, bytes: number): string {
  return `${dtype}:${bytes}`;
}

/** Order a run's buffers by when they were last lent, the most recent last. */
function sortRun(run: Run): void {
  if (run.sorted) return;
  run.held.sort((x, y) => x.made - y.made);
  run.sorted = true;
}

/**
 * The part of a {@link BufferPool}'s retained storage that came home by collection: cold (nothing
 * touched it since it became unreachable) and of no size anyone asked to keep. It fills whatever
 * room the cap leaves and is the first to go when retained bytes exceed it, a size that has not
 * been lent from or returned to for longest first — so the thousands of buffers a dropping loop
 * sends home cannot crowd out the storage of other sizes, and a size no loop uses any more ages
 * out behind the sizes still in use.
 *
 * Runs are kept in a `Map` whose order is least recently touched first: touching a run moves
 * it to the end. Within a run the buffer lent most recently goes out first (#38): it is the one
 * most likely still in cache — a dropping loop's last output — while V8 runs finalizers newest
 * first, so the order of arrival is the reverse of that.
 */
export class CollectedStore {
  readonly #runs = new Map<string, Run>();
  /**
   * The run touched last — the Map's last entry — or undefined: a dropping loop adds and takes
   * blocks of one size on every call, and finds that run here without a key string or a reorder.
   */
  #last: Run | undefined;
  #count = 0;

  /** Buffers held. */
  get count(): number {
    return this.#count;
  }

  /** Hold `block`, last lent at `made` (a stamp that grows with time; 0 when unknown). */
  add(dtype: DType, block: StorageBlock, made = 0): void {
    let run = this.#touchLast(dtype, block.bytes);
    if (run === undefined) {
      run = { dtype, bytes: block.bytes, held: [], sorted: true };
      this.#runs.set(keyOf(dtype, run.bytes), run);
      this.#last = run;
    }
    if (run.held.length > 0 && made < run.held[run.held.length - 1]!.made) run.sorted = false;
    run.held.push({ block, made });
    this.#count += 1;
  }

  /** The byte length of the smallest held block of `dtype` with at least `bytes` bytes, or `Infinity`. */
  fit(dtype: DType, bytes: number): number {
    let best = Infinity;
    for (const run of this.#runs.values()) {
      if (run.dtype === dtype && run.bytes >= bytes && run.bytes < best) best = run.bytes;
    }
    return best;
  }

  /** Take a block of exactly `bytes` bytes (a size {@link fit} returned). */
  take(dtype: DType, bytes: number): StorageBlock {
    const run = this.#touchLast(dtype, bytes)!;
    sortRun(run);
    const { block } = run.held.pop()!;
    if (run.held.length === 0) this.#drop(run);
    this.#count -= 1;
    return block;
  }

  /** How many held blocks of `dtype` have at least `bytes` bytes. */
  countFitting(dtype: DType, bytes: number): number {
    let n = 0;
    for (const run of this.#runs.values()) if (run.dtype === dtype && run.bytes >= bytes) n += run.held.length;
    return n;
  }

  /** Whether a held block is of `buffer`. */
  has(buffer: SharedArrayBuffer): boolean {
    for (const run of this.#runs.values()) if (run.held.some((h) => h.block.buffer === buffer)) return true;
    return false;
  }

  /** Drop one block of the least recently touched size — of those, the one lent longest ago — or undefined when empty. */
  evictOne(): Evicted | undefined {
    for (const run of this.#runs.values()) {
      sortRun(run);
      const { block } = run.held.shift()!;
      if (run.held.length === 0) this.#drop(run);
      this.#count -= 1;
      return { dtype: run.dtype, block };
    }
    return undefined;
  }

  /** Byte lengths of the held blocks of `dtype`, in no particular order. */
  sizes(dtype: DType): number[] {
    const out: number[] = [];
    for (const run of this.#runs.values()) if (run.dtype === dtype) for (let i = 0; i < run.held.length; i++) out.push(run.bytes);
    return out;
  }

  clear(): void {
    this.#runs.clear();
    this.#last = undefined;
    this.#count = 0;
  }

  /** The run of `dtype` and `bytes`, made the most recently touched (the Map's last entry), or undefined when there is none. */
  #touchLast(dtype: DType, bytes: number): Run | undefined {
    const last = this.#last;
    if (last !== undefined && last.dtype === dtype && last.bytes === bytes) return last;
    const key = keyOf(dtype, bytes);
    const found = this.#runs.get(key);
    if (found !== undefined) {
      this.#runs.delete(key); // re-entered last: the most recently touched
      this.#runs.set(key, found);
    }
    this.#last = found;
    return found;
  }

  /** Forget an emptied run. */
  #drop(run: Run): void {
    this.#runs.delete(keyOf(run.dtype, run.bytes));
    if (this.#last === run) this.#last = undefined;
  }
}
