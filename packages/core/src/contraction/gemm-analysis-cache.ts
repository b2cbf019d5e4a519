import { invalidArgument } from '../errors/tenferro-error.js';
import { type NumberKey, NumberKeyCache, numberKey, sameKey } from '../util/number-key.js';
import type { DotGeneralSpec } from './validate-dot-general.js';
import type { GemmAnalysis } from './gemm-plan.js';

/** The default capacity of a GEMM-analysis cache (R116): slots 0…1023. */
export const DEFAULT_ANALYSIS_SLOTS = 1024;

/** What a {@link GemmAnalysisCache} holds and how it served lookups. */
export interface GemmAnalysisCacheStats {
  /** Slots `0 … capacity - 1` are stored; as many automatic entries are kept for calls without a slot. */
  readonly capacity: number;
  /** Analyses stored (slots and automatic entries). */
  readonly stored: number;
  /** Dot-generals that reused a stored analysis. */
  readonly hits: number;
  /** Dot-generals that were analysed afresh. */
  readonly misses: number;
}

/**
 * A cache of GEMM analyses (R116, R117). Each engine owns one, lent to its operations and
 * sessions; an application may make its own (`new GemmAnalysisCache(capacity)`) and hand it to
 * `withBackendSession(fn, { gemmCache })` (R82), e.g. to keep the analyses of one model apart from
 * everything else the engine runs.
 *
 * Per-engine cache of GEMM analyses, in caller-addressed slots (R116) and automatically for calls
 * that name no slot (keyed by layout, least recently used evicted). An entry is reused only
 * when lhs/rhs shapes and strides, the four axis lists and the output strides are identical;
 * slots at or above the capacity are not stored; shrinking the capacity clears every slot. The
 * cache is bound weakly to one bundle identity: dispatch with another bundle (or after the bound
 * one was collected) clears it and rebinds; `clear()` keeps the binding (R117).
 */
export class GemmAnalysisCache {
  #slots: ({ key: NumberKey; analysis: GemmAnalysis } | undefined)[] = [];
  /** Analyses of calls without a slot, least recently used evicted (at most `capacity`). */
  readonly #auto: NumberKeyCache<GemmAnalysis>;
  #capacity: number;
  #bound: WeakRef<object> | undefined;
  #hits = 0;
  #misses = 0;

  /** A cache of `capacity` slots (default 1024), bound to no bundle yet. `InvalidArgument` for a capacity that is not a non-negative integer. */
  constructor(capacity = DEFAULT_ANALYSIS_SLOTS) {
    this.#capacity = validCapacity(capacity);
    this.#auto = new NumberKeyCache(this.#capacity);
  }

  /**
   * Bind to `bundle`, clearing every slot when it differs from the bound one (or the bound one was collected).
   * @internal
   */
  bind(bundle: object): void {
    if (this.#bound?.deref() !== bundle) {
      this.#slots = [];
      this.#auto.clear();
      this.#bound = new WeakRef(bundle);
    }
  }

  /**
   * Whether the cache is bound to `bundle` (the bundle of the last dispatch that used it, while that
   * bundle is alive): `clear()` keeps the binding, a dispatch with another bundle moves it (R117).
   *
   * @example
   * ```ts
   * import { CpuBackend, GemmAnalysisCache, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const cache = new GemmAnalysisCache(8);
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * console.log(cache.isBoundTo(backend.providerBundle())); // prints: false
   * await backend.withBackendSession((session) => session.dotGeneral(a, a, { contracting: [[1], [0]] }), { gemmCache: cache });
   * console.log(cache.isBoundTo(backend.providerBundle())); // prints: true
   * await backend.close();
   * ```
   */
  isBoundTo(bundle: object): boolean {
    return this.#bound !== undefined && this.#bound.deref() === bundle;
  }

  /**
   * The automatic cache of calls that name no slot: keyed by layout (the same identity as a
   * slot's, R116), bounded by the capacity, least recently used evicted first.
   * @internal
   */
  lookupAuto(key: NumberKey): GemmAnalysis | undefined {
    const analysis = this.#auto.get(key);
    if (analysis === undefined) this.#misses++;
    else this.#hits++;
    return analysis;
  }

