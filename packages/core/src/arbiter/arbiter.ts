import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import { CpuSet } from '../topology/cpu-set.js';
import type { ExecutionOwner } from './execution-owner.js';
import type { Permit } from './permit.js';
import type { ResourceRequest } from './resource-request.js';

/**
 * Where an arbiter's state lives: `'machine'` — a shared-memory segment of the machine, shared by
 * every isolate of every process that joined it (`MachineArbiter`, #41); `'process'` — native
 * memory of `@tenferro/os`, shared by every worker_thread isolate of the process
 * (`ProcessArbiter`); `'isolate'` — this JavaScript isolate only (`ResourceArbiter`, the fallback
 * when the os binding cannot load).
 */
export type ArbiterKind = 'machine' | 'process' | 'isolate';

/** How a permit is asked for: on behalf of which execution owner (same-owner re-entry), and an `AbortSignal` that ends the wait. */
export interface AcquireOptions {
  /** The execution owner; a fresh one when omitted. The same owner re-enters its own permits (R30). */
  readonly owner?: ExecutionOwner;
  /** Aborting a queued wait rejects it with `AdmissionAborted` (an already admitted permit is unaffected). */
  readonly signal?: AbortSignal;
}

/** What an arbiter holds now for this isolate's callers: permits granted and waiters queued. */
export interface ArbiterStats {
  readonly active: number;
  readonly waiting: number;
}

/**
 * Overlap-aware admission of executions (contract §3.E, R27–R33), with two implementations of
 * identical semantics: `ResourceArbiter` (state in this isolate) and `ProcessArbiter` (state in
 * the process, shared by every isolate).
 *
 * Two permits of different owners whose CPU sets overlap are never active together; disjoint
 * ones are. A provider-exclusive request conflicts with everything. Waiters are admitted in
 * FIFO order without conflicting bypass: a request waits while an older waiter conflicts with
 * it, unless its owner already holds a permit (R29); a later request that conflicts with no
 * older waiter may go first. The uncontended path admits without queueing (R33).
 */
export interface Arbiter {
  /** Where the state lives. */
  readonly kind: ArbiterKind;
  /**
   * A permit for `request` once no held permit of another owner conflicts with it and no earlier conflicting waiter is queued.
   *
   * @example
   * ```ts
   * import { CpuSet, processArbiter } from '@tenferro/core';
   *
   * const arbiter = processArbiter();
   * using permit = await arbiter.acquire({ cpus: CpuSet.of([0]) }); // released when the scope ends
   * console.log(permit.released, arbiter.stats().active); // prints: false 1
   * ```
   */
  acquire(request: ResourceRequest, options?: AcquireOptions): Promise<Permit>;
  /**
   * The permits held and waiters queued by this arbiter object's callers (this isolate's, for the process arbiter).
   *
   * @example
   * ```ts
   * import { CpuSet, ResourceArbiter } from '@tenferro/core';
   *
   * const arbiter = new ResourceArbiter();
   * const held = await arbiter.acquire({ cpus: CpuSet.of([0, 1]) });
   * const queued = arbiter.acquire({ cpus: CpuSet.of([1]) }); // overlaps CPU 1: waits
   * console.log(arbiter.stats()); // prints: { active: 1, waiting: 1 }
   * held.release();
   * (await queued).release();
   * console.log(arbiter.stats()); // prints: { active: 0, waiting: 0 }
   * ```
   */
  stats(): ArbiterStats;
}

/** Check `acquire`'s arguments (shared by both implementations; throws `InvalidArgument`). */
export function checkAcquire(request: ResourceRequest, options: AcquireOptions, op: string): void {
  if (typeof request !== 'object' || request === null) throw invalidArgument(op, 'request', '{ cpus: CpuSet } or { providerExclusive: true }', request);
  if ('providerExclusive' in request) {
    if (request.providerExclusive !== true) throw invalidArgument(op, 'request.providerExclusive', 'true', request.providerExclusive);
  } else if (!(request.cpus instanceof CpuSet)) {
    throw invalidArgument(op, 'request.cpus', 'a CpuSet', (request as { cpus?: unknown }).cpus);
  }
  if (typeof options !== 'object' || options === null) throw invalidArgument(op, 'options', 'an options object', options);
  for (const key of Object.keys(options)) {
    if (key !== 'owner' && key !== 'signal') throw invalidArgument(op, `options.${key}`, 'one of owner, signal', key);
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) throw invalidArgument(op, 'options.signal', 'an AbortSignal', options.signal);
  if (options.owner !== undefined && (!Number.isSafeInteger(options.owner) || options.owner <= 0)) {
    throw invalidArgument(op, 'options.owner', 'a positive integer execution owner', options.owner);
  }
}

/** The error of an aborted wait. */
export function admissionAborted(signal: AbortSignal, op: string): TenferroError {
  return new TenferroError('AdmissionAborted', 'the wait for a permit was aborted', { op, cause: signal.reason });
}
