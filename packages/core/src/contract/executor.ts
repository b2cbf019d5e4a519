import type { KernelRef } from './kernel.js';
import type { WorkerPool } from './worker-pool.js';

/** What an executor can do, sampled once when a domain is built. */
export interface CpuDomainExecutorCapabilities {
  /** Workers (≥ 1). */
  readonly workerCount: number;
  /** Whether `submit` can run indexed jobs in parallel. */
  readonly outerParallelism: boolean;
  /** `'pool'` when `workerPool()` gives Inner-mode providers a pool to fan out on. */
  readonly innerParallelism: 'none' | 'pool';
  readonly reentrancy: 'rejected' | 'sameExecutor';
  readonly affinity: 'tenferroPinnedVerified' | 'callerDeclaredUnverified' | 'none';
  readonly shutdown: 'tenferroOwned' | 'callerOwned';
}

/** Indexed fork-join jobs handed to `submit`: every index runs exactly once before it resolves. */
export interface ScopedCpuJobs {
  /** How many jobs (indices `0 … length-1`). */
  readonly length: number;
  /** Run job `index`; the executor calls it exactly once per index. */
  run(index: number): Promise<void>;
}

/**
 * The executor contract of a CPU domain (contract glossary "Executor").
 *
 * Only tenferro's operation entry calls `install` and `submit` (R67): providers never see an
 * executor, only an already-entered context.
 */
export interface CpuDomainExecutor {
  /** What the executor can do; sampled once, when a domain is built on it. */
  capabilities(): CpuDomainExecutorCapabilities;
  /** Run `job` exactly once within this executor; the job never escapes the call. */
  install<R>(job: () => Promise<R> | R): Promise<R>;
  /** Fork-join over `jobs`: resolves when every index has run. */
  submit(jobs: ScopedCpuJobs): Promise<void>;
  /** The pool Inner-mode providers may fan out on (Rust `rayon_pool`), if any. */
  workerPool(): WorkerPool | undefined;
  /**
   * Run one kernel task on the executor's worker `lane` (executors whose workers are not
   * addressable run it on any of theirs). The worker registers `scope` — the domain's shared
   * execution record — for the task's duration, so backend entry from inside the task is
   * rejected as re-entry. Never falls back to another pool or to the calling thread.
   */
  runKernel<P, R>(task: KernelTask<P, R>): Promise<R>;
  /**
   * The execution record the executor's workers already hold (registered once at their start),
   * if any: the domain then uses it as its own, so that entries from those workers are seen
   * without passing a scope per task. Executors without resident workers leave it out.
   */
  scopeRecord?(): SharedArrayBuffer;
}

/** One kernel task for {@link CpuDomainExecutor.runKernel}: what to run, with what, where, under which execution record. */
export interface KernelTask<P, R> {
  /** The kernel (module and export) to run on a worker. */
  readonly kernel: KernelRef<P, R>;
  /** Its argument, structured-cloned to the worker. */
  readonly payload: P | undefined;
  /** The worker lane to run on (an index below the executor's worker count). */
  readonly lane: number;
  /** The domain's shared execution record, registered on the worker for the task's duration. */
  readonly scope: SharedArrayBuffer;
  /** The public operation, for error messages. */
  readonly op: string;
  /**
   * How many threads the kernel may keep busy at once, its native library's own helper threads
   * included: `CpuExecutionContext.nativeThreadCount()` for a context's `run`, 1 for a task of a
   * pool lane (absent: 1). An executor with resident workers may use it to decide how the
   * caller waits: a task that occupies more than one CPU leaves no CPU for a caller that spins.
   */
  readonly threads?: number;
  /**
   * The kernel's provider declared `spawnsThreadsOnFirstUse` (#36): threads its native code starts
   * inherit the mask of the worker that runs the task, for their whole life. An executor that
   * narrows a worker's mask for a task (tenferro's own do, to keep the lanes of a fan-out on
   * separate CPUs, R21) must not narrow it for this one (absent: `false`).
   */
  readonly spawnsThreadsOnFirstUse?: boolean;
}
