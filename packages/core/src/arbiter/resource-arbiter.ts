import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import { CpuSet } from '../topology/cpu-set.js';
import { type ResourceRequest, describeRequest, requestsConflict } from './resource-request.js';
import { onAbort } from '../util/abort-listeners.js';

/**
 * An execution owner: a process-unique positive integer. Owners count up to 2^53 − 1, which a
 * process cannot reach (a million executions a second for 285 years); engines, whose shared
 * records hold 32-bit words, store their `ownerSlot`s instead.
 */
export type ExecutionOwner = number;

let lastOwner = 0;
/** A fresh process-unique execution owner id. */
export function newExecutionOwner(): ExecutionOwner {
  return ++lastOwner;
}

/** Tests only (not exported by the package): continue counting owners after `last`. */
export function continueOwnersAfter(last: number): void {
  lastOwner = last;
}

/**
 * The non-zero 31-bit word an engine's shared record stores for `owner`. Two owners share a
 * slot only 2^31 − 1 owners apart, and two such executions are never active on one engine
 * together: the arbiter, which compares whole owners, keeps their permits apart, and the
 * caller-managed guard admits one claim at a time.
 */
export function ownerSlot(owner: ExecutionOwner): number {
  return ((owner - 1) % 0x7fffffff) + 1;
}

/** How a permit is asked for: on behalf of which execution owner (same-owner re-entry), and an `AbortSignal` that ends the wait. */
export interface AcquireOptions {
  /** The execution owner; a fresh one when omitted. The same owner re-enters its own permits (R30). */
  readonly owner?: ExecutionOwner;
  /** Aborting a queued wait rejects it with `AdmissionAborted` (an already admitted permit is unaffected). */
  readonly signal?: AbortSignal;
}

/** What the arbiter holds now: permits granted and waiters queued. */
export interface ArbiterStats {
  readonly active: number;
  readonly waiting: number;
}

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
 * A permit to run on a set of CPUs (or exclusively). Release it exactly once — `release()` is
 * idempotent and `using permit = await arbiter.acquire(…)` releases on every exit.
 */
export class Permit {
  readonly #arbiter: ResourceArbiter;
  readonly #entry: Active;
  readonly #reentrant: boolean;
  #released = false;

  /** @internal */
  constructor(arbiter: ResourceArbiter, entry: Active, reentrant: boolean) {
    this.#arbiter = arbiter;
    this.#entry = entry;
    this.#reentrant = reentrant;
  }

  /** What this permit admits: the CPU set (and exclusivity) it was asked for. */
  get request(): ResourceRequest {
    return this.#entry.request;
  }

  /** The execution it was granted to. */
  get owner(): ExecutionOwner {
    return this.#entry.owner;
  }

  /** True when the owner already held an active permit at admission (R30). */
  get reentrant(): boolean {
    return this.#reentrant;
  }

  /** Whether `release()` was called. */
  get released(): boolean {
    return this.#released;
  }

  /** Give the CPUs back; the next waiters whose requests no longer conflict are admitted, in FIFO order. Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#arbiter[RELEASE](this.#entry);
  }

  /** `release()`, for `using permit = await arbiter.acquire(…)`. */
  [Symbol.dispose](): void {
    this.release();
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `Permit(${describeRequest(this.#entry.request)}, owner ${this.#entry.owner}${this.#released ? ', released' : ''})`;
  }
}

const RELEASE = Symbol('release');

/**
 * Overlap-aware admission of executions (contract §3.E).
 *
 * Two permits of different owners whose CPU sets overlap are never active together; disjoint
 * ones are. A provider-exclusive request conflicts with everything. Waiters are admitted in
 * FIFO order without conflicting bypass: a request waits while an older waiter conflicts with
 * it, unless its owner already holds a permit (R29); a later request that conflicts with no
 * older waiter may go first. The uncontended path admits without queueing (R33).
 */
export class ResourceArbiter {
  readonly #active: Active[] = [];
  readonly #waiting: Waiter[] = [];
  readonly #ownerCounts = new Map<ExecutionOwner, number>();

  /** A permit for `request` once no held permit conflicts with it (overlapping CPUs, or either exclusive) and no earlier conflicting waiter is queued. */
  acquire(request: ResourceRequest, options: AcquireOptions = {}): Promise<Permit> {
    const op = 'ResourceArbiter.acquire';
    try {
      validateRequest(request, op);
      if (options.owner !== undefined && (!Number.isSafeInteger(options.owner) || options.owner <= 0)) {
        throw invalidArgument(op, 'options.owner', 'a positive integer execution owner', options.owner);
      }
    } catch (e) {
      return Promise.reject(e);
    }
    const owner = options.owner ?? newExecutionOwner();
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(aborted(signal));
    if (!this.#conflictsWithActive(request, owner) && (this.#ownerCounts.has(owner) || !this.#conflictsWithWaiters(request, this.#waiting.length))) {
      // Fast path (R33) and admission ahead of non-conflicting older waiters (R29).
      const permit = this.#admit(request, owner);
      if (this.#waiting.length > 0) this.#drain();
      return Promise.resolve(permit);
    }
    return new Promise<Permit>((resolve, reject) => {
      const waiter: Waiter = { request, owner, resolve, reject, signal, unsubscribe: undefined };
      if (signal !== undefined) {
        waiter.unsubscribe = onAbort(signal, () => this.#abort(waiter));
      }
      this.#waiting.push(waiter);
    });
  }

  /** The permits held and waiters queued now. */
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
    return new Permit(this, entry, held > 0);
  }

  /** @internal */
  [RELEASE](entry: Active): void {
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
    waiter.reject(aborted(waiter.signal!));
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

function validateRequest(request: ResourceRequest, op: string): void {
  if (typeof request !== 'object' || request === null) throw invalidArgument(op, 'request', '{ cpus: CpuSet } or { providerExclusive: true }', request);
  if ('providerExclusive' in request) {
    if (request.providerExclusive !== true) throw invalidArgument(op, 'request.providerExclusive', 'true', request.providerExclusive);
    return;
  }
  if (!(request.cpus instanceof CpuSet)) throw invalidArgument(op, 'request.cpus', 'a CpuSet', (request as { cpus?: unknown }).cpus);
}

function aborted(signal: AbortSignal): TenferroError {
  return new TenferroError('AdmissionAborted', 'the wait for a permit was aborted', { op: 'ResourceArbiter.acquire', cause: signal.reason });
}

const GLOBAL_KEY = Symbol.for('tenferro.core.v0.arbiter');

/** The process-wide arbiter (one per isolate; shared by every copy of @tenferro/core 0.x in it). */
export function processArbiter(): ResourceArbiter {
  const g = globalThis as Record<symbol, unknown>;
  let arbiter = g[GLOBAL_KEY] as ResourceArbiter | undefined;
  if (arbiter === undefined) {
    arbiter = new ResourceArbiter();
    Object.defineProperty(g, GLOBAL_KEY, { value: arbiter, enumerable: false, configurable: false, writable: false });
  }
  return arbiter;
}
