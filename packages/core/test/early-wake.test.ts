// When the main thread wakes up before a task's usual end to watch it from the event loop
// (runtime/workers/early-wake.ts): the rule for every task length, thread count and CPU count.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CROWDED_MIN_NS, CROWDED_WINDOW_NS, SPARE_MIN_NS, SPARE_WINDOW_NS, earlyWakeNs } from '../src/runtime/workers/early-wake.js';

const usual = fc.double({ min: 0, max: 1e9, noNaN: true });
const threads = fc.integer({ min: 1, max: 256 });
const cpus = fc.option(fc.integer({ min: 1, max: 256 }), { nil: undefined });

describe('earlyWakeNs', () => {
  it('tasks of 24 ms or more wake early whatever the CPUs; shorter ones only with a CPU to spare, from 4 ms', () => {
    fc.assert(
      fc.property(usual, threads, cpus, (u, t, c) => {
        const spare = c !== undefined && t < c;
        const expected = u >= CROWDED_MIN_NS ? CROWDED_WINDOW_NS : u >= SPARE_MIN_NS && spare ? SPARE_WINDOW_NS : undefined;
        expect(earlyWakeNs(u, t, c)).toBe(expected);
      }),
    );
  });

  it('the window is shorter than the task, so the main thread sleeps first', () => {
    fc.assert(
      fc.property(usual, threads, cpus, (u, t, c) => {
        const w = earlyWakeNs(u, t, c);
        if (w !== undefined) expect(w).toBeLessThan(u);
      }),
    );
  });

  it('the boundaries: 4 ms with one CPU free, 24 ms with none, unknown CPUs as none free', () => {
    expect(earlyWakeNs(SPARE_MIN_NS, 1, 2)).toBe(SPARE_WINDOW_NS);
    expect(earlyWakeNs(SPARE_MIN_NS - 1, 1, 2)).toBeUndefined();
    expect(earlyWakeNs(SPARE_MIN_NS, 2, 2)).toBeUndefined();
    expect(earlyWakeNs(SPARE_MIN_NS, 1, undefined)).toBeUndefined();
    expect(earlyWakeNs(CROWDED_MIN_NS, 2, 2)).toBe(CROWDED_WINDOW_NS);
    expect(earlyWakeNs(CROWDED_MIN_NS, 1, undefined)).toBe(CROWDED_WINDOW_NS);
  });
});
