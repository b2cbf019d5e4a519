/**
 * Keys made of numbers (extents, strides, axes), for caches on the hot path: hashed for the
 * lookup and compared element by element on a hit, so no string is built per call.
 */
export interface NumberKey {
  readonly hash: number;
  readonly numbers: readonly number[];
}

/** Append `xs` (with its length, so that concatenations stay unambiguous) to `out`. */
export function pushNumbers(out: number[], xs: readonly number[]): void {
  out.push(xs.length);
  for (let i = 0; i < xs.length; i++) out.push(xs[i]!);
}

export function numberKey(numbers: readonly number[]): NumberKey {
  let h = 0x811c9dc5;
  for (let i = 0; i < numbers.length; i++) {
    const x = numbers[i]!;
    // Integers up to 2^53: mix both 32-bit halves.
    h = Math.imul(h ^ (x | 0), 0x01000193);
    h = Math.imul(h ^ ((x / 4294967296) | 0), 0x01000193);
  }
  return { hash: h >>> 0, numbers };
}

export function sameKey(a: NumberKey, b: NumberKey): boolean {
  if (a.hash !== b.hash || a.numbers.length !== b.numbers.length) return false;
  for (let i = 0; i < a.numbers.length; i++) if (a.numbers[i] !== b.numbers[i]) return false;
  return true;
}

/**
 * A bounded map from number keys to values, least recently used evicted first. One entry per
 * hash: a colliding key replaces the entry (a miss, never a wrong hit).
 */
export class NumberKeyCache<V> {
  readonly #entries = new Map<number, { key: NumberKey; value: V }>();
  #capacity: number;
  /** Hash of the most recently used entry (a hit on it needs no reordering). */
  #newest: number | undefined;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  get(key: NumberKey): V | undefined {
    const entry = this.#entries.get(key.hash);
    if (entry === undefined || !sameKey(entry.key, key)) return undefined;
    if (this.#newest !== key.hash) {
      // Most recently used last.
      this.#entries.delete(key.hash);
      this.#entries.set(key.hash, entry);
      this.#newest = key.hash;
    }
    return entry.value;
  }

  set(key: NumberKey, value: V): void {
    if (this.#capacity === 0) return;
    this.#entries.delete(key.hash);
    while (this.#entries.size >= this.#capacity) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key.hash, { key, value });
    this.#newest = key.hash;
  }

  get size(): number {
    return this.#entries.size;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Change the bound; shrinking clears (R116's rule for the analysis cache). */
  setCapacity(capacity: number): void {
    if (capacity < this.#capacity) this.clear();
    this.#capacity = capacity;
  }

  clear(): void {
    this.#entries.clear();
    this.#newest = undefined;
  }
}
