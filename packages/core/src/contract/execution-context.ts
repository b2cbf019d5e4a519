import type { CpuAdmissionMode, CpuDomainId } from './cpu-domain.js';
import type { KernelRef } from './kernel.js';
import type { ProviderParallelMode } from './parallel-mode.js';
import type { WorkerPool } from './worker-pool.js';
import type { CpuSet } from '../topology/cpu-set.js';
import type { CpuIndexedPlans } from '../util/indexed-plan-cache.js';

/**
 * What a provider receives: the always-already-entered, immutable view of one execution
 * (contract glossary "CpuExecutionContext", R67, R75, R76). It cannot install, submit, change
 * mode or own the permit; it runs kernel tasks on its own worker and, in Inner mode with a budget
 * above one, exposes the worker pool capped at the budget. It is valid only while its execution
 * runs: afterwards every method rejects with `ContextExpired`. Only tenferro creates contexts.
 */
export interface CpuExecutionContext {
  readonly domainId: CpuDomainId;
  /** The domain's CPU set; `undefined` for caller-managed domains (no placement claim). */
  readonly cpus: CpuSet | undefined;
  readonly admissionMode: CpuAdmissionMode;
  readonly threadBudget: number;
  readonly parallelMode: ProviderParallelMode;
  /** Whether the execution that entered this context is still running. */
  readonly live: boolean;
  /**
   * The execution's abort word, an `Int32Array` of length 1 over a `SharedArrayBuffer`: 0 while
   * the execution may run, {@link ABORT_SIGNALLED} once its `AbortSignal` fired, {@link
   * ABORT_CLOSED} once its backend was closed. A kernel that runs long polls `abortWord[0]` at
   * its block boundaries and stops early when it is non-zero (pass `ctx.abortWord.buffer` in the
   * payload); a kernel that cannot poll (a BLAS call) runs to its end, and the abort is reported
   * when it returns.
   */
  readonly abortWord: Int32Array;
  /**
   * The engine's indexed-plan cache (R118): a provider keeps the plans of its strided operations
   * here (`getOrBuild(namespace, key, build)`), bounded by the backend's
   * `setIndexedPlanCacheLimits`, shared by every execution on the engine.
   */
  readonly indexedPlans: CpuIndexedPlans;
  /**
   * The pool an Inner-mode provider may fan out on, capped at `threadBudget`; `undefined` unless Inner ∧ pool ∧ budget > 1 (R75).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * console.log(await backend.install((ctx) => ctx.workerPool())); // prints: undefined
   * // A session enters in Inner mode: with a budget of 2 its context exposes a pool of 2.
   * console.log(await backend.withBackendSession((s) => s.context?.workerPool()?.size)); // e.g. 2
   * await backend.close();
   * ```
   */
  workerPool(): WorkerPool | undefined;
  /**
   * Threads native kernels may use: the budget in Inner mode on a pool-backed executor, else 1 (R75).
   *
   * @example
   * ```ts
   * import { CpuBackend } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 2 });
   * console.log(await backend.install((ctx) => [ctx.parallelMode, ctx.nativeThreadCount()])); // prints: [ 'sequential', 1 ]
   * console.log(await backend.withBackendSession((s) => s.context?.nativeThreadCount())); // e.g. 2
   * await backend.close();
   * ```
   */
  nativeThreadCount(): number;
  /**
   * Run one kernel task on this context's worker.
   *
   * @example
   * ```ts
   * import { CpuBackend, defineKernel } from '@tenferro/core';
   *
   * // A kernel gets its payload and a KernelTaskInfo; a provider names its compiled module, not a data: URL.
   * const whereAmI = defineKernel<string, string>('data:text/javascript,export const where = (tag, info) => `${tag} on worker ${info.workerIndex}`;', 'where');
   * const backend = await CpuBackend.create({ threads: 1 });
   * console.log(await backend.install((ctx) => ctx.run(whereAmI, 'hello'))); // prints: hello on worker 0
   * await backend.close();
   * ```
   */
  run<P, R>(kernel: KernelRef<P, R>, payload?: P, options?: KernelRunOptions): Promise<R>;
}

/** Options of {@link CpuExecutionContext.run}. Unknown keys are `InvalidArgument`. */
export interface KernelRunOptions {
  /**
   * How many threads this task keeps busy, its native library's helpers included: an integer from
   * 1 to `nativeThreadCount()` (the default). A kernel that runs a call on fewer threads than it
   * may — a small BLAS call on one thread, where waking a helper costs more than it saves — says
   * so, and the main thread then waits for it as for a one-thread task instead of yielding its
   * CPU to helpers that are not running (#38).
   *
   * @example
   * ```ts
   * import { CpuBackend, defineKernel } from '@tenferro/core';
   *
   * const one = defineKernel<number, number>('data:text/javascript,export const one = (x) => x + 1;', 'one');
   * const backend = await CpuBackend.create({ threads: 1 });
   * console.log(await backend.install((ctx) => ctx.run(one, 41, { threads: 1 }))); // prints: 42
   * await backend.close();
   * ```
   */
  readonly threads?: number;
}

/** `abortWord[0]` once the execution's `AbortSignal` fired. */
export const ABORT_SIGNALLED = 1;
/** `abortWord[0]` once the execution's backend was closed. */
export const ABORT_CLOSED = 2;
