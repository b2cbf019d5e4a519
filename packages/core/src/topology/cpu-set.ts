import { TenferroError } from '../errors/tenferro-error.js';
import { formatCpuList, normalizeCpuIds, parseCpuList } from './cpu-list.js';

const CONSTRUCT = Symbol('CpuSet.construct');

/**
 * An immutable, sorted, de-duplicated, non-empty set of OS logical CPU ids.
 *
 * Ids are the kernel's own (sparse: offline or disallowed CPUs leave gaps); they are never
 * renumbered. Two sets conflict in the arbiter iff they {@link CpuSet.overlaps | overlap}.
 */
export class CpuSet {
  readonly #ids: readonly number[];
  #text: string | undefined;

  /** @internal use {@link CpuSet.of} or {@link CpuSet.parse}. */
  constructor(token: typeof CONSTRUCT, sortedUnique: readonly number[]) {
    if (token !== CONSTRUCT) throw new TypeError('CpuSet: use CpuSet.of() or CpuSet.parse()');
    this.#ids = Object.freeze(sortedUnique);
  }

  /**
   * A set of the given ids (any order, duplicates allowed). Empty → `EmptyCpuSet`; bad id → `InvalidCpuList`.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(String(CpuSet.of([3, 1, 2, 2]))); // prints: 1-3
   * ```
   */
  static of(ids: Iterable<number>): CpuSet {
    return CpuSet.#fromSorted(normalizeCpuIds(ids, 'CpuSet.of'), 'CpuSet.of');
  }

  /**
   * Parse a Linux cpulist (`0-3,8`, `0-15:2/4`). Errors: `InvalidCpuList`, `EmptyCpuSet`.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * const set = CpuSet.parse('0-3,8');
   * console.log(set.size, set.toArray()); // prints: 5 [ 0, 1, 2, 3, 8 ]
   * ```
   */
  static parse(list: string): CpuSet {
    return CpuSet.#fromSorted(parseCpuList(list, 'CpuSet.parse'), 'CpuSet.parse');
  }

  static #fromSorted(ids: number[], op: string): CpuSet {
    if (ids.length === 0) throw new TenferroError('EmptyCpuSet', 'a CPU set must contain at least one CPU', { op });
    return new CpuSet(CONSTRUCT, ids);
  }

  /** Number of CPUs. */
  get size(): number {
    return this.#ids.length;
  }

  /** Lowest CPU id. */
  get first(): number {
    return this.#ids[0]!;
  }

  /** Highest CPU id. */
  get last(): number {
    return this.#ids[this.#ids.length - 1]!;
  }

  /**
   * Whether CPU `id` is in the set.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(CpuSet.parse('0-3').has(2), CpuSet.parse('0-3').has(4)); // prints: true false
   * ```
   */
  has(id: number): boolean {
    const ids = this.#ids;
    let lo = 0;
    let hi = ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = ids[mid]!;
      if (v === id) return true;
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /**
   * The ids, ascending (a fresh array).
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(CpuSet.parse('4,0-1').toArray()); // prints: [ 0, 1, 4 ]
   * ```
   */
  toArray(): number[] {
    return [...this.#ids];
  }

  /**
   * The CPU ids in ascending order.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * const ids: number[] = [];
   * for (const id of CpuSet.parse('6,0-2')) ids.push(id);
   * console.log(ids, Math.max(...CpuSet.of([4, 9]))); // prints: [ 0, 1, 2, 6 ] 9
   * ```
   */
  [Symbol.iterator](): Iterator<number> {
    return this.#ids[Symbol.iterator]();
  }

  /**
   * Whether the two sets share a CPU.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(CpuSet.parse('0-3').overlaps(CpuSet.parse('3-5'))); // prints: true
   * ```
   */
  overlaps(other: CpuSet): boolean {
    if (this.last < other.first || other.last < this.first) return false;
    const a = this.#ids;
    const b = other.#ids;
    let i = 0;
    let j = 0;
    while (i < a.length && j < b.length) {
      if (a[i] === b[j]) return true;
      if (a[i]! < b[j]!) i++;
      else j++;
    }
    return false;
  }

  /**
   * The common CPUs, or `undefined` when there are none (CPU sets are never empty).
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(String(CpuSet.parse('0-3').intersect(CpuSet.parse('2-5'))), CpuSet.parse('0').intersect(CpuSet.parse('1'))); // prints: 2-3 undefined
   * ```
   */
  intersect(other: CpuSet): CpuSet | undefined {
    const out = this.#merge(other, (inA, inB) => inA && inB);
    return out.length === 0 ? undefined : new CpuSet(CONSTRUCT, out);
  }

  /**
   * The CPUs of either set.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(String(CpuSet.parse('0-1').union(CpuSet.parse('4')))); // prints: 0-1,4
   * ```
   */
  union(other: CpuSet): CpuSet {
    return new CpuSet(CONSTRUCT, this.#merge(other, (inA, inB) => inA || inB));
  }

  /**
   * CPUs of this set that are not in `other`, or `undefined` when none remain.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(String(CpuSet.parse('0-3').difference(CpuSet.parse('1-2')))); // prints: 0,3
   * ```
   */
  difference(other: CpuSet): CpuSet | undefined {
    const out = this.#merge(other, (inA, inB) => inA && !inB);
    return out.length === 0 ? undefined : new CpuSet(CONSTRUCT, out);
  }

  /**
   * Whether every CPU of this set is in `other`.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(CpuSet.parse('1-2').isSubsetOf(CpuSet.parse('0-3'))); // prints: true
   * ```
   */
  isSubsetOf(other: CpuSet): boolean {
    if (this.size > other.size) return false;
    for (const id of this.#ids) if (!other.has(id)) return false;
    return true;
  }

  /**
   * Whether the two sets hold the same CPUs.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(CpuSet.parse('0,1,2').equals(CpuSet.parse('0-2'))); // prints: true
   * ```
   */
  equals(other: CpuSet): boolean {
    if (this === other) return true;
    if (this.size !== other.size) return false;
    const b = other.#ids;
    return this.#ids.every((v, i) => v === b[i]);
  }

  /**
   * Canonical Linux cpulist, e.g. `0-3,8`.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(CpuSet.of([0, 1, 2, 5]).toString()); // prints: 0-2,5
   * ```
   */
  toString(): string {
    return (this.#text ??= formatCpuList(this.#ids));
  }

  /**
   * The Linux cpulist string (as `toString()`), so that sets serialise readably.
   *
   * @example
   * ```ts
   * import { CpuSet } from '@tenferro/core';
   *
   * console.log(JSON.stringify({ cpus: CpuSet.parse('0-2') })); // prints: {"cpus":"0-2"}
   * ```
   */
  toJSON(): string {
    return this.toString();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `CpuSet(${this.toString()})`;
  }

  #merge(other: CpuSet, keep: (inA: boolean, inB: boolean) => boolean): number[] {
    const a = this.#ids;
    const b = other.#ids;
    const out: number[] = [];
    let i = 0;
    let j = 0;
    while (i < a.length || j < b.length) {
      const x = i < a.length ? a[i]! : Infinity;
      const y = j < b.length ? b[j]! : Infinity;
      const v = Math.min(x, y);
      if (keep(x === v, y === v)) out.push(v);
      if (x === v) i++;
      if (y === v) j++;
    }
    return out;
  }
}
