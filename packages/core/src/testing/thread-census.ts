import { processThreadIds } from '../topology/process-threads.js';

/**
 * The kernel thread ids of this process right now (`/proc/self/task`), ascending — the cheap form
 * of the census `CpuBackend.census()` takes with names, masks and owners (same procfs reader).
 *
 * @example
 * ```ts
 * import { threadCensus } from '@tenferro/core/testing';
 *
 * const tids = threadCensus();
 * console.log(tids.includes(process.pid)); // prints: true
 * console.log(tids.length); // e.g. 7
 * ```
 */
export function threadCensus(): number[] {
  return processThreadIds().sort((a, b) => a - b);
}

/**
 * Sample the census on the main thread while `work` runs (compute runs on engine workers, so
 * the event loop stays free) and report the most threads seen at once.
 *
 * @example
 * ```ts
 * import { CpuBackend } from '@tenferro/core';
 * import { peakThreadsDuring } from '@tenferro/core/testing';
 *
 * const { result, before, peak, newThreads } = await peakThreadsDuring(async () => {
 *   const backend = await CpuBackend.create({ threads: 2 });
 *   await backend.ready(); // starts 2 engine workers
 *   const n = backend.numThreads();
 *   await backend.close();
 *   return n;
 * });
 * console.log(result, peak >= before + 2, newThreads.length >= 2); // prints: 2 true true
 * ```
 */
export async function peakThreadsDuring<R>(work: () => Promise<R>): Promise<{ result: R; before: number; peak: number; after: number; newThreads: number[] }> {
  const before = threadCensus();
  const known = new Set(before);
  const fresh = new Set<number>();
  let peak = before.length;
  let done = false;
  const sample = () => {
    const now = threadCensus();
    peak = Math.max(peak, now.length);
    for (const t of now) if (!known.has(t)) fresh.add(t);
  };
  const sampler = (async () => {
    while (!done) {
      sample();
      await new Promise((r) => setImmediate(r));
    }
  })();
  try {
    const result = await work();
    return { result, before: before.length, peak, after: threadCensus().length, newThreads: [...fresh] };
  } finally {
    done = true;
    await sampler;
  }
}
