import { type MachineJoinAnswer, type OsBinding, loadOs } from '@tenferro/os';
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import { type ArbiterKind } from './arbiter.js';
import { ProcessArbiter } from './process-arbiter.js';

/** The environment variable that joins a process — and every child that inherits it — to a machine arbiter (#41). */
export const MACHINE_ARBITER_ENV = 'TENFERRO_MACHINE_ARBITER';

/** How {@link MachineArbiter.open} opens its client. */
export interface MachineArbiterOptions {
  /**
   * `true`: a private segment of the machine arbiter's layout, shared with nobody — the same code
   * and rule (tests, benchmarks). Default `false`: the arbiter this process joined.
   */
  readonly isolated?: boolean;
}

/** How {@link joinMachineArbiter} joins. */
export interface JoinMachineArbiterOptions {
  /** `true`: create the segment with mode 0660 (the owner's group may join too); default 0600 (the same user only). */
  readonly group?: boolean;
}

/** One joined process in {@link MachineArbiter.census}: the permits it holds and waits for. */
export interface MachineArbiterProcess {
  readonly pid: number;
  /** Each permit it holds: its CPUs (empty when provider-exclusive) and since when (ms since the epoch). */
  readonly holds: readonly { readonly cpus: readonly number[]; readonly exclusive: boolean; readonly since: number }[];
  /** Each permit it waits for, oldest first. */
  readonly waits: readonly { readonly cpus: readonly number[]; readonly exclusive: boolean; readonly since: number }[];
}

/** The machine arbiter's state as {@link MachineArbiter.census} reads it. */
export interface MachineArbiterCensus {
  /** The name joined (`/dev/shm/tenferro-<name>`). */
  readonly name: string;
  /** How many live processes joined it. */
  readonly joined: number;
  /** The processes that hold or wait for permits. */
  readonly processes: readonly MachineArbiterProcess[];
  /**
   * How many times this process found the segment's lock held by a process that had died (a kill
   * inside an acquire or release: `EOWNERDEAD`) and repaired the state before going on — the dead
   * process's permits and waiters removed, its waiters' successors admitted.
   */
  readonly lockRepairs: number;
}

const NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/**
 * The machine-wide {@link Arbiter} (#41): `ProcessArbiter`'s state and rule placed in a named
 * shared-memory segment, `/dev/shm/tenferro-<name>`, so that every isolate of every process that
 * joined the name shares one queue — two executions on overlapping CPUs never run together in
 * any of them (R27), and a provider-exclusive permit excludes every joined process's work (R28).
 * A process joins with `TENFERRO_MACHINE_ARBITER=<name>` in its environment (inherited by
 * `cluster` workers and PM2 instances) or {@link joinMachineArbiter} before its first backend;
 * `processArbiter()` is then this arbiter. A process killed while holding permits gives them up
 * (its waiters' processes check liveness every 10 ms while they wait); see the execution model's
 * "One arbiter for the machine".
 *
 * @example
 * ```ts
 * import { CpuSet, MachineArbiter } from '@tenferro/core';
 *
 * const arbiter = MachineArbiter.open({ isolated: true }); // a private segment: shared with nobody
 * const permit = await arbiter.acquire({ cpus: CpuSet.of([0]) });
 * console.log(arbiter.kind, arbiter.processStats().active); // prints: machine 1
 * permit.release();
 * ```
 */
export class MachineArbiter extends ProcessArbiter {
  /** `'machine'`: the state lives in a shared-memory segment of the machine. */
  override readonly kind: ArbiterKind = 'machine';
  /** The name joined, or `undefined` for an isolated (private) segment. */
  readonly name: string | undefined;
  readonly #os: OsBinding;

  private constructor(os: OsBinding, name: string | undefined) {
    super(
      os,
      (onGrants) => os.arbiterOpen(onGrants, name === undefined, true),
      () => new TenferroError('MachineArbiterUnavailable', `the machine arbiter${name === undefined ? '' : ` '${name}'`} has no free client slot (256) or could not be mapped`, { op: 'MachineArbiter.open' }),
    );
    this.name = name;
    this.#os = os;
  }

  /**
   * A new client of the machine arbiter this process joined (or, `isolated`, of a private segment).
   * Throws `MachineArbiterUnavailable` when the process joined none (or the binding cannot load).
   *
   * @example
   * ```ts
   * import { MachineArbiter } from '@tenferro/core';
   *
   * const arbiter = MachineArbiter.open({ isolated: true });
   * console.log(arbiter.name, arbiter.processStats()); // prints: undefined { active: 0, waiting: 0, clients: 1 }
   * ```
   */
  static override open(options: MachineArbiterOptions = {}): MachineArbiter {
    const op = 'MachineArbiter.open';
    if (typeof options !== 'object' || options === null) throw invalidArgument(op, 'options', 'an options object', options);
    for (const key of Object.keys(options)) {
      if (key !== 'isolated') throw invalidArgument(op, `options.${key}`, 'isolated', key);
    }
    if (options.isolated !== undefined && typeof options.isolated !== 'boolean') throw invalidArgument(op, 'options.isolated', 'a boolean', options.isolated);
    const os = machineBinding(op, undefined);
    if (options.isolated === true) return new MachineArbiter(os, undefined);
    const name = os.machineJoined!();
    if (name === null) throw new TenferroError('MachineArbiterUnavailable', `this process joined no machine arbiter (set ${MACHINE_ARBITER_ENV}=<name> or call joinMachineArbiter(name) before the first backend)`, { op });
    return new MachineArbiter(os, name);
  }

