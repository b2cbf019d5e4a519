// An engine whose execution must wait for CPUs another execution holds (another backend, isolate or
// joined process, #41) tells its workers to stop spinning for a next task that cannot come before
// the holder is done: the spin (200 µs on lane 0) would take CPU time from the holder's lanes on
// every hand-over. Nothing here is timed: a worker's state is read from /proc, and a spin that
// does not end would outlast the test's timeout (a 60 s spin).
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CpuBackend, Tensor, discoverCpuTopology, processArbiter } from '../src/index.js';
import { EngineWorkerPool } from '../src/runtime/workers/engine-worker-pool.js';
import { gate, kernel, until } from './helpers.js';

const noop = kernel('noop');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');
const linux = process.platform === 'linux';

/** The scheduler state of thread `tid` of this process ('R' running or runnable, 'S' asleep, …). */
function threadState(tid: number): string {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

/**
 * Resolves once thread `tid` is seen asleep on 2,000 reads in a row, one event-loop turn apart
 * (tens of milliseconds). A parked worker stays asleep; a spinning one is running or runnable but
 * for a few milliseconds now and then (a collection of its heap waits for V8's helper threads).
 */
async function asleep(tid: number): Promise<void> {
  let inRow = 0;
  await until(() => (inRow = threadState(tid) === 'S' ? inRow + 1 : 0) >= 2_000);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.skipIf(!linux)('a worker spinning for its next task', () => {
  it('goes to sleep when its pool is told to park, not at the end of its spin', { timeout: 20_000 }, async () => {
    const pool = await EngineWorkerPool.create({ cpus: undefined, workerCount: 1, spinMicros: 60_000_000 });
    try {
      const [worker] = pool.observations();
      expect(worker!.tid).toBeGreaterThan(0);
      await pool.runOn(0, noop, undefined, 'test');
      // After its task the worker spins for 60 s (yielding now and then: running or runnable).
      await until(() => threadState(worker!.tid) === 'R');
      pool.parkSpinning();
      await asleep(worker!.tid);
      // Parked, it still takes the next task.
      await pool.runOn(0, noop, undefined, 'test');
      expect(threadState(worker!.tid)).not.toBe('Z');
    } finally {
      await pool.close();
    }
  });

  it('sleeps after its task when the park was asked while the task ran (before its spin began)', { timeout: 20_000 }, async () => {
    const pool = await EngineWorkerPool.create({ cpus: undefined, workerCount: 1, spinMicros: 60_000_000 });
    try {
      const [worker] = pool.observations();
      const g = gate();
      const held = pool.runOn(0, holdUntil, g.payload, 'test');
      await g.whenEntered();
      pool.parkSpinning();
      g.open();
      expect(await held).toBe(true);
      // A spin that took the park as its starting point would last 60 s, past the test's timeout.
      await asleep(worker!.tid);
      await pool.runOn(0, noop, undefined, 'test');
    } finally {
      await pool.close();
    }
  });
});

describe('an execution that waits for CPUs', () => {
  const cpus = discoverCpuTopology().allowedCpus;

  it("parks its idle engine's workers; executions queued behind one of the engine's own do not", async () => {
    const parks = vi.spyOn(EngineWorkerPool.prototype, 'parkSpinning');
    const backend = await CpuBackend.create({ threads: 1 });
    const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    try {
      (await backend.matmul(a, a)).dispose();
      expect(parks).toHaveBeenCalledTimes(0);
      // Another execution (here the application's own permit) holds the CPUs: the matmul waits.
      const permit = await processArbiter().acquire({ cpus });
      const waiting = backend.matmul(a, a);
      expect(parks).toHaveBeenCalledTimes(1);
      permit.release();
      (await waiting).dispose();
      // A batch on one backend: each waits for the one before it, on an engine that is not idle.
      const outs = await Promise.all(Array.from({ length: 8 }, () => backend.matmul(a, a)));
      for (const o of outs) o.dispose();
      expect(parks).toHaveBeenCalledTimes(1);
    } finally {
      a.dispose();
      await backend.close();
    }
  });
});
