/**
 * A few items added and removed in any order, with no allocation per add or removal. For the
 * sets of the per-call path (close listeners, tasks in flight): a `Set` that empties again shrinks
 * its hash table, 120 bytes of garbage per removal, three times per operation.
 */
export class SmallSet<T> {
  #items: T[] = [];

  get size(): number {
    return this.#items.length;
  }

  add(item: T): void {
    this.#items.push(item);
  }

  /** Remove one occurrence of `item` (the order of the others may change); false when absent. */
  delete(item: T): boolean {
    const items = this.#items;
    const at = items.lastIndexOf(item);
    if (at < 0) return false;
    const last = items.pop()!;
    if (at < items.length) items[at] = last;
    return true;
  }

  /** The items now, as a new array. */
  toArray(): T[] {
    return this.#items.slice();
  }

  /** Every item, leaving the set empty. */
  drain(): T[] {
    const items = this.#items;
    this.#items = [];
    return items;
  }

  [Symbol.iterator](): Iterator<T> {
    return this.#items[Symbol.iterator]();
  }
}
