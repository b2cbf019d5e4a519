import { TenferroError, invalidArgument } from '../../errors/tenferro-error.js';
import { compiledModuleUrl } from '../../util/compiled-url.js';
import type { KernelTask } from '../../contract/executor.js';
import type { KernelRef } from '../../contract/kernel.js';
import { kernelFailed } from '../workers/kernel-error.js';
import type { PiscinaKernelResult, PiscinaKernelTask } from './piscina-task.js';
import { PoolExecutor } from './pool-executor.js';

/** The part of a piscina pool the adapter uses (piscina itself is the application's dependency). */
export interface PiscinaPoolLike {
  /** piscina's `run(task, { filename, name })`: run export `name` of module `filename` on one of the pool's workers. */
  run(task: unknown, options: { filename: string; name: string }): Promise<unknown>;
  readonly options: { readonly maxThreads: number };
}

let taskModule: string | undefined;
/** The compiled piscina task module, resolved on first use (never at import). */
function piscinaTaskModule(): string {
  taskModule ??= compiledModuleUrl(new URL('./piscina-task.js', import.meta.url));
  return taskModule;
}

/**
 * The caller-owned pool adapter (contract R44) for piscina: wraps a pool the application owns,
 * never creates or destroys it (`shutdown: 'callerOwned'`), runs tenferro kernel tasks on
 * exactly that pool (per-task `filename`/`name`), partitions only the indexed jobs tenferro
 * supplies, and offers that pool to Inner-mode providers. Nothing ever falls back to another
 * pool or to the main thread. Affinity: `none` — piscina's workers are not pinned by tenferro.
 */
export class PiscinaDomainExecutor extends PoolExecutor {
  readonly #pool: PiscinaPoolLike;

  constructor(pool: PiscinaPoolLike) {
    const op = 'PiscinaDomainExecutor';
    if (typeof pool !== 'object' || pool === null || typeof pool.run !== 'function' || typeof pool.options?.maxThreads !== 'number') {
      throw invalidArgument(op, 'pool', 'a piscina pool', pool);
    }
    const workerCount = pool.options.maxThreads;
    super(
      {
        workerCount,
        outerParallelism: workerCount > 1,
        innerParallelism: 'pool',
        reentrancy: 'sameExecutor',
        affinity: 'none',
        shutdown: 'callerOwned',
      },
      // Tasks from the executor-level pool carry no domain record; the domain's own entries do.
      { workerCount, runOn: <P, R>(_lane: number, kernel: KernelRef<P, R>, payload: P | undefined, o: string) => this.#run(kernel.module, kernel.exportName, payload, undefined, o) as Promise<R> },
      'PiscinaDomainExecutor',
    );
    this.#pool = pool;
  }

  /** piscina picks the worker; lanes only bound how many run at once (the capped pool's width). */
  runKernel<P, R>(task: KernelTask<P, R>): Promise<R> {
    return this.#run(task.kernel.module, task.kernel.exportName, task.payload, task.scope, task.op) as Promise<R>;
  }

  async #run(module: string, exportName: string, payload: unknown, scope: SharedArrayBuffer | undefined, op: string): Promise<unknown> {
    const task: PiscinaKernelTask = { module, exportName, payload, scope: scope ?? new SharedArrayBuffer(8) };
    let result: PiscinaKernelResult;
    try {
      result = (await this.#pool.run(task, { filename: piscinaTaskModule(), name: 'runTenferroKernel' })) as PiscinaKernelResult;
    } catch (e) {
      throw new TenferroError('ExecutorFailed', `the piscina pool failed to run a kernel task: ${e instanceof Error ? e.message : String(e)}`, { op, cause: e });
    }
    if ('error' in result) throw kernelFailed(result.error, { module, exportName }, op);
    return result.value;
  }
}
