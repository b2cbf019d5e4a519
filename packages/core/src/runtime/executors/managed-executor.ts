import type { KernelTask } from '../../contract/executor.js';
import type { EngineWorkerPool } from '../workers/engine-worker-pool.js';
import { PoolExecutor } from './pool-executor.js';
import { postedThreads } from '../workers/lane-spread.js';

/**
 * The executor of a tenferro-built engine over its fixed worker pool. Capabilities per R24: a
 * pinned engine always offers its pool to Inner mode; an unpinned compatibility engine only with
 * more than one worker.
 */
export class ManagedExecutor extends PoolExecutor {
  readonly pool: EngineWorkerPool;

  constructor(pool: EngineWorkerPool, pinned: boolean) {
    const workerCount = pool.workerCount;
    super(
      {
        workerCount,
        outerParallelism: workerCount > 1,
        innerParallelism: pinned || workerCount > 1 ? 'pool' : 'none',
        reentrancy: 'sameExecutor',
        affinity: pinned ? 'tenferroPinnedVerified' : 'none',
        shutdown: 'tenferroOwned',
      },
      pool,
      'ManagedExecutor',
    );
    this.pool = pool;
  }

  /** The pool's workers registered the engine's record at start-up (R23); `scope` is that record. */
  runKernel<P, R>(task: KernelTask<P, R>): Promise<R> {
    return this.pool.runOn(task.lane, task.kernel, task.payload, task.op, postedThreads(task));
  }
}
