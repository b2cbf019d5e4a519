// The indexed-plan cache (R118, R5): bounded per engine by { maxEntries, maxBytes }, least
// recently used evicted first, reachable by providers through ctx.indexedPlans, controlled on the
// backend for every engine at once.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, type CpuGemmProvider, CpuProviderBundle, Tensor, referenceGemmProvider } from '../src/index.js';
import { IndexedPlanCache } from '../src/util/indexed-plan-cache.js';
import { expectThrows, onePerCpuTopology } from './helpers.js';

describe('IndexedPlanCache', () => {
  it('keeps plans within both bounds, least recently used evicted first; a zero bound keeps nothing', () => {
    const c = new IndexedPlanCache({ maxEntries: 2, maxBytes: 100 });
    let builds = 0;
    const get = (k: number, bytes = 10) => c.getOrBuild('t', [k], () => (builds++, { plan: `p${k}`, bytes }));
    expect(get(1)).toBe('p1');
    expect(get(2)).toBe('p2');
    expect(get(1)).toBe('p1'); // 1 is now the most recent
    expect(builds).toBe(2);
    get(3); // evicts 2
    expect(c.stats()).toMatchObject({ entries: 2, bytes: 20, evictions: 1 });
    get(1);
    expect(builds).toBe(3);
    get(2);
    expect(builds).toBe(4);
    get(4, 95); // too many bytes with anything else: everything older goes
    expect(c.stats()).toMatchObject({ entries: 1, bytes: 95 });
    get(5, 101); // larger than maxBytes: built, never retained
    expect(c.stats()).toMatchObject({ entries: 1, bytes: 95 });
    // namespaces keep equal keys apart
    expect(c.getOrBuild('u', [4], () => ({ plan: 'u4', bytes: 1 }))).toBe('u4');
    const zero = new IndexedPlanCache({ maxEntries: 0, maxBytes: 100 });
    zero.getOrBuild('t', [1], () => ({ plan: 1, bytes: 1 }));
    expect(zero.stats().entries).toBe(0);
    const noBytes = new IndexedPlanCache({ maxEntries: 10, maxBytes: 0 });
    noBytes.getOrBuild('t', [1], () => ({ plan: 1, bytes: 0 }));
    expect(noBytes.stats().entries).toBe(0);
  });

  it('shrinking evicts least recently used plans at once', () => {
    const c = new IndexedPlanCache({ maxEntries: 10, maxBytes: 1000 });
    for (let k = 0; k < 5; k++) c.getOrBuild('t', [k], () => ({ plan: k, bytes: 10 }));
    c.getOrBuild('t', [0], () => ({ plan: -1, bytes: 10 })); // 0 most recent
    c.setLimits({ maxEntries: 2, maxBytes: 1000 });
    expect(c.stats()).toMatchObject({ entries: 2, evictions: 3 });
    let rebuilt = false;
    expect(c.getOrBuild('t', [0], () => ((rebuilt = true), { plan: -2, bytes: 10 }))).toBe(0);
    expect(c.getOrBuild('t', [4], () => ((rebuilt = true), { plan: -2, bytes: 10 }))).toBe(4);
    expect(rebuilt).toBe(false);
    c.setLimits({ maxEntries: 2, maxBytes: 15 });
    expect(c.stats()).toMatchObject({ entries: 1, bytes: 10 });
  });

  it('behaves like a least-recently-used model under any sequence of lookups and limit changes (property)', () => {
    type Step = { kind: 'get'; key: number; bytes: number } | { kind: 'limits'; maxEntries: number; maxBytes: number };
    const step = fc.oneof(
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 7 }), bytes: fc.integer({ min: 0, max: 40 }) }),
      fc.record({ kind: fc.constant('limits' as const), maxEntries: fc.integer({ min: 0, max: 6 }), maxBytes: fc.integer({ min: 0, max: 120 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps: Step[]) => {
        const c = new IndexedPlanCache({ maxEntries: 4, maxBytes: 80 });
        let limits = { maxEntries: 4, maxBytes: 80 };
        let model: { key: number; bytes: number }[] = []; // most recent last
        const trim = () => {
          while (model.length > limits.maxEntries || model.reduce((n, e) => n + e.bytes, 0) > limits.maxBytes) model.shift();
        };
        for (const s of steps) {
          if (s.kind === 'limits') {
            limits = { maxEntries: s.maxEntries, maxBytes: s.maxBytes };
            c.setLimits(limits);
            trim();
            continue;
          }
          let built = false;
          const plan = c.getOrBuild('m', [s.key], () => ((built = true), { plan: s.key, bytes: s.bytes }));
          expect(plan).toBe(s.key);
          const at = model.findIndex((e) => e.key === s.key);
          expect(built).toBe(at < 0);
          if (at >= 0) model.push(...model.splice(at, 1));
          else if (limits.maxEntries > 0 && limits.maxBytes > 0 && s.bytes <= limits.maxBytes) {
            model.push({ key: s.key, bytes: s.bytes });
            trim();
          }
          const st = c.stats();
          expect(st.entries).toBe(model.length);
          expect(st.bytes).toBe(model.reduce((n, e) => n + e.bytes, 0));
          expect(st.entries).toBeLessThanOrEqual(limits.maxEntries);
          expect(st.bytes).toBeLessThanOrEqual(limits.maxBytes);
        }
      }),
    );
  });
});

