import type { CpuExecutionContext } from '../contract/execution-context.js';
import type { WorkerPool } from '../contract/worker-pool.js';

/**
 * `ctx` as a provider sees it, with every kernel task it starts reported to `note(lane)` first:
 * `ctx.run` runs on the context's own worker, lane 0 of its pool; `pool.runOn(lane)` on `lane`;
 * `pool.map` on lanes `0 … min(size, payloads) - 1`. The conformance kit's lane count and the
 * forging provider's "started a kernel task" are both built on it.
 */
export function watchedContext(ctx: CpuExecutionContext, note: (lane: number) => void): CpuExecutionContext {
  const pool = ctx.workerPool();
  const watchedPool: WorkerPool | undefined =
    pool === undefined
      ? undefined
      : Object.freeze({
          size: pool.size,
          runOn: (lane, kernel, payload) => (note(lane), pool.runOn(lane, kernel, payload)),
          map: (kernel, payloads) => {
            for (let lane = 0; lane < Math.min(pool.size, payloads.length); lane++) note(lane);
            return pool.map(kernel, payloads);
          },
        } satisfies WorkerPool);
  return Object.freeze({
    domainId: ctx.domainId,
    cpus: ctx.cpus,
    admissionMode: ctx.admissionMode,
    threadBudget: ctx.threadBudget,
    parallelMode: ctx.parallelMode,
    indexedPlans: ctx.indexedPlans,
    get live() {
      return ctx.live;
    },
    get abortWord() {
      return ctx.abortWord;
    },
    workerPool: () => watchedPool,
    nativeThreadCount: () => ctx.nativeThreadCount(),
    run: (kernel, payload, options) => (note(0), ctx.run(kernel, payload, options)),
  } satisfies CpuExecutionContext);
}