  /**
   * The joined processes that hold or wait for permits, after reaping processes that died (an
   * isolated arbiter has no census: `joined: 1`, no processes listed).
   *
   * @example
   * ```ts
   * import { MachineArbiter } from '@tenferro/core';
   *
   * const census = MachineArbiter.open({ isolated: true }).census();
   * console.log(census.processes.length); // prints: 0
   * ```
   */
  census(): MachineArbiterCensus {
    if (this.name === undefined) return { name: '', joined: 1, processes: [], lockRepairs: 0 };
    const raw = this.#os.machineCensus?.() ?? null;
    if (raw === null) return { name: this.name, joined: 0, processes: [], lockRepairs: 0 };
    const byPid = new Map<number, { pid: number; holds: MachineArbiterProcess['holds'][number][]; waits: MachineArbiterProcess['waits'][number][] }>();
    for (const e of raw.entries) {
      let p = byPid.get(e.pid);
      if (p === undefined) byPid.set(e.pid, (p = { pid: e.pid, holds: [], waits: [] }));
      (e.holds ? p.holds : p.waits).push({ cpus: [...e.cpus], exclusive: e.exclusive, since: e.since });
    }
    for (const p of byPid.values()) p.waits.sort((a, b) => a.since - b.since);
    return { name: this.name, joined: raw.pids.length, processes: [...byPid.values()].sort((a, b) => a.pid - b.pid), lockRepairs: raw.lockRepairs ?? 0 };
  }
}

/** The os binding, with the machine arbiter's functions, or `MachineArbiterUnavailable`. */
function machineBinding(op: string, name: string | undefined): OsBinding {
  const os = loadOs();
  const what = name === undefined ? 'the machine arbiter' : `the machine arbiter '${name}' (${MACHINE_ARBITER_ENV} or joinMachineArbiter)`;
  if (!os.available) {
    throw new TenferroError('MachineArbiterUnavailable', `${what} needs the @tenferro/os binding, which is unavailable here: ${os.reason}. Unset ${MACHINE_ARBITER_ENV} to run unjoined`, {
      op,
      detail: { reasons: os.reasons, possibleSolutions: os.possibleSolutions },
    });
  }
  if (process.platform !== 'linux' || typeof os.binding.machineJoin !== 'function' || typeof os.binding.machineJoined !== 'function') {
    throw new TenferroError('MachineArbiterUnavailable', `${what} needs Linux and an @tenferro/os binding built with it (#41); this one lacks it. Rebuild @tenferro/os, or unset ${MACHINE_ARBITER_ENV} to run unjoined`, { op });
  }
  return os.binding;
}

/** Join `name` natively (once per process; idempotent for the same name), or throw the typed error. */
function joinNative(os: OsBinding, name: string, group: boolean, op: string): void {
  const answer: MachineJoinAnswer = os.machineJoin!(name, group);
  if (answer.error === undefined) return;
  switch (answer.error) {
    case 'invalid-name':
      throw invalidArgument(op, 'name', 'a machine arbiter name: 1 to 64 of A-Z a-z 0-9 . _ -, not starting with "."', name);
    case 'joined-other':
    case 'process-arbiter-in-use':
      throw new TenferroError('InvalidArgument', `cannot join the machine arbiter '${name}': ${answer.message}. Join before the first backend, with one name per process`, { op, detail: { name } });
    case 'abi-mismatch':
      throw new TenferroError(
        'ArbiterVersionConflict',
        `the machine arbiter '${name}' (/dev/shm/tenferro-${name}) was created by another tenferro version with machine-arbiter ABI ${answer.otherAbi || 'unknown'}; this copy speaks ABI ${answer.abi}: sharing it would let overlapping executions run together. Possible solutions: install one version of @tenferro/os in every joined process, use another name, or unset ${MACHINE_ARBITER_ENV} for this child`,
        { op, detail: { abi: answer.abi, otherAbi: answer.otherAbi, name } },
      );
    default:
      throw new TenferroError('MachineArbiterUnavailable', `cannot join the machine arbiter '${name}': ${answer.message}`, { op, detail: { name, reason: answer.error } });
  }
}

const GLOBAL_KEY = Symbol.for('tenferro.core.v0.arbiter');

function checkName(name: unknown, op: string): asserts name is string {
  if (typeof name !== 'string' || !NAME.test(name)) throw invalidArgument(op, 'name', 'a machine arbiter name: 1 to 64 of A-Z a-z 0-9 . _ -, not starting with "."', name);
}