describe('backend controls (R5, R118)', () => {
  let backend: CpuBackend;
  beforeAll(async () => {
    backend = await CpuBackend.create({ threads: 1, providers: [], topology: onePerCpuTopology() });
  });
  afterAll(async () => {
    await backend.close();
  });

  /** A GEMM provider that plans through ctx.indexedPlans, counting the plans it had to build. */
  function planning() {
    let builds = 0;
    const provider: CpuGemmProvider = {
      ...referenceGemmProvider,
      async gemm(ctx, req) {
        ctx.indexedPlans.getOrBuild('test.planning', [req.m, req.n, req.k, req.lhs.rowStride, req.lhs.colStride], () => (builds++, { plan: { m: req.m }, bytes: 64 }));
        return referenceGemmProvider.gemm(ctx, req);
      },
    };
    return { provider, builds: () => builds };
  }

  it('providers reach the engine cache through ctx.indexedPlans: an identical request reuses the plan', async () => {
    const { provider, builds } = planning();
    const h = backend.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(provider).build());
    h.clearIndexedPlanCache();
    const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    const before = h.indexedPlanCacheStats();
    await h.matmul(x, x);
    await h.matmul(x, x);
    await h.matmul(x, Tensor.zeros('f64', [2, 3]));
    expect(builds()).toBe(2);
    const after = h.indexedPlanCacheStats();
    expect(after.hits - before.hits).toBe(1);
    expect(after.entries).toBe(2);
    expect(after.bytes).toBe(128);
    h.clearIndexedPlanCache();
    expect(h.indexedPlanCacheStats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('limits apply to current and future engines; invalid limits are InvalidArgument and change no engine', async () => {
    const { provider } = planning();
    const h = backend.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(provider).build());
    const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    for (let n = 1; n <= 4; n++) await h.matmul(x, Tensor.zeros('f64', [2, n]));
    expect(h.indexedPlanCacheStats().entries).toBeGreaterThanOrEqual(4);
    h.setIndexedPlanCacheLimits({ maxEntries: 2, maxBytes: 1 << 20 });
    expect(h.indexedPlanCacheLimits()).toEqual({ maxEntries: 2, maxBytes: 1 << 20 });
    expect(h.indexedPlanCacheStats().entries).toBe(2);
    expect(h.executionInfo().caches.indexedPlans).toEqual({ maxEntries: 2, maxBytes: 1 << 20 });
    for (const bad of [{ maxEntries: -1, maxBytes: 1 }, { maxEntries: 1 }, { maxEntries: 1, maxBytes: 1, extra: 1 }, null, { maxEntries: 1.5, maxBytes: 2 }]) {
      expectThrows(() => h.setIndexedPlanCacheLimits(bad as never), 'InvalidArgument');
    }
    expect(h.indexedPlanCacheLimits()).toEqual({ maxEntries: 2, maxBytes: 1 << 20 });
    // a future engine (another NUMA placement) is built with the coordinator's limits: 2 plans more at most
    const node = h.topology().nodes[0]!;
    const later = h.forPlacement({ numaNode: node.id });
    for (let n = 1; n <= 4; n++) await later.matmul(x, Tensor.zeros('f64', [2, n]));
    expect(later.indexedPlanCacheStats().entries).toBe(4);
    h.setIndexedPlanCacheLimits({ maxEntries: 0, maxBytes: 1 << 20 });
    expect(later.indexedPlanCacheStats()).toMatchObject({ entries: 0, bytes: 0, maxEntries: 0 });
    h.setIndexedPlanCacheLimits({ maxEntries: 1024, maxBytes: 16 << 20 });
  });
});
