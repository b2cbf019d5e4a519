import { TenferroError } from '../../errors/tenferro-error.js';
import { settleAll } from '../../util/settle-all.js';
import type { KernelRef } from '../../contract/kernel.js';
import type { LaneRunner, WorkerPool } from '../../contract/worker-pool.js';
import { closeFanOut, openFanOut } from '../workers/fan-out-join.js';

/**
 * A {@link WorkerPool} over the first `size` lanes of `runner`; `spawnsThreads`: its tasks are of a
 * provider that starts threads on first use, never narrowed (`KernelTask.spawnsThreadsOnFirstUse`, #36).
 */
export function cappedWorkerPool(runner: LaneRunner, size: number, op: string, isLive: () => void, spawnsThreads = false): WorkerPool {
  const lanes = Math.max(1, Math.min(size, runner.workerCount));
  return Object.freeze({
    size: lanes,
    runOn<P, R>(lane: number, kernel: KernelRef<P, R>, payload?: P): Promise<R> {
      isLive();
      if (!Number.isInteger(lane) || lane < 0 || lane >= lanes) {
        return Promise.reject(new TenferroError('Scheduling', `lane ${lane} is outside the pool's ${lanes} lanes`, { op }));
      }
      return runner.runOn(lane, kernel, payload, op, 1, spawnsThreads);
    },
    map<P, R>(kernel: KernelRef<P, R>, payloads: readonly P[]): Promise<R[]> {
      try {
        isLive();
      } catch (e) {
        return Promise.reject(e);
      }
      const post = (k: number, payload: P): Promise<R> => {
        try {
          return runner.runOn(k, kernel, payload, op, 1, spawnsThreads);
        } catch (e) {
          return Promise.reject(e);
        }
      };
      // One payload per lane (a provider's fan-out): every task posted now, one join — 3 promises
      // for two lanes where lane loops took 10 (each a trip through Node's async hooks).
      if (payloads.length <= lanes) {
        // Two or more: the lanes of one fan-out, which may wait together on a join slot (fan-out-join.ts).
        const fanOut = payloads.length > 1;
        if (fanOut) openFanOut();
        try {
          return settleAll(payloads.map((payload, k) => post(k, payload)));
        } finally {
          if (fanOut) closeFanOut();
        }
      }
      const results = new Array<R>(payloads.length);
      const lane = async (k: number) => {
        for (let i = k; i < payloads.length; i += lanes) results[i] = await post(k, payloads[i]!);
      };
      return settleAll(Array.from({ length: lanes }, (_, k) => lane(k))).then(() => results);
    },
  });
}
