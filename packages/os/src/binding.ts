/**
 * The raw exports of the native addon `tenferro_os.node` (native/src/affinity.cc, registered in native/src/addon.cc).
 *
 * No function throws: a failed system call is reported as an errno. `setThreadAffinity` is
 * meant for a validated, non-empty list of CPU ids below `maxCpus` (see
 * `src/thread-affinity.ts`), but checks it again itself: a malformed list answers EINVAL and a
 * CPU outside the process mask recorded at load answers `outsideAllowedSet`, before any system
 * call.
 */
import { ABI } from '../native/src/abi.mjs';

export { ABI };

/** The answer of a `sched_getaffinity` call: `errno` is 0 on success, then `cpus` is sorted ascending. */
export interface RawAffinity {
  readonly errno: number;
  readonly cpus: number[];
}

/** The functions the native addon exports (what `loadOs()` returns as `binding` when it is available). */
export interface OsBinding {
  /**
   * `syscall(SYS_gettid)` of the calling thread.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * console.log(os.binding.gettid() === process.pid); // prints: true
   * ```
   */
  gettid(): number;
  /**
   * `sched_yield()`: let another runnable thread on this CPU run.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * console.log(os.binding.yieldThread()); // prints: undefined
   * ```
   */
  yieldThread(): void;
  /**
   * `sched_getcpu()`: the CPU the calling thread runs on now (no system call), or -1 when unknown.
   * Optional: a binary built before it existed lacks it (use {@link currentCpu}, which answers -1).
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * console.log(typeof os.binding.currentCpu?.()); // prints: number
   * ```
   */
  currentCpu?(): number;
  /**
   * `sched_getaffinity(0, ...)`: the calling thread's mask.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const raw = os.binding.getThreadAffinity();
   * console.log(raw.errno, raw.cpus.length > 0); // prints: 0 true
   * console.log(raw.cpus); // e.g. [ 0, 1, 2, 3 ]
   * ```
   */
  getThreadAffinity(): RawAffinity;
  /**
   * The process mask as recorded once per process when the addon first loaded:
   * `sched_getaffinity(getpid())`, the thread-group leader's (main thread's) mask at that time.
   * Narrowing any thread later does not change it.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const raw = os.binding.getProcessAffinity();
   * console.log(raw.errno, raw.cpus.length > 0); // prints: 0 true
   * console.log(raw); // e.g. { errno: 0, cpus: [ 0, 1, 2, 3 ] }
   * ```
   */
  getProcessAffinity(): RawAffinity;
  /**
   * `sched_setaffinity(0, ...)` for the calling thread only; returns 0, an errno, or
   * `outsideAllowedSet` when a CPU is not in the recorded process mask (nothing is changed).
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const allowed = os.binding.getProcessAffinity().cpus;
   * console.log(os.binding.setThreadAffinity(allowed)); // prints: 0
   * console.log(os.binding.setThreadAffinity([os.binding.maxCpus - 1]) === os.binding.outsideAllowedSet); // prints: true
   * ```
   */
  setThreadAffinity(cpus: readonly number[]): number;
  /**
   * Where a Uint8Array's memory is (the data pointer and length), or null for anything else.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const range = os.binding.typedArrayRange(new Uint8Array(new SharedArrayBuffer(16)));
   * console.log(range?.byteLength, typeof range?.address); // prints: 16 bigint
   * ```
   */
  typedArrayRange(view: Uint8Array): { readonly address: bigint; readonly byteLength: number } | null;
  /**
   * `napi_adjust_external_memory`: V8's new total of external memory (0 for a malformed delta).
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * console.log(os.binding.adjustExternalMemory(4096) >= 4096); // prints: true
   * os.binding.adjustExternalMemory(-4096);
   * ```
   */
  adjustExternalMemory(deltaBytes: number): number;
  /**
   * `madvise(MADV_HUGEPAGE)` on the 2 MiB-aligned part of a Uint8Array's memory (#38): the bytes
   * advised (0 when the view spans no whole 2 MiB page), or -errno (-EINVAL for anything but a
   * Uint8Array). Optional: a binary built before it existed lacks it (use {@link adviseHugePages}).
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const view = new Uint8Array(new SharedArrayBuffer(6 << 20)); // spans at least one whole 2 MiB page
   * console.log((os.binding.adviseHugePages?.(view) ?? 0) >= 0); // e.g. true
   * ```
   */
  adviseHugePages?(view: Uint8Array): number;
  /**
   * Open a channel of death tokens on this thread (native/src/death_token.cc): `handler` is called
   * at an event-loop turn with the id of each token of the channel a collection (a scavenge
   * included) found dead. Answers the channel (0, 1, …; at most 1,024 per thread), or -1 for
   * anything but a function. Optional: a binary built before it existed lacks it (use
   * {@link deathTokens}).
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * console.log((os.binding.onDeathTokens?.(() => {}) ?? 0) >= 0); // prints: true
   * ```
   */
  onDeathTokens?(handler: (id: number) => void): number;
  /**
   * A one-byte ArrayBuffer over a static byte whose collection calls the handler of `channel` with
   * `id` (an integer in [0, 2^32)); undefined for a channel not opened on this thread or a malformed
   * id. Optional, as `onDeathTokens`.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const channel = os.binding.onDeathTokens?.(() => {}) ?? -1;
   * console.log(os.binding.deathToken?.(channel, 1)?.byteLength ?? 1, os.binding.deathToken?.(channel, -1)); // prints: 1 undefined
   * ```
   */
  deathToken?(channel: number, id: number): ArrayBuffer | undefined;
  /**
   * The process-wide arbiter's ABI and how this copy of the addon joined it (native/src/arbiter.cc).
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const info = os.binding.arbiterInfo();
   * console.log(info.refused, info.abi >= 1); // prints: false true
   * ```
   */
  arbiterInfo(): ArbiterInfo;
  /**
   * A client of the process-wide arbiter state (`isolated`: of a fresh private state, for tests),
   * or null when this copy refuses (another copy's ABI differs). `onGrants` is called on this
   * isolate's thread with `request * 2 + reentrant` for each of its waiters another client
   * admitted. The client is closed — permits released, waiters dropped — when this isolate ends.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * // `true`: a private state of its own (a test's), not the process-wide one.
   * const client = os.binding.arbiterOpen((grants) => console.log('admitted elsewhere', grants), true);
   * console.log(client !== null, os.binding.arbiterStats(client)); // prints: true { active: 0, waiting: 0, clients: 1 }
   * ```
   */
  arbiterOpen(onGrants: (grants: number[]) => void, isolated: boolean, machine?: boolean): ArbiterClient | null;
  /**
   * Ask for a permit: `pairs` is a CPU set as (32-bit word index, non-zero mask) pairs with
   * increasing indices, or null for provider-exclusive. `request` (< 2^52) is the caller's id
   * for it, `owner` (< 2^53) the execution owner. Answers ARBITER_FLAGS bits, or -1 (invalid).
   *
   * @example
   * ```ts
   * import { ARBITER_FLAGS, loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const b = os.binding;
   * const client = b.arbiterOpen(() => {}, true)!;
   * const cpus01 = new Uint32Array([0, 0b11]); // word 0, CPUs 0 and 1
   * console.log(b.arbiterAcquire(client, 1, 7, cpus01) === ARBITER_FLAGS.admitted); // prints: true
   * console.log(b.arbiterAcquire(client, 2, 8, null)); // prints: 0
   * console.log(b.arbiterAcquire(client, 3, 7, cpus01) === (ARBITER_FLAGS.admitted | ARBITER_FLAGS.reentrant)); // prints: true
   * ```
   */
  arbiterAcquire(client: ArbiterClient, request: number, owner: number, pairs: Uint32Array | null): number;
  /**
   * Release a held permit; answers `ARBITER_FLAGS.grantsPending` or 0.
   *
   * @example
   * ```ts
   * import { ARBITER_FLAGS, loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const b = os.binding;
   * const client = b.arbiterOpen(() => {}, true)!;
   * b.arbiterAcquire(client, 1, 7, new Uint32Array([0, 1])); // admitted
   * b.arbiterAcquire(client, 2, 8, new Uint32Array([0, 1])); // waits: CPU 0 is held by owner 7
   * console.log(b.arbiterRelease(client, 1) === ARBITER_FLAGS.grantsPending); // prints: true
   * console.log(b.arbiterTakeGrants(client)); // prints: [ 4 ]
   * ```
   */
  arbiterRelease(client: ArbiterClient, request: number): number;
  /**
   * Remove a queued waiter; `ARBITER_FLAGS.removed` when it was still queued.
   *
   * @example
   * ```ts
   * import { ARBITER_FLAGS, loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const b = os.binding;
   * const client = b.arbiterOpen(() => {}, true)!;
   * b.arbiterAcquire(client, 1, 7, null); // provider-exclusive, admitted
   * b.arbiterAcquire(client, 2, 8, null); // waits
   * console.log(b.arbiterCancel(client, 2) === ARBITER_FLAGS.removed); // prints: true
   * console.log(b.arbiterStats(client)); // prints: { active: 1, waiting: 0, clients: 1 }
   * ```
   */
  arbiterCancel(client: ArbiterClient, request: number): number;
  /**
   * The client's admitted waiters not yet delivered (`request * 2 + reentrant`), in admission order.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const b = os.binding;
   * const client = b.arbiterOpen(() => {}, true)!;
   * b.arbiterAcquire(client, 1, 7, null);
   * b.arbiterAcquire(client, 2, 8, null); // waits for request 1
   * b.arbiterRelease(client, 1);
   * console.log(b.arbiterTakeGrants(client)); // prints: [ 4 ]
   * console.log(b.arbiterTakeGrants(client)); // prints: []
   * ```
   */
  arbiterTakeGrants(client: ArbiterClient): number[];
  /**
   * Keep this isolate's event loop alive (true) while the client has waiters, or not.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const client = os.binding.arbiterOpen(() => {}, true)!;
   * os.binding.arbiterRef(client, true); // a waiter is queued: another isolate's release will wake it
   * os.binding.arbiterRef(client, false); // no waiter left: the process may exit
   * console.log(os.binding.arbiterStats(client)?.waiting); // prints: 0
   * ```
   */
  arbiterRef(client: ArbiterClient, ref: boolean): void;
  /**
   * Permits, waiters and clients of the process-wide state (or of a client's private state); null when refused.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const client = os.binding.arbiterOpen(() => {}, true)!;
   * os.binding.arbiterAcquire(client, 1, 7, new Uint32Array([0, 1]));
   * console.log(os.binding.arbiterStats(client)); // prints: { active: 1, waiting: 0, clients: 1 }
   * console.log(os.binding.arbiterStats(null)); // e.g. { active: 0, waiting: 0, clients: 0 }
   * ```
   */
  arbiterStats(client: ArbiterClient | null): { readonly active: number; readonly waiting: number; readonly clients: number } | null;
  /**
   * `count` (≤ 2^20) fresh process-wide execution owner ids, all ≥ `floor`: the first, or 0 (refused or exhausted).
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * const first = os.binding.arbiterReserveOwners(16, 1_000_000); // owners first .. first + 15 are this caller's
   * console.log(first >= 1_000_000); // prints: true
   * console.log(os.binding.arbiterReserveOwners(16, 1) >= first + 16); // prints: true
   * ```
   */
  arbiterReserveOwners(count: number, floor: number): number;
  /**
   * Join the machine-wide arbiter `name` (#41): its state is the shared-memory segment
   * `/dev/shm/tenferro-<name>`, created with mode 0600 (0660 with `group`). Once per process;
   * clients then open with `arbiterOpen(onGrants, false, true)` and every other `arbiter*`
   * function drives them. Answers the segment's path, or why not (`error`: `invalid-name`,
   * `joined-other`, `process-arbiter-in-use`, `open-failed`, `abi-mismatch`, `pid-namespace`,
   * `full`). Missing from addons built before #41.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * console.log(os.binding.machineJoin?.('no/slash', false).error); // prints: invalid-name
   * ```
   */
  machineJoin?(name: string, group: boolean): MachineJoinAnswer;
  /**
   * The machine-wide arbiter this process joined, or null.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * console.log(os.binding.machineJoined?.()); // e.g. null
   * ```
   */
  machineJoined?(): string | null;
  /**
   * The joined machine arbiter's processes and every permit held or waited for, after reaping
   * processes that died; null when this process joined none.
   *
   * @example
   * ```ts
   * import { loadOs } from '@tenferro/os';
   *
   * const os = loadOs();
   * if (!os.available) throw new Error(os.reason);
   * console.log(os.binding.machineCensus?.() ?? null); // e.g. null
   * ```
   */
  machineCensus?(): MachineCensus | null;
  /** `setThreadAffinity`'s answer for a CPU outside the recorded process mask (-1; errno values are positive). */
  readonly outsideAllowedSet: number;
  /** The largest mask size the addon handles: 2^20 CPUs (ids 0 .. maxCpus - 1). */
  readonly maxCpus: number;
  /** The hash of native/src/abi.mjs the addon was built from (defineAddon compares it with the table's, #40). */
  readonly abiHash: string;
}

