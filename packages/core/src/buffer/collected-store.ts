import type { DType } from '../tensor/dtype.js';

/** One size of one dtype: buffers of equal byte length. */
interface Run {
  readonly dtype: DType;
  readonly bytes: number;
  readonly buffers: SharedArrayBuffer[];
}

/** A buffer leaving the store by eviction. */
export interface Evicted {
  readonly dtype: DType;
  readonly buffer: SharedArrayBuffer;
}

function keyOf(dtype: DType, bytes: number): string {
  return `${dtype}:${bytes}`;
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
 * it to the end.
 */
export class CollectedStore {
  readonly #runs = new Map<string, Run>();
  #count = 0;

  /** Buffers held. */
  get count(): number {
    return this.#count;
  }

  add(dtype: DType, buffer: SharedArrayBuffer): void {
    const run = this.#touch(dtype, buffer.byteLength) ?? { dtype, bytes: buffer.byteLength, buffers: [] };
    this.#runs.set(keyOf(dtype, run.bytes), run);
    run.buffers.push(buffer);
    this.#count += 1;
  }

  /** The byte length of the smallest held buffer of `dtype` with at least `bytes` bytes, or `Infinity`. */
  fit(dtype: DType, bytes: number): number {
    let best = Infinity;
    for (const run of this.#runs.values()) {
      if (run.dtype === dtype && run.bytes >= bytes && run.bytes < best) best = run.bytes;
    }
    return best;
  }

  /** Take a buffer of exactly `bytes` bytes (a size {@link fit} returned). */
  take(dtype: DType, bytes: number): SharedArrayBuffer {
    const run = this.#touch(dtype, bytes)!;
    const buffer = run.buffers.pop()!;
    if (run.buffers.length > 0) this.#runs.set(keyOf(dtype, bytes), run); // now the most recent
    this.#count -= 1;
    return buffer;
  }

  /** How many held buffers of `dtype` have at least `bytes` bytes. */
  countFitting(dtype: DType, bytes: number): number {
    let n = 0;
    for (const run of this.#runs.values()) if (run.dtype === dtype && run.bytes >= bytes) n += run.buffers.length;
    return n;
  }

  has(buffer: SharedArrayBuffer): boolean {
    for (const run of this.#runs.values()) if (run.bytes === buffer.byteLength && run.buffers.includes(buffer)) return true;
    return false;
  }

  /** Drop one buffer of the least recently touched size, or undefined when empty. */
  evictOne(): Evicted | undefined {
    for (const [key, run] of this.#runs) {
      const buffer = run.buffers.pop()!;
      if (run.buffers.length === 0) this.#runs.delete(key);
      this.#count -= 1;
      return { dtype: run.dtype, buffer };
    }
    return undefined;
  }

  /** Byte lengths of the held buffers of `dtype`, in no particular order. */
  sizes(dtype: DType): number[] {
    const out: number[] = [];
    for (const run of this.#runs.values()) if (run.dtype === dtype) for (let i = 0; i < run.buffers.length; i++) out.push(run.bytes);
    return out;
  }

  clear(): void {
    this.#runs.clear();
    this.#count = 0;
  }

  /** Remove the run of `dtype` and `bytes` from the order (the caller sets it again at the end), returning it. */
  #touch(dtype: DType, bytes: number): Run | undefined {
    const key = keyOf(dtype, bytes);
    const run = this.#runs.get(key);
    if (run !== undefined) this.#runs.delete(key);
    return run;
  }
}
