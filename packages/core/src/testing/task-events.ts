import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { DIAGNOSTICS_CHANNELS, type TaskEvent } from '../diagnostics/channels.js';

/**
 * Every `tenferro:task` event (one per kernel task an engine worker ran) published while `work`
 * runs, in order, with `work`'s result — for tests of what a provider's tasks were posted as: a
 * kernel that starts no thread should show `threads: 1` on every task (`ctx.run(kernel, payload,
 * { threads: 1 })`), a split shows `fanOut` lanes.
 *
 * @example
 * ```ts
 * import { CpuBackend, Tensor } from '@tenferro/core';
 * import { taskEventsDuring } from '@tenferro/core/testing';
 *
 * const backend = await CpuBackend.create({ threads: 1, providers: [] });
 * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
 * const { events } = await taskEventsDuring(async () => (await backend.matmul(a, a)).dispose());
 * console.log(events.map((e) => `${e.kernel}: ${e.threads}`)); // prints: [ 'referenceGemm: 1' ]
 * await backend.close();
 * ```
 */
export async function taskEventsDuring<R>(work: () => Promise<R>): Promise<{ result: R; events: TaskEvent[] }> {
  const events: TaskEvent[] = [];
  const listen = (event: unknown): void => void events.push(event as TaskEvent);
  subscribe(DIAGNOSTICS_CHANNELS.task, listen);
  try {
    return { result: await work(), events };
  } finally {
    unsubscribe(DIAGNOSTICS_CHANNELS.task, listen);
  }
}