  /** @internal */
  storeAuto(key: NumberKey, analysis: GemmAnalysis): void {
    this.#auto.set(key, analysis);
  }

  /** @internal */
  lookup(slot: number, key: NumberKey): GemmAnalysis | undefined {
    const entry = this.#slots[slot];
    if (entry !== undefined && sameKey(entry.key, key)) {
      this.#hits++;
      return entry.analysis;
    }
    this.#misses++;
    return undefined;
  }

  /** @internal */
  store(slot: number, key: NumberKey, analysis: GemmAnalysis): void {
    if (slot < this.#capacity) this.#slots[slot] = { key, analysis };
  }

  /**
   * Change the capacity; shrinking clears every slot (R116). `InvalidArgument` for a capacity that is not a non-negative integer.
   *
   * @example
   * ```ts
   * import { GemmAnalysisCache } from '@tenferro/core';
   *
   * const cache = new GemmAnalysisCache(4);
   * cache.setCapacity(64);
   * console.log(cache.stats().capacity); // prints: 64
   * ```
   */
  setCapacity(capacity: number): void {
    const next = validCapacity(capacity);
    if (next < this.#capacity) this.#slots = [];
    this.#auto.setCapacity(next);
    this.#capacity = next;
  }

  /**
   * Drop every analysis; the bundle binding stays (R117).
   *
   * @example
   * ```ts
   * import { CpuBackend, GemmAnalysisCache, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const cache = new GemmAnalysisCache();
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * await backend.withBackendSession((session) => session.dotGeneral(a, a, { contracting: [[1], [0]] }, { analysisSlot: 0 }), { gemmCache: cache });
   * console.log(cache.stats().stored); // prints: 1
   * cache.clear();
   * console.log(cache.stats().stored, cache.isBoundTo(backend.providerBundle())); // prints: 0 true
   * await backend.close();
   * ```
   */
  clear(): void {
    this.#slots = [];
    this.#auto.clear();
  }

  /**
   * The capacity, what is stored, and the hits and misses so far.
   *
   * @example
   * ```ts
   * import { CpuBackend, GemmAnalysisCache, Tensor } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const cache = new GemmAnalysisCache(16);
   * const a = Tensor.fromArray('f64', [3, 3], new Float64Array(9));
   * await backend.withBackendSession(async (session) => {
   *   for (let i = 0; i < 3; i++) await session.dotGeneral(a, a, { contracting: [[1], [0]] }, { analysisSlot: 5 });
   * }, { gemmCache: cache });
   * console.log(cache.stats()); // prints: { capacity: 16, stored: 1, hits: 2, misses: 1 }
   * await backend.close();
   * ```
   */
  stats(): GemmAnalysisCacheStats {
    return { capacity: this.#capacity, stored: this.#slots.filter(Boolean).length + this.#auto.size, hits: this.#hits, misses: this.#misses };
  }
}

/** What makes two analyses interchangeable (R116). */
export function analysisKey(spec: DotGeneralSpec, outStrides: readonly number[]): NumberKey {
  const structure = spec.structureKey;
  const l = spec.lhs.strides;
  const r = spec.rhs.strides;
  // Filled in place at its final length: pushes would grow (and copy) it three times per call.
  const numbers = new Array<number>(structure.length + 3 + l.length + r.length + outStrides.length);
  let at = 0;
  for (let i = 0; i < structure.length; i++) numbers[at++] = structure[i]!;
  at = putNumbers(numbers, at, l);
  at = putNumbers(numbers, at, r);
  putNumbers(numbers, at, outStrides);
  return numberKey(numbers);
}

/** `pushNumbers` into a preallocated array from `at`; returns the next free index. */
function putNumbers(out: number[], at: number, xs: readonly number[]): number {
  out[at++] = xs.length;
  for (let i = 0; i < xs.length; i++) out[at++] = xs[i]!;
  return at;
}

function validCapacity(capacity: number): number {
  if (!Number.isSafeInteger(capacity) || capacity < 0) throw invalidArgument('GemmAnalysisCache', 'capacity', 'a non-negative integer', capacity);
  return capacity;
}
