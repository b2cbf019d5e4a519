import { ARBITER_FLAGS, type ArbiterClient, type OsBinding, loadOs } from '@tenferro/os';
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { CpuSet } from '../topology/cpu-set.js';
import { onAbort } from '../util/abort-listeners.js';
import { type AcquireOptions, type Arbiter, type ArbiterKind, type ArbiterStats, admissionAborted, checkAcquire } from './arbiter.js';
import { type ExecutionOwner, newExecutionOwner } from './execution-owner.js';
import { Permit } from './permit.js';
import type { ResourceRequest } from './resource-request.js';

/** How `ProcessArbiter.open` opens its client. */
export interface ProcessArbiterOptions {
  /**
   * `true`: a private native state of its own instead of the process-wide one — the same code and
   * rule, shared with nobody (tests, benchmarks). Default `false`.
   */
  readonly isolated?: boolean;
}

/** The process-wide state as the binding sees it: every isolate's permits and waiters, and its clients. */
export interface ProcessArbiterStats extends ArbiterStats {
  /** Open clients (about one per isolate that uses tenferro). */
  readonly clients: number;
}

interface Waiter {
  readonly request: ResourceRequest;
  readonly owner: ExecutionOwner;
  readonly resolve: (p: Permit) => void;
  readonly reject: (e: unknown) => void;
  readonly signal: AbortSignal | undefined;
  unsubscribe: (() => void) | undefined;
}

/** The machine arbiter's answer when its segment has no free entry (native machine_arbiter.cc kFull). */
const MACHINE_FULL = -2;

const { admitted: ADMITTED, reentrant: REENTRANT, grantsPending: GRANTS, removed: REMOVED } = ARBITER_FLAGS;

/** CPU sets as the binding takes them — (32-bit word index, mask) pairs — computed once per set. */
const encoded = new WeakMap<CpuSet, Uint32Array>();

function pairsOf(set: CpuSet): Uint32Array {
  let pairs = encoded.get(set);
  if (pairs === undefined) {
    const out: number[] = [];
    for (const id of set) {
      const word = Math.floor(id / 32);
      const bit = (1 << (id % 32)) >>> 0;
      if (out.length > 0 && out[out.length - 2] === word) out[out.length - 1] = (out[out.length - 1]! | bit) >>> 0;
      else out.push(word, bit);
    }
    pairs = new Uint32Array(out);
    encoded.set(set, pairs);
  }
  return pairs;
}

/**
 * The process-wide {@link Arbiter}: its state (held permits as CPU bitsets and the exclusive
 * flag, the FIFO queue of waiters, owner ids) lives in native memory of `@tenferro/os`, shared
 * by every worker_thread isolate of the process that loads the binding — so two backends in two
 * isolates on overlapping CPUs never run together (R27), and the provider-exclusive permit is
 * exclusive in the whole process (R28). The rule is exactly `ResourceArbiter`'s.
 *
 * Each object is one client of the state. A waiter admitted by a release in another isolate is
 * woken through a thread-safe function (no polling); a waiter admitted by this client's own
 * release, abort or acquire is resolved synchronously, as with `ResourceArbiter`. When the
 * isolate ends (worker `terminate()`, an uncaught error) the binding releases its permits and
 * drops its waiters, which admits the waiters they blocked.
 */
export class ProcessArbiter implements Arbiter {
  /** `'process'`: the state lives in the process, shared by every isolate (`'machine'` for a `MachineArbiter`). */
  readonly kind: ArbiterKind = 'process';
  readonly #os: OsBinding;
  readonly #client: ArbiterClient;
  readonly #waiting = new Map<number, Waiter>();
  #nextRequest = 1;
  #active = 0;

