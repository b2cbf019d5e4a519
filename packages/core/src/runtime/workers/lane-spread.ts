/**
 * Keeping the lanes of a fan-out on separate CPUs. Every worker of a pool is confined to the
 * whole domain set (R21), and the scheduler is free to run two of them on one CPU. On a 2-vCPU
 * KVM guest (Linux 6.18, EEVDF) it did so for stretches of many calls: the main thread, polling
 * among the lanes, held one CPU while both lanes shared the other, so one lane began only when the
 * other's kernel gave the CPU up (200–400 µs late) and a 2-thread n = 256 f32 GEMM took 215–265 µs
 * instead of 115–135 µs in a quarter of 120-call blocks; with each lane pinned to a CPU of its
 * own, in none.
 *
 * So the pool's lanes share a table: per lane, whether a task is posted to it or running (set by
 * the main thread as it posts, cleared by the worker as it answers) and the CPU it was last seen
 * on (published while it spins for a task, -1 while it sleeps, then the CPU its task runs on). A
 * single-threaded task that begins on a CPU where another lane's task is posted or running
 * narrows its own worker's mask to a CPU of the domain set that no such lane holds — the kernel
 * moves the thread there at once — and widens it back to the whole set when the task ends (the
 * thread stays where it is). Only a stacked task pays the two `sched_setaffinity` calls; a thread
 * its kernel starts meanwhile would inherit the narrowed mask, which is why a task that may keep
 * more than one thread busy (`KernelTask.threads`), that loads its kernel's module on this
 * worker (a native module may start threads as it loads), or whose provider declared
 * `spawnsThreadsOnFirstUse` (its native code may start threads on any later call: #36), never
 * narrows.
 */

/**
 * The thread count an engine worker is handed a task with (`EngineWorker.run`): a worker never
 * narrows a task posted as wider than one thread (`TaskFlag.WIDE`), so a kernel task of a provider
 * that starts threads on first use (`KernelTask.spawnsThreadsOnFirstUse`, #36) is posted as two:
 * the threads it starts inherit the whole domain set, not the one CPU a narrowed lane would give
 * them for the life of the process. (Its main thread also polls for it as for a wide task,
 * yielding its CPU between checks.)
 */
export function postedThreads(task: { readonly threads?: number; readonly spawnsThreadsOnFirstUse?: boolean }): number | undefined {
  return task.spawnsThreadsOnFirstUse === true ? Math.max(2, task.threads ?? 1) : task.threads;
}

/**
 * Words per lane in the table: the CPU it was last seen on (-1: asleep or unknown), whether a task
 * is posted to it or running, whether its mask is narrowed — then padding: two lanes' words lie at
 * least 128 bytes apart, so a lane's worker writing its own never takes the cache line of another
 * lane's (or the main thread's posting) away from it (see `Mailbox`).
 */
export const LaneTable = { CPU: 0, BUSY: 1, NARROWED: 2, WORDS: 35 } as const;

/** A zeroed table for `workers` lanes (every lane idle, on no known CPU). */
export function laneTableBuffer(workers: number): SharedArrayBuffer {
  const table = new Int32Array(new SharedArrayBuffer(workers * LaneTable.WORDS * Int32Array.BYTES_PER_ELEMENT));
  for (let i = 0; i < workers; i++) table[i * LaneTable.WORDS + LaneTable.CPU] = -1;
  return table.buffer as SharedArrayBuffer;
}

/** Main-thread side, just before a task is posted to lane `index`: its CPU counts as held from now until it answers. */
export function lanePosted(table: Int32Array, index: number): void {
  Atomics.store(table, index * LaneTable.WORDS + LaneTable.BUSY, 1);
}

/** Whether lane `index`'s worker has narrowed its mask for the task it runs (main-thread side, for placement checks). */
export function laneNarrowed(table: Int32Array, index: number): boolean {
  return Atomics.load(table, index * LaneTable.WORDS + LaneTable.NARROWED) === 1;
}

/** The worker side: one per worker, over the pool's table. */
export class LaneSpreader {
  readonly #table: Int32Array;
  readonly #at: number;
  readonly #lanes: number;
  readonly #cpus: readonly number[];
  readonly #setAffinity: (cpus: number[]) => void;

  constructor(table: SharedArrayBuffer, index: number, cpus: readonly number[], setAffinity: (cpus: number[]) => void) {
    this.#table = new Int32Array(table);
    this.#at = index * LaneTable.WORDS;
    this.#lanes = this.#table.length / LaneTable.WORDS;
    this.#cpus = cpus;
    this.#setAffinity = setAffinity;
    // A replacement worker starts afresh where its dead predecessor may have left its lane busy or narrowed.
    Atomics.store(this.#table, this.#at + LaneTable.BUSY, 0);
    Atomics.store(this.#table, this.#at + LaneTable.NARROWED, 0);
    Atomics.store(this.#table, this.#at + LaneTable.CPU, -1);
  }

  /** While waiting for a task: the CPU this worker spins on now (-1 before it sleeps). */
  waitsOn(cpu: number): void {
    if (this.#table[this.#at + LaneTable.CPU] !== cpu) Atomics.store(this.#table, this.#at + LaneTable.CPU, cpu);
  }

  /**
   * A task begins on `cpu` (-1: unknown); `narrowable`: it keeps one thread busy. Returns the CPU
   * the task runs on: `cpu`, or the one the worker moved to.
   */
  begin(cpu: number, narrowable: boolean): number {
    const t = this.#table;
    Atomics.store(t, this.#at + LaneTable.CPU, cpu);
    Atomics.store(t, this.#at + LaneTable.BUSY, 1);
    if (!narrowable || cpu < 0 || !this.#held(cpu)) return cpu;
    const free = this.#cpus.find((c) => c !== cpu && !this.#held(c));
    if (free === undefined) return cpu;
    // Claimed before the move: a lane that begins while this one is being moved (the system call
    // can be preempted) must not pick the same CPU.
    Atomics.store(t, this.#at + LaneTable.CPU, free);
    Atomics.store(t, this.#at + LaneTable.NARROWED, 1);
    try {
      this.#setAffinity([free]);
    } catch {
      Atomics.store(t, this.#at + LaneTable.NARROWED, 0);
      Atomics.store(t, this.#at + LaneTable.CPU, cpu);
      return cpu;
    }
    return free;
  }

  /** The task has answered: the lane is idle. */
  idle(): void {
    Atomics.store(this.#table, this.#at + LaneTable.BUSY, 0);
  }

  /** As the task ends, before its answer is published: give a narrowed worker the whole domain set back. */
  widen(): void {
    if (Atomics.load(this.#table, this.#at + LaneTable.NARROWED) === 0) return;
    try {
      this.#setAffinity([...this.#cpus]);
    } catch {
      // Nothing to do here: with the flag cleared, a placement check reports the mask as it is.
    }
    Atomics.store(this.#table, this.#at + LaneTable.NARROWED, 0);
  }

  /** Whether another lane with a task posted or running was last seen on `cpu`. */
  #held(cpu: number): boolean {
    const t = this.#table;
    for (let i = 0; i < this.#lanes; i++) {
      const at = i * LaneTable.WORDS;
      if (at !== this.#at && Atomics.load(t, at + LaneTable.BUSY) === 1 && Atomics.load(t, at + LaneTable.CPU) === cpu) return true;
    }
    return false;
  }
}
