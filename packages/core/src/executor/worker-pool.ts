import { TenferroError } from '../errors/tenferro-error.js';
import { settleAll } from '../internal/settle-all.js';
import type { KernelRef } from './kernel-ref.js';

/**
 * The worker pool an entered context exposes to Inner-mode providers (the Rust `rayon_pool`).
 * `size` is already capped at the operation's thread budget (R75, R76): a provider uses at most
 * `size` workers at once and never creates threads of its own. Running on it is not an executor
 * entry and needs no permit.
 */
export interface WorkerPool {
  readonly size: number;
  /** Run `kernel` once per payload, at most `size` at a time on distinct workers; results in payload order. */
  map<P, R>(kernel: KernelRef<P, R>, payloads: readonly P[]): Promise<R[]>;
  /** Run `kernel` on worker `lane` (`0 <= lane < size`). */
  runOn<P, R>(lane: number, kernel: KernelRef<P, R>, payload?: P): Promise<R>;
}

/** What a pool implementation provides so that a capped {@link WorkerPool} view can be built on it. */
export interface LaneRunner {
  readonly workerCount: number;
  runOn<P, R>(lane: number, kernel: KernelRef<P, R>, payload: P | undefined, op: string): Promise<R>;
}

/** A {@link WorkerPool} over the first `size` lanes of `runner`. */
export function cappedWorkerPool(runner: LaneRunner, size: number, op: string, isLive: () => void): WorkerPool {
  const lanes = Math.max(1, Math.min(size, runner.workerCount));
  return Object.freeze({
    size: lanes,
    runOn<P, R>(lane: number, kernel: KernelRef<P, R>, payload?: P): Promise<R> {
      isLive();
      if (!Number.isInteger(lane) || lane < 0 || lane >= lanes) {
        return Promise.reject(new TenferroError('Scheduling', `lane ${lane} is outside the pool's ${lanes} lanes`, { op }));
      }
      return runner.runOn(lane, kernel, payload, op);
    },
    async map<P, R>(kernel: KernelRef<P, R>, payloads: readonly P[]): Promise<R[]> {
      isLive();
      const results = new Array<R>(payloads.length);
      const width = Math.min(lanes, payloads.length);
      const lane = async (k: number) => {
        for (let i = k; i < payloads.length; i += width) results[i] = await runner.runOn(k, kernel, payloads[i], op);
      };
      await settleAll(Array.from({ length: width }, (_, k) => lane(k)));
      return results;
    },
  });
}
