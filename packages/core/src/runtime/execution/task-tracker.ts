import { SmallSet } from '../../util/small-set.js';
import type { KernelRef } from '../../contract/kernel.js';
import type { LaneRunner } from '../../contract/worker-pool.js';
import type { TenferroError } from '../../errors/tenferro-error.js';

/**
 * Every kernel task an execution starts, through any of its contexts. The execution ends — its
 * engine marked idle, its permit released — only after each has settled (`settle`), so no kernel
 * ever outlives the permit it ran under, even one a failing `Promise.all` branch or an un-awaited
 * `ctx.run` left behind.
 */
const SETTLED: Promise<unknown> = Promise.resolve(undefined);
const NONE: readonly Promise<unknown>[] = Object.freeze([]);

export class TaskTracker implements LaneRunner {
  readonly #runner: LaneRunner;
  /** The task in flight when it is the only one (the common case: no set per execution). */
  #one: Promise<unknown> | undefined;
  /** The others, beside `#one`, when more than one is in flight. */
  #more: SmallSet<Promise<unknown>> | undefined;
  #stopped: TenferroError | undefined;

  constructor(runner: LaneRunner) {
    this.#runner = runner;
  }

  get workerCount(): number {
    return this.#runner.workerCount;
  }

  runOn<P, R>(lane: number, kernel: KernelRef<P, R>, payload: P | undefined, op: string, threads?: number, spawnsThreads?: boolean): Promise<R> {
    if (this.#stopped !== undefined) return Promise.reject(this.#stopped);
    const task = this.#runner.runOn(lane, kernel, payload, op, threads, spawnsThreads);
    if (this.#one === undefined) this.#one = task;
    else (this.#more ??= new SmallSet()).add(task);
    const done = () => {
      if (this.#one === task) this.#one = undefined;
      else this.#more?.delete(task);
    };
    task.then(done, done);
    return task;
  }

  /** Every task in flight, as a new array. */
  #all(): Promise<unknown>[] {
    const all = this.#more === undefined ? [] : this.#more.toArray();
    if (this.#one !== undefined) all.push(this.#one);
    return all;
  }

  /** Refuse every task asked for from now on with `error` (the execution was aborted or closed). */
  stop(error: TenferroError): void {
    this.#stopped ??= error;
  }

  /**
   * Wait until no task is in flight. Returns the first error of a task that was still running
   * when this was called (an orphan nobody awaited), or `undefined`.
   */
  /** Whether a task is still in flight. */
  get busy(): boolean {
    return this.#one !== undefined || (this.#more !== undefined && this.#more.size > 0);
  }

  /** The tasks in flight right now (when a body has just ended: the ones it left behind). */
  inFlight(): readonly Promise<unknown>[] {
    return this.busy ? this.#all() : NONE;
  }

  /**
   * Wait until `orphans` and every task in flight have settled. Returns the first error among
   * `orphans` (tasks a body left behind when it ended, which may have failed since) and the tasks
   * in flight now, or `undefined`.
   */
  settle(orphans: readonly Promise<unknown>[] = NONE): Promise<unknown> {
    // Nothing in flight (the common case): no async frame to pay for.
    if (!this.busy && orphans.length === 0) return SETTLED;
    return this.#settleAll(orphans);
  }

  async #settleAll(orphans: readonly Promise<unknown>[]): Promise<unknown> {
    let orphanError: unknown;
    let batch = orphans.length === 0 ? this.#all() : [...new Set([...orphans, ...this.#all()])];
    while (batch.length > 0) {
      const results = await Promise.allSettled(batch);
      for (const r of results) if (r.status === 'rejected' && orphanError === undefined) orphanError = r.reason ?? new Error('a kernel task failed');
      batch = this.#all();
    }
    return orphanError;
  }

}
