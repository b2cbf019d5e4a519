import type { ExecutionOwner } from './execution-owner.js';
import { type ResourceRequest, describeRequest } from './resource-request.js';

/**
 * A permit to run on a set of CPUs (or exclusively), from either arbiter. Release it exactly
 * once — `release()` is idempotent and `using permit = await arbiter.acquire(…)` releases on
 * every exit.
 */
export class Permit {
  readonly #request: ResourceRequest;
  readonly #owner: ExecutionOwner;
  readonly #reentrant: boolean;
  readonly #giveBack: () => void;
  #released = false;

  /** @internal */
  constructor(request: ResourceRequest, owner: ExecutionOwner, reentrant: boolean, giveBack: () => void) {
    this.#request = request;
    this.#owner = owner;
    this.#reentrant = reentrant;
    this.#giveBack = giveBack;
  }

  /** What this permit admits: the CPU set (and exclusivity) it was asked for. */
  get request(): ResourceRequest {
    return this.#request;
  }

  /** The execution it was granted to. */
  get owner(): ExecutionOwner {
    return this.#owner;
  }

  /** True when the owner already held an active permit at admission (R30). */
  get reentrant(): boolean {
    return this.#reentrant;
  }

  /** Whether `release()` was called. */
  get released(): boolean {
    return this.#released;
  }

  /**
   * Give the CPUs back; the next waiters whose requests no longer conflict are admitted, in FIFO order. Idempotent.
   *
   * @example
   * ```ts
   * import { CpuSet, ResourceArbiter } from '@tenferro/core';
   *
   * const arbiter = new ResourceArbiter();
   * const permit = await arbiter.acquire({ cpus: CpuSet.of([0]) });
   * permit.release();
   * permit.release(); // idempotent
   * console.log(permit.released, arbiter.stats().active); // prints: true 0
   * ```
   */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#giveBack();
  }

  /**
   * `release()`, for `using permit = await arbiter.acquire(…)`.
   *
   * @example
   * ```ts
   * import { CpuSet, ResourceArbiter } from '@tenferro/core';
   *
   * const arbiter = new ResourceArbiter();
   * {
   *   using permit = await arbiter.acquire({ cpus: CpuSet.of([0]) });
   *   console.log(permit.released); // prints: false
   * } // disposed here, also when the block throws
   * console.log(arbiter.stats().active); // prints: 0
   * ```
   */
  [Symbol.dispose](): void {
    this.release();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Permit(${describeRequest(this.#request)}, owner ${this.#owner}${this.#released ? ', released' : ''})`;
  }
}
