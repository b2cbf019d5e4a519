// The lanes of a fan-out that park at once wait on one join slot (runtime/workers/fan-out-join.ts):
// the slot's count and lending rules, then through a 2-thread backend — long lanes park at once and
// every answer arrives, and a lane whose worker dies does not leave its siblings waiting on the slot.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, discoverCpuTopology } from '../src/index.js';
import { FanOutJoins, JOIN_SLOTS, closeFanOut, joinFanOut, openFanOut } from '../src/runtime/workers/fan-out-join.js';
import { PARK_WHEN_DUE_NS } from '../src/runtime/workers/engine-worker.js';
import { expectCode, gate, kernel, turns, until, watchingLane } from './helpers.js';

describe('FanOutJoins', () => {
  it('lends a slot only while its count is zero, each in turn', () => {
    const joins = new FanOutJoins();
    const lent: number[] = [];
    for (let i = 0; i < JOIN_SLOTS; i++) {
      const slot = joins.free();
      expect(slot).toBeGreaterThanOrEqual(0);
      joins.enter(slot);
      lent.push(slot);
    }
    expect(new Set(lent).size).toBe(JOIN_SLOTS);
    expect(joins.free()).toBe(-1); // every slot counts a task
    // A worker takes its task out of slot 3: only that one is lent again.
    Atomics.sub(joins.words, lent[3]!, 1);
    expect(joins.free()).toBe(lent[3]);
  });

  it('a poisoned slot wakes its waiters, stays below zero and is never lent again', async () => {
    const joins = new FanOutJoins();
    const slot = joins.free();
    joins.enter(slot);
    joins.enter(slot);
    const waiting = Atomics.waitAsync(joins.words, slot, 2);
    expect(waiting.async).toBe(true);
    joins.poison(slot);
    expect(await waiting.value).toBe('ok');
    expect(Atomics.load(joins.words, slot)).toBeLessThan(0);
    Atomics.sub(joins.words, slot, 1); // a sibling still leaving it
    for (let i = 0; i < 2 * JOIN_SLOTS; i++) expect(joins.free()).not.toBe(slot);
  });
});

describe('joinFanOut', () => {
  it('counts the tasks posted between open and close into one slot of the first pool they post to', () => {
    const joins = new FanOutJoins();
    const other = new FanOutJoins();
    expect(joinFanOut(joins)).toBe(-1); // no fan-out being posted
    openFanOut();
    const slot = joinFanOut(joins);
    expect(slot).toBeGreaterThanOrEqual(0);
    expect(joinFanOut(joins)).toBe(slot);
    expect(joinFanOut(other)).toBe(-1); // a task of another pool joins nothing
    closeFanOut();
    expect(Atomics.load(joins.words, slot)).toBe(2);
    expect(joinFanOut(joins)).toBe(-1);
    // The next fan-out gets another slot while the first one's tasks are counted.
    openFanOut();
    const next = joinFanOut(joins);
    closeFanOut();
    expect(next).not.toBe(slot);
    expect(Atomics.load(joins.words, next)).toBe(1);
  });

  it('nested opens close the fan-out only at the outermost close', () => {
    const joins = new FanOutJoins();
    openFanOut();
    openFanOut();
    const slot = joinFanOut(joins);
    closeFanOut();
    expect(joinFanOut(joins)).toBe(slot);
    closeFanOut();
    expect(joinFanOut(joins)).toBe(-1);
  });
});

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;
const busyFor = kernel<{ micros: number; value: number }, number>('busyFor');
const busyOrExit = kernel<{ micros: number; value: number; exit?: boolean }, number>('busyOrExit');
const holdOrFail = kernel<object, boolean>('holdOrFail');

describe.skipIf(!twoCpus)('a 2-thread backend (needs 2 CPUs)', () => {
  let backend: CpuBackend;
  beforeAll(async () => {
    backend = await CpuBackend.create({ threads: 2 });
  });
  afterAll(async () => {
    await backend.close();
  });

  /**
   * Lanes of 2 × `PARK_WHEN_DUE_NS` (1 ms): longer than the event-loop turn budget (750 µs), so a
   * turn is always due by their end, and short enough that without the rule they would be polled
   * (a fan-out expected to take 3 ms: a 20 µs poll whose first yield may last a lane's kernel).
   */
  const longLane = (value: number) => ({ micros: (2 * PARK_WHEN_DUE_NS) / 1000, value });

  it('lanes that usually run long park at once on their join slot: a lane that ends first is taken with the last', async () => {
    await backend.withBackendSession(async (s) => {
      const pool = s.context.workerPool()!;
      // More fan-outs than there are join slots: each lane's worker must take its task out of the
      // slot's count for the slots to be lent again (a fan-out without a slot polls its lanes).
      // They also make both workers' usual run long (1 ms), so the next lanes park at once.
      for (let i = 0; i < JOIN_SLOTS + 4; i++) expect(await pool.map(busyFor, [longLane(i), longLane(-i)])).toEqual([i, -i]);
      const first = gate();
      const last = gate();
      await watchingLane(0, async (lane0Seen) => {
        const mapped = pool.map(holdOrFail, [first.payload, last.payload]);
        await Promise.all([first.whenEntered(), last.whenEntered()]);
        // Lane 0 ends; lane 1 still runs. Parked at once, lane 0 waits with lane 1 on their slot,
        // which only the last lane's worker notifies: lane 0 is not taken yet. Parked on its own
        // mailbox (the rule off), its worker's notify would bring it here within these turns.
        first.open();
        await first.whenLeft();
        await turns();
        expect(lane0Seen()).toBe(false);
        last.open();
        expect(await mapped).toEqual([true, true]);
        expect(lane0Seen()).toBe(true);
      });
    });
  });

  it("a lane that fails is seen at once, while its sibling still runs (the map settles after both)", async () => {
    const held = gate();
    await backend.withBackendSession(async (s) => {
      const pool = s.context.workerPool()!;
      for (let i = 0; i < 8; i++) await pool.map(busyFor, [longLane(i), longLane(i)]);
      await watchingLane(1, async (failedSeen) => {
        // Both lanes park at once on one slot: lane 0 held, lane 1 failing at once.
        let settled = false;
        const mapped = pool.map(holdOrFail, [held.payload, { fail: true, message: 'lane 1 failed' }]);
        mapped.then(
          () => (settled = true),
          () => (settled = true),
        );
        await held.whenEntered();
        await until(failedSeen);
        expect(settled).toBe(false);
        held.open();
        const e = await expectCode(mapped, 'KernelFailed');
        expect((e.cause as Error).message).toBe('lane 1 failed');
      });
    });
  });

  it('a lane whose worker dies does not leave its sibling waiting on their slot', async () => {
    // Its own backend: a worker of it dies. Both lanes' workers usually run long, so both lanes
    // park at once on one slot; lane 1's worker exits without taking its task out of the count.
    const b = await CpuBackend.create({ threads: 2 });
    try {
      await b.withBackendSession(async (s) => {
        const pool = s.context.workerPool()!;
        for (let i = 0; i < 8; i++) expect(await pool.map(busyOrExit, [longLane(i), longLane(i)])).toEqual([i, i]);
      });
      await expectCode(
        b.withBackendSession((s) => s.context.workerPool()!.map(busyOrExit, [longLane(1), { ...longLane(2), exit: true }])),
        'WorkerDied',
      );
      // The replacement worker joins fan-outs like the others.
      await b.withBackendSession(async (s) => {
        expect(await s.context.workerPool()!.map(busyOrExit, [longLane(3), longLane(4)])).toEqual([3, 4]);
      });
    } finally {
      await b.close();
    }
  });
});
