import { type PerformanceEntry, PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CpuBackend, Tensor } from '../src/index.js';
import { tensorInternals } from '../src/tensor/tensor.js';
import { bulkExternalMemory, youngCollectionAsks } from '../src/tensor/tensor-storage.js';
import { fillYoungGeneration } from '../src/tensor/young-generation.js';

// `--expose-gc` for this process: the loops below start from a settled heap.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MiB = 1024 * 1024;
const youngFree = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')!.space_available_size;
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('asking V8 for a scavenge (#38)', () => {
  it('fills at most its budget a call, says when it reached the end, and reaching it runs a scavenge', async () => {
    const scavenges: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
        if (detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges.push(entry.startTime);
      }
    });
    observer.observe({ entryTypes: ['gc'] });
    try {
      // Start from an empty young generation: one fill to its end.
      fillYoungGeneration(Infinity);
      await turn();
      const free = youngFree();
      expect(free).toBeGreaterThan(MiB);
      const budget = Math.floor(free / 4);
      const seen = scavenges.length;
      expect(fillYoungGeneration(budget)).toBe(false);
      // It made its budget of garbage (the free space shrank by it, give or take a few strings and
      // whatever else ran meanwhile), not the whole free space (four budgets).
      const used = free - youngFree();
      expect(used).toBeGreaterThanOrEqual(budget);
      expect(used).toBeLessThan(2 * budget);
      let calls = 1;
      while (!fillYoungGeneration(MiB)) {
        calls++;
        expect(calls).toBeLessThan(64);
      }
      await turn();
      await turn();
      expect(scavenges.length).toBeGreaterThan(seen);
      expect(calls).toBeGreaterThanOrEqual(2);
    } finally {
      observer.disconnect();
    }
  });
});

describe('a loop dropping mid-size outputs asks V8 for scavenges (#38)', () => {
  /** Settle what earlier tests left: collected, home, and the counts back down. */
  const settle = async () => {
    for (let i = 0; i < 3; i++) {
      gc();
      await turn();
    }
  };

  it('gets 256 KiB outputs home through the scavenges it asks for, before V8 is told of them (which would start full collections)', async () => {
    const own = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      const a = Tensor.zeros('f32', [256, 8]);
      const b = Tensor.zeros('f32', [8, 256]);
      await settle();
      const start = youngCollectionAsks();
      const told = bulkExternalMemory().told;
      let mostOut = 0;
      let mostTold = 0;
      // 320 outputs of 256 KiB: 80 MiB dropped, never disposed, no gc() call.
      for (let i = 0; i < 320; i++) {
        await own.matmul(a, b);
        mostOut = Math.max(mostOut, youngCollectionAsks().pooledOut - start.pooledOut);
        mostTold = Math.max(mostTold, bulkExternalMemory().told - told);
      }
      expect(youngCollectionAsks().asks - start.asks).toBeGreaterThanOrEqual(3);
      // Out of the pool at most: the 20 MiB that asks, and the outputs of the turns until it is home.
      expect(mostOut).toBeLessThan(bulkExternalMemory().allowance);
      expect(mostTold).toBe(0);
      expect(own.bufferPoolStats().returnedByCollection).toBeGreaterThan(200);
    } finally {
      await own.close();
    }
  });

  it('asks less and less often while the outputs it makes stay alive: an ask that brought nothing home doubles the wait', async () => {
    const own = await CpuBackend.create({ threads: 1, providers: [] });
    const kept: Tensor[] = [];
    try {
      const a = Tensor.zeros('f32', [256, 8]);
      const b = Tensor.zeros('f32', [8, 256]);
      await settle();
      const start = youngCollectionAsks();
      // 280 outputs of 256 KiB kept: 70 MiB. Asks at 20, then after 40 more (60), then 80 more (140);
      // without the doubling, at 20, 40 and 60.
      for (let i = 0; i < 280; i++) kept.push(await own.matmul(a, b));
      await turn();
      const asks = youngCollectionAsks().asks - start.asks;
      expect(asks).toBeGreaterThanOrEqual(1);
      expect(asks).toBeLessThanOrEqual(2);
      expect(youngCollectionAsks().pooledOut - start.pooledOut).toBe(kept.reduce((sum, t) => sum + tensorInternals.storage(t).bytes, 0));
      for (const t of kept.splice(0)) t.dispose();
      expect(youngCollectionAsks().pooledOut).toBe(start.pooledOut);
    } finally {
      for (const t of kept) t.dispose();
      await own.close();
    }
  });
});
