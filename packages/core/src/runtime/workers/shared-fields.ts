/**
 * Named indices into the shared `Int32Array` control blocks. Both sides of the worker protocol
 * import these; nothing else is shared between the main isolate and workers.
 */

/**
 * Per-worker mailbox (one `Int32Array` over a `SharedArrayBuffer`). What the main isolate writes
 * (the task) and what the worker writes (its answer) lie at least 128 bytes apart, on cache lines
 * of their own whatever the buffer's alignment (and outside each other's adjacent-line pair): each
 * side's writes then invalidate only the line the other reads once per task, not the one it spins
 * or polls on. With the two halves on one line, every store of one side while the other spun on
 * the line moved it between the CPUs (#38 item 7).
 */
export const Mailbox = {
  // ---- written by the main isolate
  /**
   * The worker's doorbell: the main isolate changes it (and notifies) when it posts a task
   * (`TASK`) and when it writes ids into an idle worker's `ForgetRing`. Workers spin and wait on it.
   */
  REQUEST: 0,
  /** Flags of the posted task (`TaskFlag`). */
  TASK_FLAGS: 1,
  /** Kernel id of the posted task (see `kernel-ref.ts`); 0 = shutdown. */
  KERNEL_ID: 2,
  /** Packed tasks: number of words in the argument area. */
  WORDS: 3,
  /** Packed tasks: number of buffer ids in the argument area. */
  BUFFERS: 4,
  /**
   * The CPU the main thread last ran on while it posted or awaited a task, and the CPU the worker
   * last ran on (`sched_getcpu()`; -1 = unknown): spin-waits yield to the other side only when they
   * share a CPU (see `spin-yield.ts`).
   */
  MAIN_CPU: 5,
  /** Sequence number of the last task posted (published by the `REQUEST` store that follows it). */
  TASK: 6,
  /**
   * The posted task's fan-out join slot + 1 (0: none; see `fan-out-join.ts`): once its answer is
   * written, the worker takes the task out of that slot's count and notifies the slot at zero.
   */
  JOIN: 7,
  // ---- written by the worker, 256 bytes on (at least 128 from every field above)
  /** Sequence number of the last task the worker finished (or `DEAD`, written by the main isolate). The main isolate waits on it. */
  RESPONSE: 64,
  /** Outcome flags written by the worker (`ResultFlag`). */
  RESULT_FLAGS: 65,
  /** See `MAIN_CPU`. */
  WORKER_CPU: 66,
  /** The usual run of the worker's tasks, from taking one to answering it (µs, a moving average over ~8; advisory). */
  USUAL_RUN_US: 67,
  /**
   * A timed task (`TaskFlag.TIMED`): the worker's `process.hrtime.bigint()` when it began the task
   * and when it answered, as two float64 words from this (even) index on — `Float64Array` index
   * `TIMES / 2` and `TIMES / 2 + 1` over the mailbox's buffer.
   */
  TIMES: 68,
  LENGTH: 72,
} as const;

export const TaskFlag = {
  /** A structured-clone message with the payload (and the kernel's module the first time) waits on the port. */
  HAS_MESSAGE: 1,
  /** The payload is packed kernel arguments in the worker's argument area (`ArgsArea`). */
  PACKED: 2,
  /** The main isolate publishes the task on `tenferro:task`: the worker writes its times (`Mailbox.TIMES`). */
  TIMED: 4,
  /**
   * The kernel may keep more than one thread busy (`KernelTask.threads`), or its provider starts
   * threads on first use (`KernelTask.spawnsThreadsOnFirstUse`, #36): its worker's mask is never
   * narrowed (see `lane-spread.ts`).
   */
  WIDE: 8,
} as const;

/**
 * Per-worker argument area of packed tasks: `Float64Array` words from byte 0, then the `Int32Array`
 * ids of the task's buffers in the worker's buffer table.
 */
export const ArgsArea = {
  MAX_WORDS: 256,
  MAX_BUFFERS: 8,
  IDS_BYTE_OFFSET: 256 * 8,
  BYTES: 256 * 8 + 8 * 4,
} as const;

/**
 * Per-worker ring of buffer ids the worker is to drop from its buffer table (`Int32Array` over a
 * `SharedArrayBuffer`; see `buffer-table.ts`), written by the main isolate only while the worker
 * has no task (so no posted task can name an id in it), drained by the worker before each task's
 * table changes and whenever its doorbell rings while idle (#35). Also what the worker publishes
 * about the storage it let go of.
 */
export const ForgetRing = {
  /** Ids written so far (wrapping int32), by the main isolate. */
  HEAD: 0,
  /** Ids drained so far, by the worker. */
  TAIL: 1,
  /** Collections of its heap the worker forced to release storage (see worker-entry.ts `collect`). */
  COLLECTIONS: 2,
  /**
   * `Float64Array` index (byte offset 16): bytes of table entries the worker dropped and has
   * released since it started (a collection ran after it dropped them). Written by the worker.
   */
  RELEASED_F64: 2,
  /** First id slot. */
  SLOTS: 8,
  /** Id slots (a power of two). */
  CAPACITY: 1024,
  BYTES: (8 + 1024) * 4,
} as const;

export const ResultFlag = {
  /** A result message waits on the port. */
  HAS_MESSAGE: 1,
  /** The kernel threw; the message carries the error. */
  ERROR: 2,
} as const;

/** RESPONSE value written by the main isolate when a worker died, to wake its waiter. */
export const DEAD = -1;

/**
 * Per-engine execution-scope state registered with every worker once (R23, R91). `PARK`, which
 * spinning workers read, lies 256 bytes past the fields the main isolate writes at every
 * execution's start and end: on one cache line, each of those writes first took the line back
 * from a spinning worker (0.2 µs of an empty execution's 2.5, #38 item 7).
 */
export const EngineState = {
  /** Owner id of the execution active on this engine, 0 when idle. */
  ACTIVE_OWNER: 0,
  /** Nesting depth of that owner. */
  DEPTH: 1,
  /**
   * Bumped by the main isolate when an execution on this (idle) engine must wait for CPUs another
   * execution holds — another backend, isolate or joined process (#41): its workers, spinning for
   * their next task, go to sleep at once instead of taking CPU time from the holder's lanes for
   * the rest of their spin. Only in the records of tenferro's own pools (an external executor's
   * record has `ACTIVE_OWNER` and `DEPTH` only).
   */
  PARK: 64,
  LENGTH: 65,
} as const;

/** Key of the worker-global record that marks a thread as an engine worker. */
export const WORKER_SCOPE_KEY = Symbol.for('tenferro.core.v0.workerScope');
