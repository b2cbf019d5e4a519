import type { KernelRef } from './kernel.js';

/**
 * The worker pool an entered context exposes to Inner-mode providers (the Rust `rayon_pool`).
 * `size` is already capped at the operation's thread budget (R75, R76): a provider uses at most
 * `size` workers at once and never creates threads of its own. Running on it is not an executor
 * entry and needs no permit.
 */
export interface WorkerPool {
  readonly size: number;
  /**
   * Run `kernel` once per payload, at most `size` at a time on distinct workers; results in payload order.
   *
   * @example
   * ```ts
   * import { CpuBackend, defineKernel } from '@tenferro/core';
   *
   * const square = defineKernel<number, number>('data:text/javascript,export const square = (x) => x * x;', 'square');
   * const backend = await CpuBackend.create({ threads: 2 });
   * // A session enters in Inner mode: with a budget above 1 its context exposes the pool.
   * const squares = await backend.withBackendSession((s) => s.context!.workerPool()!.map(square, [1, 2, 3]));
   * console.log(squares); // prints: [ 1, 4, 9 ]
   * await backend.close();
   * ```
   */
  map<P, R>(kernel: KernelRef<P, R>, payloads: readonly P[]): Promise<R[]>;
  /**
   * Run `kernel` on worker `lane` (`0 <= lane < size`).
   *
   * @example
   * ```ts
   * import { CpuBackend, defineKernel } from '@tenferro/core';
   *
   * const lane = defineKernel<undefined, number>('data:text/javascript,export const lane = (_, info) => info.workerIndex;', 'lane');
   * const backend = await CpuBackend.create({ threads: 2 });
   * const lanes = await backend.withBackendSession((s) => {
   *   const pool = s.context!.workerPool()!;
   *   return Promise.all([pool.runOn(0, lane), pool.runOn(1, lane)]);
   * });
   * console.log(lanes); // prints: [ 0, 1 ]
   * await backend.close();
   * ```
   */
  runOn<P, R>(lane: number, kernel: KernelRef<P, R>, payload?: P): Promise<R>;
}

/** What a pool implementation provides so that a capped {@link WorkerPool} view can be built on it. */
export interface LaneRunner {
  readonly workerCount: number;
  /** `threads`: see `KernelTask.threads` (absent: 1); `spawnsThreads`: `KernelTask.spawnsThreadsOnFirstUse` (absent: false). */
  runOn<P, R>(lane: number, kernel: KernelRef<P, R>, payload: P | undefined, op: string, threads?: number, spawnsThreads?: boolean): Promise<R>;
}
