// `WorkerPool.map` (the pool an Inner-mode context exposes to providers) is a fork-join: results in
// payload order, every lane ended before it settles, and the first failure in payload order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, discoverCpuTopology } from '../src/index.js';
import { expectCode, gate, kernel, turns, until, watchingLane } from './helpers.js';

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;
const whoami = kernel<unknown, { workerIndex: number }>('whoami');
const echo = kernel<number, number>('echo');
const holdOrFail = kernel<object, boolean>('holdOrFail');

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2 });
});
afterAll(async () => {
  await backend.close();
});

describe.skipIf(!twoCpus)('WorkerPool.map (needs 2 CPUs: a pool of 2)', () => {
  it('returns results in payload order: one payload per lane, fewer, more (round-robin), none', async () => {
    await backend.withBackendSession(async (s) => {
      const pool = s.context.workerPool()!;
      expect(pool.size).toBe(2);
      expect(await pool.map(echo, [7, 8])).toEqual([7, 8]);
      expect(await pool.map(echo, [9])).toEqual([9]);
      expect(await pool.map(echo, [1, 2, 3, 4, 5])).toEqual([1, 2, 3, 4, 5]);
      expect(await pool.map(echo, [])).toEqual([]);
      expect((await pool.map(whoami, [0, 1, 2, 3, 4])).map((w) => w.workerIndex)).toEqual([0, 1, 0, 1, 0]);
    });
  });

  it('a failed payload rejects only after its sibling lanes ended', async () => {
    const held = gate();
    await watchingLane(1, (failed) =>
      backend.withBackendSession(async (s) => {
        let settled = false;
        // Lane 1's task fails at once; lane 0's waits until the gate opens.
        const mapped = s.context.workerPool()!.map(holdOrFail, [held.payload, { fail: true, message: 'lane 1 failed' }]);
        mapped.then(
          () => (settled = true),
          () => (settled = true),
        );
        await held.whenEntered();
        await until(failed);
        await turns();
        expect(settled).toBe(false);
        held.open();
        const e = await expectCode(mapped, 'KernelFailed');
        expect((e.cause as Error).message).toBe('lane 1 failed');
      }),
    );
  });

  it.each([
    ['the second fails first', 1],
    ['the first fails first', 0],
  ])('with several failures, rejects with the first in payload order (%s)', async (_, early) => {
    const held = gate();
    const late = 1 - early;
    const payloads: object[] = [];
    payloads[early] = { fail: true, message: early === 0 ? 'first' : 'second' };
    payloads[late] = { ...held.payload, fail: true, message: late === 0 ? 'first' : 'second' };
    await watchingLane(early, (earlyFailed) =>
      backend.withBackendSession(async (s) => {
        const pool = s.context.workerPool()!;
        const mapped = pool.map(holdOrFail, payloads);
        await held.whenEntered();
        await until(earlyFailed);
        await turns();
        held.open();
        const e = await expectCode(mapped, 'KernelFailed');
        expect((e.cause as Error).message).toBe('first');
        // The pool stays usable.
        expect(await pool.map(echo, [3, 4])).toEqual([3, 4]);
      }),
    );
  });
});
