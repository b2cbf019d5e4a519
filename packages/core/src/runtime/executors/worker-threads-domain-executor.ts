import { invalidArgument } from '../../errors/tenferro-error.js';
import type { CpuSet } from '../../topology/cpu-set.js';
import type { KernelTask } from '../../contract/executor.js';
import { EngineWorkerPool } from '../workers/engine-worker-pool.js';
import { PoolExecutor } from './pool-executor.js';
import { postedThreads } from '../workers/lane-spread.js';

/** Options of {@link WorkerThreadsDomainExecutor.create}. */
export interface WorkerThreadsExecutorOptions {
  /** Workers to start (≥ 1). */
  readonly workers: number;
  /** Pin every worker to exactly this set and verify it (needs `@tenferro/os`); default unpinned. */
  readonly cpus?: CpuSet;
}

/**
 * A plain `worker_threads` pool the application creates and owns, for external domains: its
 * workers run tenferro's kernel protocol (the same as managed engines), and it is the caller who
 * closes it (`shutdown: 'callerOwned'`) — a backend built on it never does. Pinned workers are
 * verified, but an external domain still reports its affinity as the caller's declaration (R46).
 */
export class WorkerThreadsDomainExecutor extends PoolExecutor {
  readonly #pool: EngineWorkerPool;

  private constructor(pool: EngineWorkerPool, pinned: boolean) {
    const workerCount = pool.workerCount;
    super(
      {
        workerCount,
        outerParallelism: workerCount > 1,
        innerParallelism: 'pool',
        reentrancy: 'sameExecutor',
        affinity: pinned ? 'tenferroPinnedVerified' : 'none',
        shutdown: 'callerOwned',
      },
      pool,
      'WorkerThreadsDomainExecutor',
    );
    this.#pool = pool;
  }

  /**
   * Start `options.workers` workers (pinned to `options.cpus` and verified when given) and resolve
   * once they run. `InvalidArgument` for a worker count outside [1, 1024].
   *
   * @example
   * ```ts
   * import { WorkerThreadsDomainExecutor } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 2 });
   * console.log(executor.capabilities().workerCount, executor.capabilities().shutdown); // prints: 2 callerOwned
   * await executor.close();
   * ```
   */
  static async create(options: WorkerThreadsExecutorOptions): Promise<WorkerThreadsDomainExecutor> {
    const op = 'WorkerThreadsDomainExecutor.create';
    if (typeof options !== 'object' || options === null) throw invalidArgument(op, 'options', 'an options object', options);
    if (!Number.isSafeInteger(options.workers) || options.workers < 1 || options.workers > 1024) {
      throw invalidArgument(op, 'options.workers', 'an integer worker count in [1, 1024]', options.workers);
    }
    const pool = await EngineWorkerPool.create({ cpus: options.cpus, workerCount: options.workers });
    return new WorkerThreadsDomainExecutor(pool, options.cpus !== undefined);
  }

  /** Run one kernel task on worker `task.lane` (the workers registered their execution record at start-up). */
  runKernel<P, R>(task: KernelTask<P, R>): Promise<R> {
    return this.#pool.runOn(task.lane, task.kernel, task.payload, task.op, postedThreads(task));
  }

  /** The execution record the workers registered at start-up: a domain on this executor adopts it. */
  scopeRecord(): SharedArrayBuffer {
    return this.#pool.engineState.buffer as SharedArrayBuffer;
  }

  /**
   * Terminate the workers: the application's call, never a backend's.
   *
   * @example
   * ```ts
   * import { CpuBackend, ExternalCpuDomain, WorkerThreadsDomainExecutor } from '@tenferro/core';
   *
   * const executor = await WorkerThreadsDomainExecutor.create({ workers: 1 });
   * const backend = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, executor, 1)] });
   * await backend.close(); // the executor keeps running
   * await executor.close();
   * ```
   */
  close(): Promise<void> {
    return this.#pool.close();
  }
}
