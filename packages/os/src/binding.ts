/**
 * The raw exports of the native addon `tenferro_os.node` (native/src/affinity.cc, registered in native/src/addon.cc).
 *
 * No function throws: a failed system call is reported as an errno. `setThreadAffinity` is
 * meant for a validated, non-empty list of CPU ids below `maxCpus` (see
 * `src/thread-affinity.ts`), but checks it again itself: a malformed list answers EINVAL and a
 * CPU outside the process mask recorded at load answers `outsideAllowedSet`, before any system
 * call.
 */

/** The answer of a `sched_getaffinity` call: `errno` is 0 on success, then `cpus` is sorted ascending. */
export interface RawAffinity {
  readonly errno: number;
  readonly cpus: number[];
}

/** The functions the native addon exports (what `loadOs()` returns as `binding` when it is available). */
export interface OsBinding {
  /** `syscall(SYS_gettid)` of the calling thread. */
  gettid(): number;
  /** `sched_yield()`: let another runnable thread on this CPU run. */
  yieldThread(): void;
  /** `sched_getaffinity(0, ...)`: the calling thread's mask. */
  getThreadAffinity(): RawAffinity;
  /**
   * The process mask as recorded once per process when the addon first loaded:
   * `sched_getaffinity(getpid())`, the thread-group leader's (main thread's) mask at that time.
   * Narrowing any thread later does not change it.
   */
  getProcessAffinity(): RawAffinity;
  /**
   * `sched_setaffinity(0, ...)` for the calling thread only; returns 0, an errno, or
   * `outsideAllowedSet` when a CPU is not in the recorded process mask (nothing is changed).
   */
  setThreadAffinity(cpus: readonly number[]): number;
  /** Where a Uint8Array's memory is (the data pointer and length), or null for anything else. */
  typedArrayRange(view: Uint8Array): { readonly address: bigint; readonly byteLength: number } | null;
  /** `napi_adjust_external_memory`: V8's new total of external memory (0 for a malformed delta). */
  adjustExternalMemory(deltaBytes: number): number;
  /** The process-wide arbiter's ABI and how this copy of the addon joined it (native/src/arbiter.cc). */
  arbiterInfo(): ArbiterInfo;
  /**
   * A client of the process-wide arbiter state (`isolated`: of a fresh private state, for tests),
   * or null when this copy refuses (another copy's ABI differs). `onGrants` is called on this
   * isolate's thread with `request * 2 + reentrant` for each of its waiters another client
   * admitted. The client is closed — permits released, waiters dropped — when this isolate ends.
   */
  arbiterOpen(onGrants: (grants: number[]) => void, isolated: boolean): ArbiterClient | null;
  /**
   * Ask for a permit: `pairs` is a CPU set as (32-bit word index, non-zero mask) pairs with
   * increasing indices, or null for provider-exclusive. `request` (< 2^52) is the caller's id
   * for it, `owner` (< 2^53) the execution owner. Answers ARBITER_FLAGS bits, or -1 (invalid).
   */
  arbiterAcquire(client: ArbiterClient, request: number, owner: number, pairs: Uint32Array | null): number;
  /** Release a held permit; answers `ARBITER_FLAGS.grantsPending` or 0. */
  arbiterRelease(client: ArbiterClient, request: number): number;
  /** Remove a queued waiter; `ARBITER_FLAGS.removed` when it was still queued. */
  arbiterCancel(client: ArbiterClient, request: number): number;
  /** The client's admitted waiters not yet delivered (`request * 2 + reentrant`), in admission order. */
  arbiterTakeGrants(client: ArbiterClient): number[];
  /** Keep this isolate's event loop alive (true) while the client has waiters, or not. */
  arbiterRef(client: ArbiterClient, ref: boolean): void;
  /** Permits, waiters and clients of the process-wide state (or of a client's private state); null when refused. */
  arbiterStats(client: ArbiterClient | null): { readonly active: number; readonly waiting: number; readonly clients: number } | null;
  /** `count` (≤ 2^20) fresh process-wide execution owner ids, all ≥ `floor`: the first, or 0 (refused or exhausted). */
  arbiterReserveOwners(count: number, floor: number): number;
  /** `setThreadAffinity`'s answer for a CPU outside the recorded process mask (-1; errno values are positive). */
  readonly outsideAllowedSet: number;
  /** The largest mask size the addon handles: 2^20 CPUs (ids 0 .. maxCpus - 1). */
  readonly maxCpus: number;
}

declare const ARBITER_CLIENT: unique symbol;
/** A client of the native arbiter state (an opaque external). */
export type ArbiterClient = { readonly [ARBITER_CLIENT]: true };

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

/** The bits `arbiterAcquire`, `arbiterRelease` and `arbiterCancel` answer (native/src/arbiter.h). */
export const ARBITER_FLAGS = Object.freeze({ admitted: 1, reentrant: 2, grantsPending: 4, removed: 8, invalid: -1 });
