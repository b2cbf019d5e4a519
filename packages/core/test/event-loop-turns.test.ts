// The event loop stays free while tenferro computes (#37): an answer seen in the main thread's
// short poll settles as a microtask, so without a budget a tight `await` loop of small operations
// (or a `Promise.all` of hundreds) would never let the event loop turn; and the main thread never
// blocks in `Atomics.wait`. Nothing here is timed: turns and calls are counted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { CpuBackend, DIAGNOSTICS_CHANNELS, Tensor, discoverCpuTopology, type TaskEvent } from '../src/index.js';
import { EventLoopTurns, SYNC_ANSWER_BUDGET, TURN_BUDGET_NS } from '../src/runtime/workers/event-loop-turns.js';
import { LANE_PARK_NS, lanePollNs } from '../src/runtime/workers/engine-worker.js';
import { gate, kernel, until } from './helpers.js';

const noop = kernel('noop');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');
const echo = kernel<number, number>('echo');
const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;

/** Microseconds as the nanosecond bigints of `process.hrtime.bigint()`. */
const us = (n: number) => BigInt(n) * 1000n;

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
          // Lanes whose workers usually run long park at once and wait together on their join slot
          // (both answers taken at the end: fan-out-join.test.ts); held lanes make them look long.
          // Short tasks first bring each worker's usual run back down, so that here one lane's
          // answer is taken while the other is still parked.
          for (let i = 0; i < 32; i++) await b.withBackendSession((s) => s.context.workerPool()!.map(echo, [0, 1]));
          const first = gate();
          const second = gate();
          seen.length = 0;
          subscribe(DIAGNOSTICS_CHANNELS.task, onTask);
          try {
            const lanes = b.withBackendSession((s) => s.context.workerPool()!.map(holdUntil, [first.payload, second.payload]));
            await Promise.all([first.whenEntered(), second.whenEntered()]);
            // Both lanes outlast their polls and park; then one answers while the other still runs:
            // the main thread takes that answer and goes back to the event loop — never Atomics.wait.
            for (let t = 0; t < 5; t++) await new Promise((r) => setImmediate(r));
            first.open();
            await until(() => seen.length === 1); // published as the first lane's answer was taken
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

describe('the run of answers without a turn is timed to the answer, not to the post', () => {
  // The rule itself (engine-worker.ts keeps one per isolate), on a clock of our own: a poll that
  // yields its CPU to a lane sharing it can see the answer a whole scheduler slice after the post.

  it('an answer seen 900 µs into the run waits for a turn, though its task was posted 100 µs in', () => {
    const turns = new EventLoopTurns();
    turns.taken(0n);
    turns.answered(0n);
    expect(turns.due(us(50), us(500))).toBe(false);
    turns.answered(us(500));
    expect(turns.due(us(520), us(900))).toBe(true);
    expect(TURN_BUDGET_NS).toBe(us(750));
  });

  it('a post long after the last answer starts a new run; a turn starts one too', () => {
    const turns = new EventLoopTurns();
    turns.taken(0n);
    turns.answered(us(100));
    // The caller was away for 1 ms: its own work is not tenferro's.
    expect(turns.due(us(1100), us(1300))).toBe(false);
    turns.answered(us(1300));
    expect(turns.due(us(1310), us(2200))).toBe(true);
    turns.taken(us(2200));
    turns.answered(us(2200));
    expect(turns.due(us(2210), us(2400))).toBe(false);
  });

  it('the 129th answer without a turn waits for one, however quick', () => {
    const turns = new EventLoopTurns();
    turns.taken(0n);
    for (let i = 0; i < SYNC_ANSWER_BUDGET; i++) {
      expect(turns.due(BigInt(i), BigInt(i))).toBe(false);
      turns.counted();
      turns.answered(BigInt(i));
    }
    expect(turns.due(200n, 200n)).toBe(true);
  });

  it('a 10 ms task answered through the event loop settles without another turn; the count still holds', () => {
    const turns = new EventLoopTurns();
    turns.taken(0n);
    turns.answered(0n);
    // Posted 500 µs after the last answer (a new run), parked, answered 10 ms later.
    turns.resumed(us(10_500));
    expect(turns.due(us(500), us(10_510))).toBe(false);
    turns.answered(us(10_510));
    const fresh = new EventLoopTurns();
    fresh.taken(0n);
    for (let i = 0; i < SYNC_ANSWER_BUDGET; i++) fresh.counted();
    fresh.resumed(us(5));
    expect(fresh.due(us(1), us(6))).toBe(true);
  });
});

describe('a long fan-out parks at once', () => {
  it('lanes expected to outlast LANE_PARK_NS are not polled for: a yield to a lane on this CPU would last its whole slice', () => {
    expect(lanePollNs(LANE_PARK_NS + 1)).toBe(0);
    expect(lanePollNs(40_000_000)).toBe(0);
    // Shorter ones still poll: briefly once they outlast the poll budget, else for their expected time.
    expect(lanePollNs(LANE_PARK_NS)).toBeGreaterThan(0);
    expect(lanePollNs(2_000_000)).toBeGreaterThan(0);
    expect(lanePollNs(150_000)).toBe(150_000);
  });
});
