import type { KernelRef } from './kernel.js';

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