  /** @internal `open` opens the native client with the grant callback (the machine arbiter opens its own kind, #41). */
  protected constructor(os: OsBinding, open: (onGrants: (grants: number[]) => void) => ArbiterClient | null, unavailable: () => TenferroError) {
    this.#os = os;
    const client = open((grants) => this.#deliver(grants));
    if (client === null) throw unavailable();
    this.#client = client;
  }

  /**
   * A new client of the process-wide arbiter (or, `isolated`, of a private state). Throws
   * `ProcessArbiterUnavailable` when the `@tenferro/os` binding cannot load here, and
   * `ArbiterVersionConflict` when another copy of `@tenferro/os` with a different arbiter ABI
   * already owns the process's arbiter — never a second, independent process arbiter.
   *
   * @example
   * ```ts
   * import { ProcessArbiter } from '@tenferro/core';
   *
   * const arbiter = ProcessArbiter.open({ isolated: true }); // a private state: shared with nobody
   * console.log(arbiter.kind, arbiter.processStats()); // prints: process { active: 0, waiting: 0, clients: 1 }
   * ```
   */
  static open(options: ProcessArbiterOptions = {}): ProcessArbiter {
    const op = 'ProcessArbiter.open';
    if (typeof options !== 'object' || options === null) throw invalidArgument(op, 'options', 'an options object', options);
    for (const key of Object.keys(options)) {
      if (key !== 'isolated') throw invalidArgument(op, `options.${key}`, 'isolated', key);
    }
    if (options.isolated !== undefined && typeof options.isolated !== 'boolean') throw invalidArgument(op, 'options.isolated', 'a boolean', options.isolated);
    const os = loadOs();
    if (!os.available) {
      throw new TenferroError('ProcessArbiterUnavailable', `the process-wide arbiter needs the @tenferro/os binding, which is unavailable: ${os.reason}`, {
        op,
        detail: { reasons: os.reasons, possibleSolutions: os.possibleSolutions },
      });
    }
    const info = os.binding.arbiterInfo();
    if (info.refused) throw versionConflict(op, info.abi, info.otherAbi);
    return new ProcessArbiter(
      os.binding,
      (onGrants) => os.binding.arbiterOpen(onGrants, options.isolated === true),
      () => new TenferroError('ProcessArbiterUnavailable', 'the @tenferro/os binding could not open an arbiter client', { op }),
    );
  }

  /**
   * A permit for `request` once no held permit of another owner — in any isolate — conflicts with it and no earlier conflicting waiter is queued.
   *
   * @example
   * ```ts
   * import { CpuSet, ProcessArbiter } from '@tenferro/core';
   *
   * const arbiter = ProcessArbiter.open({ isolated: true });
   * const first = await arbiter.acquire({ cpus: CpuSet.of([0, 1]) });
   * const wanted = { cpus: CpuSet.parse('1-2') };
   * const second = arbiter.acquire(wanted); // overlaps CPU 1: queued
   * console.log(arbiter.stats().waiting); // prints: 1
   * first.release(); // admits it (a release in another isolate would wake it too)
   * const permit = await second;
   * console.log(permit.request === wanted); // prints: true
   * permit.release();
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
   * {@link acquire} without a promise when the request is admitted at once (the common case of
   * admission, where every promise is paid per operation): the permit itself, else a promise of
   * it. Throws what `acquire` rejects with up front.
   * @internal
   */
  admitOrWait(request: ResourceRequest, options: AcquireOptions = {}): Permit | Promise<Permit> {
    const op = 'ProcessArbiter.acquire';
    checkAcquire(request, options, op);
    const owner = options.owner ?? newExecutionOwner();
    const signal = options.signal;
    if (signal?.aborted) throw admissionAborted(signal, op);
    const id = this.#nextRequest++;
    const flags = this.#os.arbiterAcquire(this.#client, id, owner, 'providerExclusive' in request ? null : pairsOf(request.cpus));
    if (flags === MACHINE_FULL) {
      throw new TenferroError('MachineArbiterUnavailable', 'the machine arbiter has no free entry: 1024 permits and waiters are held or queued on it (#41)', { op, detail: { owner } });
    }
    if (flags < 0) throw new TenferroError('Internal', 'the native arbiter refused a validated request', { op, detail: { owner, request: id } });
    if ((flags & ADMITTED) !== 0) {
      this.#active++;
      const permit = new Permit(request, owner, (flags & REENTRANT) !== 0, () => this.#release(id));
      if ((flags & GRANTS) !== 0) this.#collect();
      return permit;
    }
    return new Promise<Permit>((resolve, reject) => {
      const waiter: Waiter = { request, owner, resolve, reject, signal, unsubscribe: undefined };
      if (signal !== undefined) waiter.unsubscribe = onAbort(signal, () => this.#abort(id));
      this.#waiting.set(id, waiter);
      // A waiter keeps this isolate alive: another isolate's release will wake it.
      if (this.#waiting.size === 1) this.#os.arbiterRef(this.#client, true);
      if ((flags & GRANTS) !== 0) this.#collect();
    });
  }

  /**
   * The permits held and waiters queued through this client (this isolate's, for `processArbiter()`).
   *
   * @example
   * ```ts
   * import { CpuSet, ProcessArbiter } from '@tenferro/core';
   *
   * const arbiter = ProcessArbiter.open({ isolated: true });
   * const permit = await arbiter.acquire({ cpus: CpuSet.of([0]) });
   * console.log(arbiter.stats()); // prints: { active: 1, waiting: 0 }
   * permit.release();
   * console.log(arbiter.stats()); // prints: { active: 0, waiting: 0 }
   * ```
   */
  stats(): ArbiterStats {
    return { active: this.#active, waiting: this.#waiting.size };
  }

  /**
   * The permits and waiters of every isolate, and the clients, of the state this client is on.
   *
   * @example
   * ```ts
   * import { ProcessArbiter } from '@tenferro/core';
   *
   * const arbiter = ProcessArbiter.open({ isolated: true });
   * using permit = await arbiter.acquire({ providerExclusive: true });
   * // The whole state: permits of every client (every isolate, for the process-wide state).
   * console.log(arbiter.processStats()); // prints: { active: 1, waiting: 0, clients: 1 }
   * console.log(permit.request); // prints: { providerExclusive: true }
   * ```
   */
  processStats(): ProcessArbiterStats {
    const s = this.#os.arbiterStats(this.#client);
    return s === null ? { active: 0, waiting: 0, clients: 0 } : { active: s.active, waiting: s.waiting, clients: s.clients };
  }

  #release(id: number): void {
    this.#active--;
    if ((this.#os.arbiterRelease(this.#client, id) & GRANTS) !== 0) this.#collect();
  }

  #abort(id: number): void {
    const waiter = this.#waiting.get(id);
    if (waiter === undefined) return;
    const flags = this.#os.arbiterCancel(this.#client, id);
    if ((flags & REMOVED) !== 0) {
      this.#waiting.delete(id);
      if (this.#waiting.size === 0) this.#os.arbiterRef(this.#client, false);
      waiter.reject(admissionAborted(waiter.signal!, 'ProcessArbiter.acquire'));
    }
    // Not removed: it was admitted before the abort, and is resolved with its permit here.
    if ((flags & GRANTS) !== 0) this.#collect();
  }

  #collect(): void {
    this.#deliver(this.#os.arbiterTakeGrants(this.#client));
  }

  /** Resolve admitted waiters (`request * 2 + reentrant`), in admission order. */
  #deliver(grants: readonly number[]): void {
    for (const grant of grants) {
      const id = Math.floor(grant / 2);
      const waiter = this.#waiting.get(id);
      if (waiter === undefined) continue;
      this.#waiting.delete(id);
      waiter.unsubscribe?.();
      this.#active++;
      waiter.resolve(new Permit(waiter.request, waiter.owner, grant % 2 === 1, () => this.#release(id)));
    }
    if (grants.length > 0 && this.#waiting.size === 0) this.#os.arbiterRef(this.#client, false);
  }
}

function versionConflict(op: string, abi: number, otherAbi: number): TenferroError {
  return new TenferroError(
    'ArbiterVersionConflict',
    `another copy of @tenferro/os in this process owns the process-wide arbiter with arbiter ABI ${otherAbi}, this copy speaks ABI ${abi}: two independent arbiters would let overlapping executions run together. Possible solutions: install one version of @tenferro/os (npm dedupe / an override), so every copy of @tenferro/core shares it`,
    { op, detail: { abi, otherAbi } },
  );
}