declare const ARBITER_CLIENT: unique symbol;
/** A client of the native arbiter state (an opaque external). */
export type ArbiterClient = { readonly [ARBITER_CLIENT]: true };

/** `machineJoin`'s answer: the segment's path, or an error code and message. */
export type MachineJoinAnswer =
  | { readonly path: string; readonly error?: undefined }
  | {
      readonly error: 'invalid-name' | 'joined-other' | 'process-arbiter-in-use' | 'open-failed' | 'abi-mismatch' | 'pid-namespace' | 'full';
      readonly message: string;
      readonly abi: number;
      readonly otherAbi: number;
    };

/** The machine arbiter's census: the joined processes, and each permit held (`holds`) or waited for. */
export interface MachineCensus {
  readonly pids: readonly number[];
  readonly entries: readonly {
    readonly pid: number;
    readonly holds: boolean;
    readonly exclusive: boolean;
    /** Milliseconds since the epoch when it was queued, or admitted. */
    readonly since: number;
    readonly cpus: readonly number[];
  }[];
  /** How many times this process repaired the segment after a process died holding its lock (EOWNERDEAD). */
  readonly lockRepairs: number;
}

/** How this copy of the addon joined the process-wide arbiter. */
export interface ArbiterInfo {
  /** This copy's arbiter ABI. */
  readonly abi: number;
  /** True when another copy of the addon published the state first and this one uses it. */
  readonly shared: boolean;
  /** True when another copy with a different ABI owns the state: this copy starts no arbiter. */
  readonly refused: boolean;
  /** That other copy's ABI when `refused` (else 0 or the shared ABI). */
  readonly otherAbi: number;
}

/** The bits `arbiterAcquire`, `arbiterRelease` and `arbiterCancel` answer (the ABI table native/src/abi.mjs, #40). */
export const ARBITER_FLAGS = Object.freeze({
  admitted: ABI.constants.Admitted,
  reentrant: ABI.constants.Reentrant,
  grantsPending: ABI.constants.GrantsPending,
  removed: ABI.constants.Removed,
  invalid: ABI.constants.Invalid,
});
