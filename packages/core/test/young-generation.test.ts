import { type PerformanceEntry, PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { fillYoungGeneration } from '../src/tensor/young-generation.js';

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
      // It made its budget of garbage (the free space shrank by it, to within one 120,000-byte string), no more.
      const used = free - youngFree();
      expect(used).toBeGreaterThanOrEqual(budget);
      expect(used).toBeLessThan(budget + 2 * 120_000 + 64 * 1024);
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
