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
  /** `setThreadAffinity`'s answer for a CPU outside the recorded process mask (-1; errno values are positive). */
  readonly outsideAllowedSet: number;
  /** The largest mask size the addon handles: 2^20 CPUs (ids 0 .. maxCpus - 1). */
  readonly maxCpus: number;
}
