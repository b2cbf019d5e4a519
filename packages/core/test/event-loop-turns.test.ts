// The event loop stays free while tenferro computes (#37): an answer seen in the main thread's
// short poll settles as a microtask, so without a budget a tight `await` loop of small operations
// (or a `Promise.all` of hundreds) would never let the event loop turn; and the main thread never
// blocks in `Atomics.wait`. Nothing here is timed: turns and calls are counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { CpuBackend, DIAGNOSTICS_CHANNELS, Tensor, discoverCpuTopology, type TaskEvent } from '../src/index.js';
import { gate, kernel, until } from './helpers.js';

const noop = kernel('noop');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');
const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;

/** The budget of answers between two event-loop turns (engine-worker.ts `SYNC_ANSWER_BUDGET`). */
const BUDGET = 128;

/**
 * A `setImmediate` heartbeat that counts the completions the caller reports between two of its
 * runs: `most` is the longest run of completions the event loop did not get a turn in.
 */
function heartbeat() {
  let since = 0;
  let most = 0;
  let beats = 0;
  let on = true;
  const beat = () => {
    most = Math.max(most, since);
    since = 0;
    beats++;
    if (on) setImmediate(beat);
  };
  setImmediate(beat);
  return {
    completed: () => void since++,
    stop: () => {
      on = false;
      most = Math.max(most, since);
      return { most, beats };
    },
  };
}

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1 });
  await backend.ready();
});
afterAll(async () => {
  await backend.close();
});

describe('the event loop gets a turn at least every 128 answers', () => {
  it('a tight loop of 10,000 tiny operations lets a setImmediate callback run at least every 128 completions', async () => {
    const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    for (let i = 0; i < 200; i++) (await backend.matmul(x, x)).dispose(); // warm: answers come within the short poll
    const hb = heartbeat();
    for (let i = 0; i < 10_000; i++) {
      (await backend.matmul(x, x)).dispose();
      hb.completed();
    }
    const { most, beats } = hb.stop();
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(BUDGET);
    expect(beats).toBeGreaterThanOrEqual(Math.floor(10_000 / BUDGET));
  });

  it('a Promise.all of 1,000 tasks on one worker lets a setImmediate callback run at least every 128 completions', async () => {
    const hb = heartbeat();
    const results = await backend.install((ctx) => Promise.all(Array.from({ length: 1000 }, () => ctx.run(noop).then(hb.completed))));
    const { most } = hb.stop();
    expect(results).toHaveLength(1000);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(BUDGET);
  });

  it('a session’s loop of tiny operations lets a setImmediate callback run at least every 128 completions', async () => {
    const x = Tensor.fromArray('f32', [2, 2], [1, 2, 3, 4]);
    const hb = heartbeat();
    await backend.withBackendSession(async (s) => {
      for (let i = 0; i < 2000; i++) {
        (await s.dotGeneral(x, x, { contracting: [[1], [0]] })).dispose();
        hb.completed();
      }
    });
    const { most } = hb.stop();
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(BUDGET);
  });
});

describe('the main thread never blocks in Atomics.wait', () => {
  /** Run `fn` with `Atomics.wait` of this (the main) thread replaced by a stub that counts its calls and never blocks. */
  async function countingWaits(fn: () => Promise<void>): Promise<number> {
    const real = Atomics.wait;
    let calls = 0;
    Atomics.wait = ((..._args: Parameters<typeof Atomics.wait>) => {
      calls++;
      return 'timed-out';
    }) as typeof Atomics.wait;
    try {
      await fn();
    } finally {
      Atomics.wait = real;
    }
    return calls;
  }

  it('plain awaits, Promise.all of hundreds, sessions and tasks that outlast the poll: no Atomics.wait', async () => {
    const x = Tensor.fromArray('f64', [8, 8], Array.from({ length: 64 }, (_, i) => i % 7));
    const calls = await countingWaits(async () => {
      for (let i = 0; i < 500; i++) (await backend.matmul(x, x)).dispose();
      const all = await Promise.all(Array.from({ length: 300 }, () => backend.matmul(x, x)));
      for (const t of all) t.dispose();
      await backend.withBackendSession(async (s) => {
        for (let i = 0; i < 200; i++) (await s.dotGeneral(x, x, { contracting: [[1], [0]] })).dispose();
      });
      // A task that outlasts the short poll: parked, then answered.
      for (let i = 0; i < 3; i++) {
        const g = gate();
        const running = backend.install((ctx) => ctx.run(holdUntil, g.payload));
        await g.whenEntered();
        for (let t = 0; t < 5; t++) await new Promise((r) => setImmediate(r));
        g.open();
        expect(await running).toBe(true);
      }
    });
    expect(calls).toBe(0);
  });

  it.skipIf(!twoCpus)('a fan-out on 2 threads, one lane answering while the other is parked: no Atomics.wait (needs 2 CPUs)', async () => {
    const b = await CpuBackend.create({ threads: 2 });
    try {
      await b.ready();
      const x = Tensor.fromArray('f64', [64, 64], Array.from({ length: 4096 }, (_, i) => i % 5));
      const seen: TaskEvent[] = [];
      const onTask = (e: unknown) => void seen.push(e as TaskEvent);
      const calls = await countingWaits(async () => {
        for (let i = 0; i < 200; i++) (await b.matmul(x, x)).dispose();
        for (let round = 0; round < 3; round++) {
          const first = gate();
          const second = gate();
          seen.length = 0;
          subscribe(DIAGNOSTICS_CHANNELS.task, onTask);
          try {
            const lanes = b.withBackendSession((s) => s.context.workerPool()!.map(holdUntil, [first.payload, second.payload]));
            await Promise.all([first.whenEntered(), second.whenEntered()]);
            // Both lanes outlast their polls and park; then one answers while the other still runs:
            // the main thread waits a little for the other (`awaitParked`) — never in Atomics.wait.
            for (let t = 0; t < 5; t++) await new Promise((r) => setImmediate(r));
            first.open();
            await until(() => seen.length === 1); // published as the first lane's answer was taken, before the wait for the other
            second.open();
            expect(await lanes).toEqual([true, true]);
          } finally {
            unsubscribe(DIAGNOSTICS_CHANNELS.task, onTask);
          }
          expect(seen.map((e) => e.fanOut)).toEqual([true, true]);
        }
      });
      expect(calls).toBe(0);
    } finally {
      await b.close();
    }
  });
});
