import type { CpuAdmissionMode, CpuDomainId } from '../../contract/cpu-domain.js';
import type { CpuExecutionContext, KernelRunOptions } from '../../contract/execution-context.js';
import { TenferroError } from '../../errors/tenferro-error.js';
import type { KernelRef } from '../../contract/kernel.js';
import type { LaneRunner, WorkerPool } from '../../contract/worker-pool.js';
import { cappedWorkerPool } from '../executors/capped-worker-pool.js';
import type { CpuSet } from '../../topology/cpu-set.js';
import type { ProviderParallelMode } from '../../contract/parallel-mode.js';
import type { CpuIndexedPlans } from '../../util/indexed-plan-cache.js';

/** Shared liveness of every context an entry created: cleared when the entry ends. */
export interface EntryLifetime {
  live: boolean;
}

/** @internal what the operation entry knows when it builds a context. */
export interface ContextParts {
  readonly domainId: CpuDomainId;
  readonly cpus: CpuSet | undefined;
  readonly admissionMode: CpuAdmissionMode;
  readonly threadBudget: number;
  /** The most threads the provider handed this context may use (its enforced limit, ≤ the budget). */
  readonly threadLimit: number;
  readonly parallelMode: ProviderParallelMode;
  /** The worker this context's own kernel tasks run on. */
  readonly lane: number;
  readonly runner: LaneRunner;
  /** Whether the executor gives Inner mode a pool. */
  readonly executorHasPool: boolean;
  readonly lifetime: EntryLifetime;
  /**
   * The admitted execution's own lifetime (its permit or guard): a context is live only while both
   * it and its execution are. It ends when the execution's callback settles — for a scope or a
   * session, when the application's callback settles, even while an operation begun inside it
   * still waits on the application's own promises (#35: R85, R87).
   */
  readonly execution: EntryLifetime;
  /** The execution's abort word (created on first use). */
  readonly abortWord: () => Int32Array;
  /** The engine's indexed-plan cache (R118). */
  readonly indexedPlans: CpuIndexedPlans;
  /**
   * The context is handed to a provider that declared `spawnsThreadsOnFirstUse` (#36): every kernel
   * task it starts (`run`, its pool's lanes) says so, and its worker's mask is never narrowed.
   */
  readonly spawnsThreads?: boolean;
}

/**
 * The context an operation entry hands to bodies and providers: the implementation of the
 * contract's `CpuExecutionContext` (see `contract/execution-context.ts`), immutable, valid only
 * while its execution runs. Only the operation entry creates one.
 */
export class EnteredContext implements CpuExecutionContext {
  readonly domainId: CpuDomainId;
  /** The domain's CPU set; `undefined` for caller-managed domains (no placement claim). */
  readonly cpus: CpuSet | undefined;
  readonly admissionMode: CpuAdmissionMode;
  readonly threadBudget: number;
  readonly parallelMode: ProviderParallelMode;
  /** The engine's indexed-plan cache (R118): plans of strided operations, reused by identical requests. */
  readonly indexedPlans: CpuIndexedPlans;
  readonly #parts: ContextParts;
  readonly #pool: WorkerPool | undefined;
  /** {@link nativeThreadCount}: how many threads a task of `run` may keep busy. */
  readonly #nativeThreads: number;

  constructor(parts: ContextParts) {
    this.#parts = parts;
    this.domainId = parts.domainId;
    this.cpus = parts.cpus;
    this.admissionMode = parts.admissionMode;
    this.threadBudget = parts.threadBudget;
    this.parallelMode = parts.parallelMode;
    this.indexedPlans = parts.indexedPlans;
    const width = Math.min(parts.threadBudget, parts.threadLimit);
    const hasPool = parts.parallelMode === 'inner' && parts.executorHasPool && width > 1;
    this.#pool = hasPool ? cappedWorkerPool(parts.runner, width, 'CpuExecutionContext.workerPool', () => this.#assertLive('CpuExecutionContext.workerPool'), parts.spawnsThreads === true) : undefined;
    this.#nativeThreads = parts.parallelMode === 'inner' && parts.executorHasPool ? width : 1;
    Object.freeze(this);
  }

  /** The pool an Inner-mode provider may fan out on, capped at `threadBudget`; `undefined` unless Inner ∧ pool ∧ budget > 1 (R75). */
  workerPool(): WorkerPool | undefined {
    return this.#pool;
  }

  /** Threads native kernels may use: the budget in Inner mode on a pool-backed executor, else 1 (R75). */
  nativeThreadCount(): number {
    return this.#nativeThreads;
  }

  /**
   * This context for a provider that starts threads on first use (#36): the same execution, lane,
   * mode and limits, its kernel tasks never narrowed. Itself when it already is one.
   */
  spawningThreads(): EnteredContext {
    return this.#parts.spawnsThreads === true ? this : new EnteredContext({ ...this.#parts, spawnsThreads: true });
  }

  /** Whether the execution that entered this context is still running. */
  get live(): boolean {
    return this.#parts.lifetime.live && this.#parts.execution.live;
  }

  get abortWord(): Int32Array {
    return this.#parts.abortWord();
  }

  /** Run one kernel task on this context's worker; its native library may use {@link nativeThreadCount} threads. */
  run<P, R>(kernel: KernelRef<P, R>, payload?: P, options?: KernelRunOptions): Promise<R> {
    const op = 'CpuExecutionContext.run';
    let threads = this.#nativeThreads;
    try {
      if (options !== undefined) threads = runThreads(options, this.#nativeThreads, op);
      this.#assertLive(op);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#parts.runner.runOn(this.#parts.lane, kernel, payload, op, threads, this.#parts.spawnsThreads);
  }

  #assertLive(op: string): void {
    if (!this.#parts.lifetime.live || !this.#parts.execution.live) {
      throw new TenferroError('ContextExpired', 'this execution context belongs to an execution that has ended', { op });
    }
  }
}

/** The thread count `options` asks `run` for (checked: an integer from 1 to `allowed`, no other key). */
function runThreads(options: KernelRunOptions, allowed: number, op: string): number {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw TenferroError.invalidArgument(op, 'options', 'an options object', options);
  // No array per call: providers pass a frozen `{ threads: 1 }` on every task.
  for (const key in options) if (key !== 'threads' && Object.hasOwn(options, key)) throw TenferroError.invalidArgument(op, `options.${key}`, 'threads', key);
  const { threads } = options;
  if (threads === undefined) return allowed;
  if (typeof threads !== 'number' || !Number.isInteger(threads) || threads < 1 || threads > allowed) {
    throw TenferroError.invalidArgument(op, 'options.threads', `an integer from 1 to nativeThreadCount() (${allowed})`, threads);
  }
  return threads;
}
