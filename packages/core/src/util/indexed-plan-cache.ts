import { invalidArgument } from '../errors/tenferro-error.js';
import { type NumberKey, numberKey, sameKey } from './number-key.js';

/** The bounds of an indexed-plan cache (R118): at most `maxEntries` plans of at most `maxBytes` together; a zero bound retains nothing. */
export interface IndexedPlanCacheLimits {
  readonly maxEntries: number;
  readonly maxBytes: number;
}

/** What the indexed-plan caches hold and how they served lookups. */
export interface IndexedPlanCacheStats extends IndexedPlanCacheLimits {
  /** Plans retained. */
  readonly entries: number;
  /** Bytes the retained plans declared. */
  readonly bytes: number;
  readonly hits: number;
  readonly misses: number;
  /** Plans dropped to fit the limits (least recently used first), by a lookup or a limit change. */
  readonly evictions: number;
}

/** The default limits: 1024 plans, 16 MiB. */
export const DEFAULT_INDEXED_PLAN_LIMITS: IndexedPlanCacheLimits = Object.freeze({ maxEntries: 1024, maxBytes: 16 * 1024 * 1024 });

/**
 * What a provider sees of its engine's indexed-plan cache (`ctx.indexedPlans`): plans of strided
 * operations — the work a provider does on the main thread before it starts kernel tasks (loop
 * order, splits over the pool, descriptors) — kept per engine and reused by identical requests.
 */
export interface CpuIndexedPlans {
  /**
   * The plan stored under `namespace` and `key`, or the one `build()` returns, which is then
   * retained within the cache's limits (R118) — or not at all when it would not fit. `namespace`
   * names the provider and whatever of its configuration the plan depends on (e.g.
   * `'tprims.avx2'`); `key` lists every number the plan depends on (extents, strides, dtype and
   * operation codes, lane count). A plan must never be mutated by its users. `bytes` is what the
   * plan holds, for the byte bound.
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * let builds = 0;
   * const plan = (extent: number) => ({ plan: { blocks: Math.ceil(extent / 64) }, bytes: 16 });
   * await backend.install((ctx) => {
   *   for (let i = 0; i < 3; i++) ctx.indexedPlans.getOrBuild('example.copy', [1000, 8], () => (builds++, plan(1000)));
   * });
   * console.log(builds, backend.indexedPlanCacheStats().hits); // prints: 1 2
   * await backend.close();
   * ```
   */
  getOrBuild<P>(namespace: string, key: readonly number[], build: () => { readonly plan: P; readonly bytes: number }): P;
}

interface Entry {
  readonly key: NumberKey;
  readonly plan: unknown;
  readonly bytes: number;
}

/**
 * One engine's indexed-plan cache (R118): least recently used plans evicted first, bounded by
 * `(maxEntries, maxBytes)`; a zero bound retains nothing; shrinking evicts at once. One entry per
 * (namespace, key hash): a colliding key replaces the entry (a miss, never a wrong hit).
 */
export class IndexedPlanCache implements CpuIndexedPlans {
  /** Most recently used last. */
  readonly #entries = new Map<string, Entry>();
  #limits: IndexedPlanCacheLimits;
  #bytes = 0;
  #hits = 0;
  #misses = 0;
  #evictions = 0;

  constructor(limits: IndexedPlanCacheLimits = DEFAULT_INDEXED_PLAN_LIMITS) {
    this.#limits = validIndexedPlanLimits(limits, 'IndexedPlanCache');
  }

  getOrBuild<P>(namespace: string, key: readonly number[], build: () => { readonly plan: P; readonly bytes: number }): P {
    const k = numberKey(key);
    const id = `${namespace}\u0000${k.hash}`;
    const entry = this.#entries.get(id);
    if (entry !== undefined && sameKey(entry.key, k)) {
      this.#hits++;
      this.#entries.delete(id);
      this.#entries.set(id, entry);
      return entry.plan as P;
    }
    this.#misses++;
    const built = build();
    const bytes = Number.isFinite(built.bytes) && built.bytes > 0 ? built.bytes : 0;
    if (entry !== undefined) this.#drop(id, entry);
    if (this.#limits.maxEntries > 0 && bytes <= this.#limits.maxBytes && this.#limits.maxBytes > 0) {
      this.#entries.set(id, { key: { hash: k.hash, numbers: [...key] }, plan: built.plan, bytes });
      this.#bytes += bytes;
      this.#trim();
    }
    return built.plan;
  }

  get limits(): IndexedPlanCacheLimits {
    return this.#limits;
  }

  /** New limits, validated by the caller; shrinking evicts least recently used plans at once. */
  setLimits(limits: IndexedPlanCacheLimits): void {
    this.#limits = limits;
    this.#trim();
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  stats(): IndexedPlanCacheStats {
    return { ...this.#limits, entries: this.#entries.size, bytes: this.#bytes, hits: this.#hits, misses: this.#misses, evictions: this.#evictions };
  }

  #trim(): void {
    const { maxEntries, maxBytes } = this.#limits;
    for (const [id, entry] of this.#entries) {
      if (this.#entries.size <= maxEntries && this.#bytes <= maxBytes) break;
      this.#drop(id, entry);
      this.#evictions++;
    }
  }

  #drop(id: string, entry: Entry): void {
    this.#entries.delete(id);
    this.#bytes -= entry.bytes;
  }
}

/** `limits` checked field by field (`InvalidArgument`), unknown keys refused, returned frozen. */
export function validIndexedPlanLimits(limits: unknown, op: string): IndexedPlanCacheLimits {
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) throw invalidArgument(op, 'limits', '{ maxEntries, maxBytes }', limits);
  for (const key of Object.keys(limits)) {
    if (key !== 'maxEntries' && key !== 'maxBytes') throw invalidArgument(op, `limits.${key}`, 'one of maxEntries, maxBytes', key);
  }
  const l = limits as IndexedPlanCacheLimits;
  for (const name of ['maxEntries', 'maxBytes'] as const) {
    if (!Number.isSafeInteger(l[name]) || l[name] < 0) throw invalidArgument(op, `limits.${name}`, 'a non-negative integer', l[name]);
  }
  return Object.freeze({ maxEntries: l.maxEntries, maxBytes: l.maxBytes });
}
