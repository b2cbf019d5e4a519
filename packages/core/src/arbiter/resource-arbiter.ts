import { type AcquireOptions, type Arbiter, type ArbiterKind, type ArbiterStats, admissionAborted, checkAcquire } from './arbiter.js';
import { type ExecutionOwner, newExecutionOwner } from './execution-owner.js';
import { Permit } from './permit.js';
import { type ResourceRequest, requestsConflict } from './resource-request.js';
import { onAbort } from '../util/abort-listeners.js';

interface Active {
  readonly request: ResourceRequest;
  readonly owner: ExecutionOwner;
}

interface Waiter extends Active {
  readonly resolve: (p: Permit) => void;
  readonly reject: (e: unknown) => void;
  readonly signal: AbortSignal | undefined;
  /** Stops listening to the waiter's signal. */
  unsubscribe: (() => void) | undefined;
}

/**
 * The in-isolate {@link Arbiter}: its state lives in this JavaScript isolate, so it keeps apart
 * only the permits taken through it. `processArbiter()` falls back to it when the `@tenferro/os`
 * binding cannot load; a `new ResourceArbiter()` is a private arbiter (tests, or an application's
 * own admission).
 *
 * Two permits of different owners whose CPU sets overlap are never active together; disjoint
 * ones are. A provider-exclusive request conflicts with everything. Waiters are admitted in
 * FIFO order without conflicting bypass: a request waits while an older waiter conflicts with
 * it, unless its owner already holds a permit (R29); a later request that conflicts with no
 * older waiter may go first. The uncontended path admits without queueing (R33).
 */
export class ResourceArbiter implements Arbiter {
  /** `'isolate'`: the state lives in this isolate. */
  readonly kind: ArbiterKind = 'isolate';
  readonly #active: Active[] = [];
  readonly #waiting: Waiter[] = [];
  readonly #ownerCounts = new Map<ExecutionOwner, number>();

  /**
   * A permit for `request` once no held permit conflicts with it (overlapping CPUs, or either exclusive) and no earlier conflicting waiter is queued.
   *
   * @example
   * ```ts
   * import { CpuSet, ResourceArbiter, newExecutionOwner } from '@tenferro/core';
   *
   * const arbiter = new ResourceArbiter();
   * const owner = newExecutionOwner();
   * const a = await arbiter.acquire({ cpus: CpuSet.of([0, 1]) }, { owner });
   * const disjoint = await arbiter.acquire({ cpus: CpuSet.of([2]) }); // no overlap: admitted at once
   * const again = await arbiter.acquire({ cpus: CpuSet.of([1]) }, { owner }); // same owner re-enters (R30)
   * console.log(again.reentrant, disjoint.reentrant); // prints: true false
   * const controller = new AbortController();
   * const waiting = arbiter.acquire({ providerExclusive: true }, { signal: controller.signal });
   * controller.abort();
   * await waiting.catch((e: { code: string }) => console.log(e.code)); // prints: AdmissionAborted
   * for (const p of [a, disjoint, again]) p.release();
   * ```
   */
  acquire(request: ResourceRequest, options: AcquireOptions = {}): Promise<Permit> {
    try {
      const got = this.admitOrWait(request, options);
      return got instanceof Permit ? Promise.resolve(got) : got;
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * {@link acquire} without a promise when the request is admitted at once: the permit itself,
   * else a promise of it. Throws what `acquire` rejects with up front.
   * @internal
   */
  admitOrWait(request: ResourceRequest, options: AcquireOptions = {}): Permit | Promise<Permit> {
    const op = 'ResourceArbiter.acquire';
    checkAcquire(request, options, op);
    const owner = options.owner ?? newExecutionOwner();
    const signal = options.signal;
    if (signal?.aborted) throw admissionAborted(signal, op);
    if (!this.#conflictsWithActive(request, owner) && (this.#ownerCounts.has(owner) || !this.#conflictsWithWaiters(request, this.#waiting.length))) {
      // Fast path (R33) and admission ahead of non-conflicting older waiters (R29).
      const permit = this.#admit(request, owner);
      if (this.#waiting.length > 0) this.#drain();
      return permit;
    }
    return new Promise<Permit>((resolve, reject) => {
      const waiter: Waiter = { request, owner, resolve, reject, signal, unsubscribe: undefined };
      if (signal !== undefined) {
        waiter.unsubscribe = onAbort(signal, () => this.#abort(waiter));
      }
      this.#waiting.push(waiter);
    });
  }

  /**
   * The permits held and waiters queued now.
   *
   * @example
   * ```ts
   * import { CpuSet, ResourceArbiter } from '@tenferro/core';
   *
   * const arbiter = new ResourceArbiter();
   * const exclusive = await arbiter.acquire({ providerExclusive: true });
   * const queued = arbiter.acquire({ cpus: CpuSet.of([3]) }); // conflicts with the exclusive permit
   * console.log(arbiter.stats()); // prints: { active: 1, waiting: 1 }
   * exclusive.release(); // admits the waiter
   * (await queued).release();
   * console.log(arbiter.stats()); // prints: { active: 0, waiting: 0 }
   * ```
   */
  stats(): ArbiterStats {
    return { active: this.#active.length, waiting: this.#waiting.length };
  }

  #conflictsWithActive(request: ResourceRequest, owner: ExecutionOwner): boolean {
    for (const a of this.#active) {
      if (a.owner !== owner && requestsConflict(a.request, request)) return true;
    }
    return false;
  }

  #admit(request: ResourceRequest, owner: ExecutionOwner): Permit {
    const entry: Active = { request, owner };
    const held = this.#ownerCounts.get(owner) ?? 0;
    this.#ownerCounts.set(owner, held + 1);
    this.#active.push(entry);
    return new Permit(request, owner, held > 0, () => this.#release(entry));
  }

  #release(entry: Active): void {
    const i = this.#active.indexOf(entry);
    if (i < 0) return;
    this.#active.splice(i, 1);
    const held = this.#ownerCounts.get(entry.owner)! - 1;
    if (held === 0) this.#ownerCounts.delete(entry.owner);
    else this.#ownerCounts.set(entry.owner, held);
    if (this.#waiting.length > 0) this.#drain();
  }

  #abort(waiter: Waiter): void {
    const i = this.#waiting.indexOf(waiter);
    if (i < 0) return;
    this.#waiting.splice(i, 1);
    waiter.reject(admissionAborted(waiter.signal!, 'ResourceArbiter.acquire'));
    this.#drain();
  }

  /**
   * Admit, in FIFO order, every waiter that R29 allows now. An admission can make an older
   * waiter admissible (its owner now holds a permit, which waives FIFO precedence), so the scan
   * restarts from the front after each one.
   */
  #drain(): void {
    let i = 0;
    while (i < this.#waiting.length) {
      const w = this.#waiting[i]!;
      if (this.#admissible(w, i)) {
        this.#waiting.splice(i, 1);
        w.unsubscribe?.();
        w.resolve(this.#admit(w.request, w.owner));
        i = 0;
        continue;
      }
      i++;
    }
  }

  #admissible(w: Waiter, position: number): boolean {
    if (this.#conflictsWithActive(w.request, w.owner)) return false;
    return this.#ownerCounts.has(w.owner) || !this.#conflictsWithWaiters(w.request, position);
  }

  /** Whether `request` conflicts with any of the first `count` waiters. */
  #conflictsWithWaiters(request: ResourceRequest, count: number): boolean {
    for (let j = 0; j < count; j++) {
      if (requestsConflict(this.#waiting[j]!.request, request)) return true;
    }
    return false;
  }
}
