import type { CpuDomainExecutor, CpuDomainExecutorCapabilities, KernelTask, ScopedCpuJobs } from './cpu-domain-executor.js';
import type { EngineWorkerPool } from './engine-worker-pool.js';
import { cappedWorkerPool, type WorkerPool } from './worker-pool.js';
import { runIndexedJobs } from '../internal/settle-all.js';

/**
 * The executor of a tenferro-built engine over its fixed worker pool. Entering it is
 * bookkeeping on the main isolate (the job orchestrates there, D3); kernel tasks run on the
 * pool's workers. Capabilities per R24: a pinned engine always offers its pool to Inner mode;
 * an unpinned compatibility engine only with more than one worker.
 */
export class ManagedExecutor implements CpuDomainExecutor {
  readonly pool: EngineWorkerPool;
  readonly #capabilities: CpuDomainExecutorCapabilities;
  readonly #workerPool: WorkerPool;

  constructor(pool: EngineWorkerPool, pinned: boolean) {
    this.pool = pool;
    const workerCount = pool.workerCount;
    this.#capabilities = Object.freeze({
      workerCount,
      outerParallelism: workerCount > 1,
      innerParallelism: pinned || workerCount > 1 ? 'pool' : 'none',
      reentrancy: 'sameExecutor',
      affinity: pinned ? 'tenferroPinnedVerified' : 'none',
      shutdown: 'tenferroOwned',
    });
    this.#workerPool = cappedWorkerPool(pool, workerCount, 'ManagedExecutor.workerPool', () => undefined);
  }

  capabilities(): CpuDomainExecutorCapabilities {
    return this.#capabilities;
  }

  async install<R>(job: () => Promise<R> | R): Promise<R> {
    return await job();
  }

  submit(jobs: ScopedCpuJobs): Promise<void> {
    return runIndexedJobs(jobs);
  }

  /** The pool's workers registered the engine's record at start-up (R23); `scope` is that record. */
  runKernel<P, R>(task: KernelTask<P, R>): Promise<R> {
    return this.pool.runOn(task.lane, task.kernel, task.payload, task.op);
  }

  workerPool(): WorkerPool | undefined {
    return this.#capabilities.innerParallelism === 'pool' ? this.#workerPool : undefined;
  }
}
