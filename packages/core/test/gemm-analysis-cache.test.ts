// The GEMM-analysis cache as a caller sees it (R82, R116, R117): constructible, lent by the
// engine or supplied to a session, bound weakly to one bundle, capacity settable on the backend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, CpuProviderBundle, GemmAnalysisCache, Tensor, referenceGemmProvider } from '../src/index.js';
import { expectCode, expectThrows, onePerCpuTopology } from './helpers.js';

const a = Tensor.fromArray('f64', [3, 2], [1, 2, 3, 4, 5, 6]);
const b = Tensor.fromArray('f64', [2, 3], [1, 0, 0, 1, 1, 1]);
const dims = { contracting: [[1], [0]] } as const;

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1, providers: [] });
});
afterAll(async () => {
  await backend.close();
});

describe('GemmAnalysisCache (R116)', () => {
  it('is constructible with a capacity (default 1024); a bad capacity is InvalidArgument; shrinking clears, growing keeps', async () => {
    expect(new GemmAnalysisCache().stats()).toEqual({ capacity: 1024, stored: 0, hits: 0, misses: 0 });
    expectThrows(() => new GemmAnalysisCache(-1), 'InvalidArgument');
    expectThrows(() => new GemmAnalysisCache(1.5), 'InvalidArgument');
    const cache = new GemmAnalysisCache(8);
    await backend.withBackendSession(async (s) => {
      await s.dotGeneral(a, b, dims, { analysisSlot: 3 });
      await s.dotGeneral(a, b, dims);
    }, { gemmCache: cache });
    expect(cache.stats().stored).toBe(2);
    cache.setCapacity(16);
    expect(cache.stats()).toMatchObject({ capacity: 16, stored: 2 });
    cache.setCapacity(4);
    expect(cache.stats()).toMatchObject({ capacity: 4, stored: 0 });
    expectThrows(() => cache.setCapacity(-3), 'InvalidArgument');
  });
});

describe('withBackendSession(fn, { gemmCache }) (R82)', () => {
  it("uses the caller's cache; without one the engine's own is lent", async () => {
    const cache = new GemmAnalysisCache();
    const engineBefore = backend.analysisCacheStats()!;
    await backend.withBackendSession(async (s) => {
      await s.dotGeneral(a, b, dims, { analysisSlot: 1 });
      await s.dotGeneral(a, b, dims, { analysisSlot: 1 });
    }, { gemmCache: cache });
    expect(cache.stats()).toMatchObject({ stored: 1, hits: 1, misses: 1 });
    const engineMid = backend.analysisCacheStats()!;
    expect(engineMid.hits + engineMid.misses).toBe(engineBefore.hits + engineBefore.misses);
    await backend.withBackendSession(async (s) => {
      await s.dotGeneral(a, b, dims, { analysisSlot: 2 });
    });
    const engineAfter = backend.analysisCacheStats()!;
    expect(engineAfter.hits + engineAfter.misses).toBe(engineMid.hits + engineMid.misses + 1);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1 });
  });

  it('refuses a cache that is not a GemmAnalysisCache and unknown option keys, before any entry', async () => {
    const before = backend.executionInfo().executorEntries;
    await expectCode(backend.withBackendSession(() => 1, { gemmCache: {} as never }), 'InvalidArgument');
    await expectCode(backend.withBackendSession(() => 1, { cache: new GemmAnalysisCache() } as never), 'InvalidArgument');
    expect(backend.executionInfo().executorEntries).toEqual(before);
  });
});

describe('the cache follows one bundle (R117)', () => {
  it('dispatch with another bundle clears and rebinds; clear() keeps the binding', async () => {
    const cache = new GemmAnalysisCache();
    const other = backend.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider({ ...referenceGemmProvider, name: 'another' }).build());
    const run = (h: CpuBackend, slot: number) => h.withBackendSession((s) => s.dotGeneral(a, b, dims, { analysisSlot: slot }), { gemmCache: cache });
    await run(backend, 0);
    await run(backend, 1);
    expect(cache.isBoundTo(backend.providerBundle())).toBe(true);
    expect(cache.stats().stored).toBe(2);
    await run(other, 2);
    expect(cache.isBoundTo(other.providerBundle())).toBe(true);
    expect(cache.isBoundTo(backend.providerBundle())).toBe(false);
    expect(cache.stats().stored).toBe(1);
    cache.clear();
    expect(cache.stats().stored).toBe(0);
    expect(cache.isBoundTo(other.providerBundle())).toBe(true);
    // bound still: a hit after a store, no rebind in between
    await run(other, 2);
    await run(other, 2);
    expect(cache.stats()).toMatchObject({ stored: 1 });
    expect(cache.stats().hits).toBeGreaterThanOrEqual(1);
  });
});

describe('setAnalysisCacheCapacity (R5, R116)', () => {
  it('applies to current and future engines; bad capacities change nothing', async () => {
    const b2 = await CpuBackend.create({ threads: 1, providers: [], topology: onePerCpuTopology() });
    try {
      expect(b2.executionInfo().caches.gemmAnalysisCapacity).toBe(1024);
      b2.setAnalysisCacheCapacity(7);
      expect(b2.analysisCacheStats()?.capacity).toBe(7);
      expectThrows(() => b2.setAnalysisCacheCapacity(-1), 'InvalidArgument');
      expect(b2.executionInfo().caches.gemmAnalysisCapacity).toBe(7);
      const node = b2.topology().nodes[0]!;
      const later = b2.forPlacement({ numaNode: node.id });
      await later.ready();
      expect(later.analysisCacheStats()?.capacity).toBe(7);
    } finally {
      await b2.close();
    }
  });
});
