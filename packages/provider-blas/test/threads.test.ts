// Thread census (/proc/self/task) proving each capability claim. This file runs in its own
// process (pool: forks) and loads the BLAS library here, so the threads the library creates can
// be told apart from Node's and the engine's.
import { readFileSync } from 'node:fs';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { CpuBackend, DIAGNOSTICS_CHANNELS, type TaskEvent, Tensor } from '@tenferro/core';
import { peakThreadsDuring, randomValues, seededRandom, threadCensus } from '@tenferro/core/testing';
import { describe, expect, it } from 'vitest';
import { MULTI_THREAD_MIN_WORK } from '../src/gemm-split.js';
import { blasProviderStatus, createBlasProvider } from '../src/index.js';

/** The fields of `/proc/self/task/<tid>/stat` after the command name (field 3, the state, first), or undefined once the thread ended. */
function statFields(tid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU time (clock ticks, user + system) of one thread of this process. */
function ticks(tid: number): number {
  const fields = statFields(tid);
  return fields === undefined ? 0 : Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
}

const sum = (tids: readonly number[]) => tids.reduce((acc, t) => acc + ticks(t), 0);

/** CPU time (ns, `schedstat`) of the threads `tids` of this process. */
const cpuNs = (tids: readonly number[]) =>
  tids.reduce((acc, t) => {
    try {
      return acc + Number(readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      return acc;
    }
  }, 0);

/** Whether none of the threads `tids` is running or runnable (state R; an ended one is not): OpenBLAS's pool past the spin after its last call, asleep. */
const noneRunning = (tids: readonly number[]) => tids.every((t) => statFields(t)?.[0] !== 'R');

describe('thread census', () => {
  // createBlasProvider() loads no BLAS here: the first GEMM loads it on an engine worker, and the
  // threads it starts then are reported by status (runtime.runtimeThreads).
  const beforeLoad = threadCensus();
  // Large GEMMs (splitMinWork) on a 2-thread backend are split over the engine's workers (one BLAS thread
  // each): this census watches the runtime's own threads, so it never splits.
  const pkg = createBlasProvider({ splitMinWork: Infinity });
  const noneYet = threadCensus().filter((t) => !beforeLoad.includes(t));
  let libraryThreads: number[] = [];
  const status = blasProviderStatus();
  if (!status.available) throw new Error('no BLAS');
  const caps = status.capabilities;
  const n = status.runtime.vendor === 'reference' ? 480 : 1024;
  const rand = seededRandom(3);
  const a = Tensor.fromArray('f64', [n, n], randomValues(rand, 'f64', n * n));
  const b = Tensor.fromArray('f64', [n, n], randomValues(rand, 'f64', n * n));

  /** Run big GEMMs at `threads` and report where the CPU time went. */
  const census = async (threads: number) => {
    const backend = await CpuBackend.create({ kind: 'blas', threads, providers: [pkg] });
    try {
      await backend.matmul(a, b); // warm
      const workers = backend.executionInfo().workers.map((w) => w.tid);
      const w0 = sum(workers);
      const l0 = sum(libraryThreads);
      const p0 = new Map((pkg.threads?.() ?? []).map((t) => [t.tid, ticks(t.tid)]));
      const { newThreads } = await peakThreadsDuring(async () => {
        for (let i = 0; i < 3; i++) await backend.matmul(a, b);
      });
      // The provider's threads now (MKL's OpenMP teams appear during calls), and their CPU time since.
      const providerThreads = (pkg.threads?.() ?? []).map((t) => t.tid);
      const providerTicks = providerThreads.reduce((acc, t) => acc + ticks(t) - (p0.get(t) ?? 0), 0);
      const census = backend.census();
      return { newThreads, workerTicks: sum(workers) - w0, libraryTicks: sum(libraryThreads) - l0, providerThreads, providerTicks, outsideDomain: census.outsideDomain };
    } finally {
      await backend.close();
    }
  };

  it('nothing is loaded by createBlasProvider(); the first GEMM loads the runtime on an engine worker of a 2-thread domain', async () => {
    expect(noneYet).toEqual([]);
    expect(status.runtime.loaded).toBe(false);
    const backend = await CpuBackend.create({ kind: 'blas', threads: 2, providers: [pkg] });
    try {
      await backend.matmul(a, b);
      const loaded = blasProviderStatus();
      if (!loaded.available) throw new Error('no BLAS');
      const info = backend.executionInfo();
      expect(loaded.runtime.loaded).toBe(true);
      expect(info.workers.map((w) => w.tid)).toContain(loaded.runtime.loadedOn?.tid);
      expect(loaded.runtime.loadedOn?.cpus).toBe(info.domainCpus);
      for (const t of loaded.runtime.runtimeThreads) expect(t.cpus).toBe(info.domainCpus);
      libraryThreads = loaded.runtime.runtimeThreads.map((t) => t.tid);
      // The package reports them to the census (CpuProviderPackage.threads()): owned by the
      // provider, inside the backend's domain.
      expect(pkg.threads?.().map((t) => t.tid)).toEqual(libraryThreads);
      const census = backend.census();
      for (const tid of libraryThreads) {
        const t = census.threads.find((x) => x.tid === tid);
        expect(t?.owner.kind).toBe('provider');
        expect(t?.outsideDomain).toBe(false);
      }
      expect(census.outsideDomain).toEqual([]);
    } finally {
      await backend.close();
    }
  });

  if (caps.placement === 'externalWorkers') {
    it(`${status.runtime.name} (${status.runtime.threadingLayer}) runs GEMM on threads it owns (externalWorkers)`, async () => {
      const cpus = readFileSync('/proc/self/status', 'utf8').match(/^Cpus_allowed_list:\s*(.*)$/m)?.[1] ?? '';
      const multi = /[-,]/.test(cpus);
      if (status.runtime.vendor === 'openblas' && multi) {
        // OpenBLAS pthreads starts its pool when the library loads: threads tenferro did not create.
        expect(libraryThreads.length).toBeGreaterThan(0);
        const one = await census(1);
        const two = await census(2);
        // Budget 1: openblas_set_num_threads(1) → the pool stays idle; budget 2: it works.
        expect(one.libraryTicks, 'pool ticks at budget 1').toBeLessThanOrEqual(1);
        expect(two.libraryTicks, 'pool ticks at budget 2').toBeGreaterThan(0);
        expect(one.workerTicks).toBeGreaterThan(0);
      } else if (status.runtime.vendor === 'mkl' && multi) {
        // MKL's OpenMP layers (#42): per call, MKL_Set_Num_Threads_Local(budget); the team starts on
        // a worker's first 2-thread call (GNU OpenMP: one team per calling worker) and the package
        // names its threads for the census (found natively when they start). Budget 1: the team
        // stays idle; budget 2: it works, inside the domain.
        const one = await census(1);
        const two = await census(2);
        expect(one.providerTicks, 'MKL team ticks at budget 1').toBeLessThanOrEqual(1);
        expect(two.providerThreads.length, 'MKL team threads named by the package').toBeGreaterThan(0);
        expect(two.providerTicks, 'MKL team ticks at budget 2').toBeGreaterThan(0);
        expect(two.outsideDomain).toEqual([]);
        expect(one.workerTicks).toBeGreaterThan(0);
      } else {
        expect(status.runtime.threadsPerCall).not.toMatch(/^1:/);
      }
    });
  }

  if (caps.placement === 'externalWorkers' && caps.acceptsInner && /[-,]/.test(readFileSync('/proc/self/status', 'utf8').match(/^Cpus_allowed_list:\s*(.*)$/m)?.[1] ?? '')) {
    it(`a GEMM below ${MULTI_THREAD_MIN_WORK} multiply-adds on a 2-thread backend runs on one BLAS thread as a one-thread task; from it, on the budget (#38)`, async () => {
      const backend = await CpuBackend.create({ kind: 'blas', threads: 2, providers: [pkg] });
      try {
        // 96³ is above OpenBLAS's own single-thread bound (64³): only tenferro's choice keeps it on one thread.
        const small = Tensor.fromArray('f64', [96, 96], randomValues(rand, 'f64', 96 * 96));
        const large = Tensor.fromArray('f64', [128, 128], randomValues(rand, 'f64', 128 * 128));
        await backend.matmul(small, small); // warm (loads the runtime on the first call)
        // A pool a 2-thread call of an earlier test woke spins for a while after it (OpenBLAS's
        // thread timeout; longer on a loaded machine): measure from when it sleeps.
        while (!noneRunning(libraryThreads)) await new Promise((resolve) => setImmediate(resolve));
        const l0 = cpuNs(libraryThreads);
        const smallTasks: TaskEvent[] = [];
        const onTask = (m: unknown) => void smallTasks.push(m as TaskEvent);
        subscribe(DIAGNOSTICS_CHANNELS.task, onTask);
        try {
          for (let i = 0; i < 400; i++) (await backend.matmul(small, small)).dispose();
        } finally {
          unsubscribe(DIAGNOSTICS_CHANNELS.task, onTask);
        }
        const smallLibraryNs = cpuNs(libraryThreads) - l0;
        const largeTasks: TaskEvent[] = [];
        const onLarge = (m: unknown) => void largeTasks.push(m as TaskEvent);
        subscribe(DIAGNOSTICS_CHANNELS.task, onLarge);
        try {
          (await backend.matmul(large, large)).dispose();
        } finally {
          unsubscribe(DIAGNOSTICS_CHANNELS.task, onLarge);
        }
        const gemms = (events: TaskEvent[]) => events.filter((e) => e.kernel === 'blasGemm').map((e) => e.threads);
        expect(new Set(gemms(smallTasks))).toEqual(new Set([1]));
        expect(gemms(largeTasks)).toEqual([2]);
        // OpenBLAS's pool was never woken for the small ones (it would spin after each call).
        if (status.runtime.vendor === 'openblas' && libraryThreads.length > 0) expect(smallLibraryNs, 'CPU ns of the pool during 400 small GEMMs').toBeLessThan(1e6);
      } finally {
        await backend.close();
      }
    });
  }

  if (caps.threadCount === 'sequential') {
    it(`${status.runtime.name} is sequential on the calling engine worker (callingThread): no threads of its own`, async () => {
      expect(libraryThreads).toEqual([]);
      const two = await census(2);
      expect(two.newThreads).toEqual([]);
      expect(two.workerTicks).toBeGreaterThan(0);
    });
  }

  it('the declared control matches what the census allows', () => {
    if (caps.threadCount === 'globalOrUncontrolled') {
      expect(caps.placement).toBe('externalWorkers');
      expect(caps.acceptsSequential).toBe(false);
    }
    if (caps.placement === 'callingThread') expect(libraryThreads).toEqual([]);
    // Every runtime says what one call computes on (#42): 1 for the sequential ones, whatever the budget.
    if (caps.threadCount === 'sequential') expect(status.runtime.threadsPerCall).toMatch(/^1: a sequential runtime/);
    if (caps.threadCount === 'perCallUpperBound') {
      expect(caps.acceptsSequential && caps.workerLocalSequential).toBe(true);
      expect(status.runtime.threadsPerCall).toContain("the backend's thread budget");
    }
  });
});