/**
 * The machine arbiter name this isolate must use, if any: `TENFERRO_MACHINE_ARBITER` (non-empty),
 * else the one another isolate of this process joined. `undefined`: run unjoined.
 * @internal
 */
export function machineArbiterNameToJoin(): string | undefined {
  const fromEnv = typeof process === 'object' ? process.env[MACHINE_ARBITER_ENV] : undefined;
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const os = loadOs();
  if (!os.available || typeof os.binding.machineJoined !== 'function') return undefined;
  return os.binding.machineJoined() ?? undefined;
}

/**
 * Open this isolate's client of the machine arbiter `name`, joining the process to it first.
 * @internal
 */
export function openJoined(name: string, group: boolean, op: string): MachineArbiter {
  checkName(name, op);
  const os = machineBinding(op, name);
  joinNative(os, name, group, op);
  return MachineArbiter.open();
}

/**
 * Join this process to the machine-wide arbiter `name` (#41): from now on every backend of every
 * isolate of this process takes its permits from `/dev/shm/tenferro-<name>`, shared with every
 * process that joined the same name. Call it before the first backend; after a backend exists,
 * or a second time with another name, it throws `InvalidArgument` (the same name again returns
 * the same arbiter). Throws `MachineArbiterUnavailable` without the os binding, on a platform
 * without the needed primitives, or from another PID namespace than the segment's creator, and
 * `ArbiterVersionConflict` when another tenferro version created the segment. Setting
 * `TENFERRO_MACHINE_ARBITER=<name>` in the environment does the same at the first backend.
 *
 * @example
 * ```ts
 * import { CpuBackend, joinMachineArbiter } from '@tenferro/core';
 *
 * const arbiter = joinMachineArbiter('my-service'); // before the first backend
 * const backend = await CpuBackend.create({ threads: 2 });
 * console.log(arbiter.kind, backend.executionInfo().machineArbiter); // prints: machine my-service
 * ```
 */
export function joinMachineArbiter(name: string, options: JoinMachineArbiterOptions = {}): MachineArbiter {
  const op = 'joinMachineArbiter';
  checkName(name, op);
  if (typeof options !== 'object' || options === null) throw invalidArgument(op, 'options', 'an options object', options);
  for (const key of Object.keys(options)) {
    if (key !== 'group') throw invalidArgument(op, `options.${key}`, 'group', key);
  }
  if (options.group !== undefined && typeof options.group !== 'boolean') throw invalidArgument(op, 'options.group', 'a boolean', options.group);
  const g = globalThis as Record<symbol, unknown>;
  const existing = g[GLOBAL_KEY] as { kind?: unknown; name?: unknown } | undefined;
  if (existing !== undefined) {
    if (existing instanceof MachineArbiter && existing.name === name) return existing;
    const what = existing instanceof MachineArbiter ? `it joined the machine arbiter '${String(existing.name)}'` : `its arbiter is the ${String(existing.kind)} arbiter (a backend or processArbiter() came first)`;
    throw new TenferroError('InvalidArgument', `joinMachineArbiter('${name}') comes too late in this isolate: ${what}. Join before the first backend, with one name per process`, { op, detail: { name } });
  }
  const fromEnv = typeof process === 'object' ? process.env[MACHINE_ARBITER_ENV] : undefined;
  if (fromEnv !== undefined && fromEnv !== '' && fromEnv !== name) {
    throw new TenferroError('InvalidArgument', `joinMachineArbiter('${name}') contradicts ${MACHINE_ARBITER_ENV}=${fromEnv}: one machine arbiter per process`, { op, detail: { name, env: fromEnv } });
  }
  const arbiter = openJoined(name, options.group === true, op);
  Object.defineProperty(g, GLOBAL_KEY, { value: arbiter, enumerable: false, configurable: false, writable: false });
  return arbiter;
}

/**
 * The machine arbiter this process joined — the same object as `processArbiter()` then — for an
 * application's own native work (machine-wide permits). Throws `MachineArbiterUnavailable` when
 * the process joined none.
 *
 * @example
 * ```ts
 * import { CpuSet, joinMachineArbiter, machineArbiter } from '@tenferro/core';
 *
 * joinMachineArbiter('my-service');
 * using permit = await machineArbiter().acquire({ cpus: CpuSet.of([0]) }); // no joined process runs on CPU 0 meanwhile
 * console.log(permit.released); // prints: false
 * ```
 */
export function machineArbiter(): MachineArbiter {
  const g = globalThis as Record<symbol, unknown>;
  let arbiter = g[GLOBAL_KEY];
  if (arbiter === undefined) {
    const name = machineArbiterNameToJoin();
    if (name !== undefined) {
      arbiter = openJoined(name, false, 'machineArbiter');
      Object.defineProperty(g, GLOBAL_KEY, { value: arbiter, enumerable: false, configurable: false, writable: false });
    }
  }
  if (arbiter instanceof MachineArbiter) return arbiter;
  throw new TenferroError('MachineArbiterUnavailable', `this process joined no machine arbiter (set ${MACHINE_ARBITER_ENV}=<name> or call joinMachineArbiter(name) before the first backend)`, { op: 'machineArbiter' });
}
