import { invalidArgument } from '../../errors/tenferro-error.js';
import type { CpuSet } from '../../topology/cpu-set.js';
import type { KernelTask } from '../../contract/executor.js';
import { EngineWorkerPool } from '../workers/engine-worker-pool.js';
import { PoolExecutor } from './pool-executor.js';

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

  static async create(options: WorkerThreadsExecutorOptions): Promise<WorkerThreadsDomainExecutor> {
    const op = 'WorkerThreadsDomainExecutor.create';
    if (typeof options !== 'object' || options === null) throw invalidArgument(op, 'options', 'an options object', options);
    if (!Number.isSafeInteger(options.workers) || options.workers < 1 || options.workers > 1024) {
      throw invalidArgument(op, 'options.workers', 'an integer worker count in [1, 1024]', options.workers);
    }
    const pool = await EngineWorkerPool.create({ cpus: options.cpus, workerCount: options.workers });
    return new WorkerThreadsDomainExecutor(pool, options.cpus !== undefined);
  }

  /** The workers registered this record at start-up; the domain adopts it (see `scopeRecord`). */
  runKernel<P, R>(task: KernelTask<P, R>): Promise<R> {
    return this.#pool.runOn(task.lane, task.kernel, task.payload, task.op);
  }

  scopeRecord(): SharedArrayBuffer {
    return this.#pool.engineState.buffer as SharedArrayBuffer;
  }

  /** Terminate the workers: the application's call, never a backend's. */
  close(): Promise<void> {
    return this.#pool.close();
  }
}
