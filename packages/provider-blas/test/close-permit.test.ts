// close() during a BLAS call that cannot be interrupted (#39, finding 1): the running operation
// settles with BackendClosed at once, but the backend's permit — and so its CPUs — is released
// only when its engine worker has exited, which it cannot do before the native GEMM returns. An
// overlapping execution queued behind the permit must stay queued until then.
//
// Coordination without sleeps: the worker's OS thread id comes from `tenferro:task` (a warm-up
// GEMM); the big GEMM is known to be computing once that thread's CPU time grows
// (/proc/self/task/<tid>/stat) after the provider call started (`tenferro:provider`); the queued
// install is seen in the arbiter's stats; "the GEMM returned" is the worker thread being gone
// from /proc/self/task (it exits only after the native call returns).
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, readFileSync } from 'node:fs';
import { CpuBackend, DIAGNOSTICS_CHANNELS, type TaskEvent, Tensor, TenferroError, processArbiter } from '@tenferro/core';
import { randomValues, seededRandom } from '@tenferro/core/testing';
import { describe, expect, it } from 'vitest';
import { createBlasProvider, status as blasStatus } from '../src/index.js';

const tick = () => new Promise<void>((r) => setImmediate(r));
async function until(cond: () => boolean, what: string, limit = 2_000_000): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (cond()) return;
    await tick();
  }
  throw new Error(`never saw ${what}`);
}

const threadAlive = (tid: number) => existsSync(`/proc/self/task/${tid}`);
/** utime + stime of thread `tid` in clock ticks (fields 14 and 15 of its stat, after the command name). */
function cpuTicks(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

describe.skipIf(!blasStatus().available || !existsSync('/proc/self/task'))('close() and the permit of a running BLAS call', () => {
  it('close() during an uninterruptible 1-thread BLAS GEMM: the GEMM settles with BackendClosed at once, but a queued overlapping faer install starts only after the GEMM returned and its worker exited', async () => {
    const blas = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
    const faer = await CpuBackend.create({ kind: 'faer', threads: 1 });
    const arbiter = processArbiter();
    try {
      // Warm-up: loads the runtime and names the engine worker's thread.
      const tids: number[] = [];
      const onTask = (e: unknown) => void tids.push((e as TaskEvent).tid);
      subscribe(DIAGNOSTICS_CHANNELS.task, onTask);
      try {
        const small = Tensor.fromArray('f64', [8, 8], randomValues(seededRandom(1), 'f64', 64));
        (await blas.matmul(small, small)).dispose();
      } finally {
        unsubscribe(DIAGNOSTICS_CHANNELS.task, onTask);
      }
      expect(new Set(tids).size).toBe(1);
      const tid = tids[0]!;
      expect(threadAlive(tid)).toBe(true);

      // A GEMM of about a second on one thread, started and seen computing.
      const n = 2400;
      const a = Tensor.fromArray('f64', [n, n], randomValues(seededRandom(2), 'f64', n * n));
      let providerStarted = false;
      const provider = tracingChannel(DIAGNOSTICS_CHANNELS.provider);
      const handlers = { start: () => void (providerStarted = true) };
      provider.subscribe(handlers as never);
      let gemm: Promise<unknown>;
      let ticksAtStart: number;
      try {
        gemm = blas.matmul(a, a).then(
          () => 'finished',
          (e: unknown) => e,
        );
        await until(() => providerStarted, 'the provider call start');
        ticksAtStart = cpuTicks(tid);
      } finally {
        provider.unsubscribe(handlers as never);
      }
      await until(() => cpuTicks(tid) >= ticksAtStart + 2, 'the worker computing the GEMM');

      // An overlapping install queues behind the blas permit (provider-exclusive, R28).
      let workerAliveWhenFaerStarted: boolean | undefined;
      const faerRun = faer.install(() => {
        workerAliveWhenFaerStarted = threadAlive(tid);
        return 'faer ran';
      });
      await until(() => arbiter.stats().waiting === 1, 'the faer install queued');
      expect(workerAliveWhenFaerStarted).toBeUndefined();

      const closing = blas.close();
      // The running GEMM settles with BackendClosed (it does not wait for the whole GEMM)…
      const settled = await gemm;
      expect(TenferroError.is(settled, 'BackendClosed')).toBe(true);
      // …but the faer install starts only once the worker — still inside the native GEMM — has exited.
      expect(await faerRun).toBe('faer ran');
      expect(workerAliveWhenFaerStarted, 'the blas engine worker (inside the GEMM) was still alive when the queued install started: the permit was released before the worker exited').toBe(false);
      await closing;
      expect(threadAlive(tid)).toBe(false);
      expect(arbiter.stats()).toEqual({ active: 0, waiting: 0 });
    } finally {
      await blas.close();
      await faer.close();
    }
  });
});
