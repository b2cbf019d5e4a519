import { runIndexedJobs } from '../../util/settle-all.js';
import type { CpuDomainExecutor, CpuDomainExecutorCapabilities, KernelTask, ScopedCpuJobs } from '../../contract/executor.js';
import type { LaneRunner, WorkerPool } from '../../contract/worker-pool.js';
import { cappedWorkerPool } from './capped-worker-pool.js';

/**
 * What every executor over a pool of workers shares on Node (D3): entering it is bookkeeping on
 * the calling isolate — the job orchestrates there — and compute goes to the pool as kernel
 * tasks; `submit` runs the indexed jobs tenferro supplies and joins; Inner-mode providers get the
 * pool when the capabilities offer it. Subclasses say how a kernel task reaches a worker.
 */
export abstract class PoolExecutor implements CpuDomainExecutor {
  readonly #capabilities: CpuDomainExecutorCapabilities;
  readonly #workerPool: WorkerPool;

  protected constructor(capabilities: CpuDomainExecutorCapabilities, runner: LaneRunner, name: string) {
    this.#capabilities = Object.freeze({ ...capabilities });
    this.#workerPool = cappedWorkerPool(runner, capabilities.workerCount, `${name}.workerPool`, () => undefined);
  }

  /** The capabilities fixed at construction (workers, parallelism, affinity, who shuts it down). */
  capabilities(): CpuDomainExecutorCapabilities {
    return this.#capabilities;
  }

  /** Run `job` once on the calling isolate: it orchestrates there, its compute goes to the pool as kernel tasks. */
  install<R>(job: () => Promise<R> | R): Promise<R> {
    // Not an async function: the job's own promise is returned as it is (one promise less per operation).
    try {
      const value = job();
      return value instanceof Promise ? value : Promise.resolve(value);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** Run every indexed job and join. */
  submit(jobs: ScopedCpuJobs): Promise<void> {
    return runIndexedJobs(jobs);
  }

  /** The pool Inner-mode providers fan out on, when the capabilities offer one. */
  workerPool(): WorkerPool | undefined {
    return this.#capabilities.innerParallelism === 'pool' ? this.#workerPool : undefined;
  }

  abstract runKernel<P, R>(task: KernelTask<P, R>): Promise<R>;
}
