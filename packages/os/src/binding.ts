/**
 * The raw exports of the native addon `tenferro_os.node` (native/src/affinity.cc, registered in native/src/addon.cc).
 *
 * No function throws: a failed system call is reported as an errno. `setThreadAffinity`
 * trusts its input; call it only with a validated, non-empty list of CPU ids below
 * `maxCpus` (see `src/thread-affinity.ts`).
 */

/** The answer of a `sched_getaffinity` call: `errno` is 0 on success, then `cpus` is sorted ascending. */
export interface RawAffinity {
  readonly errno: number;
  readonly cpus: number[];
}

export interface OsBinding {
  /** `syscall(SYS_gettid)` of the calling thread. */
  gettid(): number;
  /** `sched_yield()`: let another runnable thread on this CPU run. */
  yieldThread(): void;
  /** `sched_getaffinity(0, ...)`: the calling thread's mask. */
  getThreadAffinity(): RawAffinity;
  /** `sched_getaffinity(getpid(), ...)`: the main thread's mask, which is the process mask. */
  getProcessAffinity(): RawAffinity;
  /** `sched_setaffinity(0, ...)` for the calling thread only; returns 0 or errno. */
  setThreadAffinity(cpus: readonly number[]): number;
  /** The largest mask size the addon handles: 2^20 CPUs (ids 0 .. maxCpus - 1). */
  readonly maxCpus: number;
}
