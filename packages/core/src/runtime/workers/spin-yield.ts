/**
 * When a spin-wait of the engine (the main thread polling for a task's answer, a worker waiting
 * for its next task) yields its CPU. Each side publishes the CPU it runs on (`sched_getcpu`, no
 * system call) in its mailbox field; a spin yields every few checks only while the other side was
 * last seen on the same CPU (or either is unknown, -1), so that two threads sharing one CPU hand
 * over within a yield. On separate CPUs it yields only once per `RARE_YIELD_MASK + 1` checks (one
 * side may have moved unseen): each `sched_yield` is a system call that delays noticing the answer
 * and leaves the next kernel slower (one yield before a 64×64 GEMM cost it ~0.5 µs here).
 */

/** A spin on a CPU of its own still yields once in this many checks (~10 µs of spinning). */
export const RARE_YIELD_MASK = 4095;

/**
 * Publish `cpu` in field `mine` of `mailbox` (when it changed) and tell whether the other side's
 * last published CPU (field `theirs`) is the same one, or either is unknown.
 */
export function sharesCpu(mailbox: Int32Array, cpu: number, mine: number, theirs: number): boolean {
  if (mailbox[mine] !== cpu) Atomics.store(mailbox, mine, cpu);
  const other = Atomics.load(mailbox, theirs);
  return cpu < 0 || other < 0 || cpu === other;
}

/** A spin after a task lasts at most this share of the worker's usual task (1/10)… */
const SPIN_SHARE = 10;
/** …and at most this long (ns), whatever its tasks take. */
export const SPIN_MOST_NS = 1_000_000;

/**
 * How long a worker spins for its next task (ns) after a task, given its usual task's run
 * (`usualRunNs`, a moving average) and its base spin (`baseNs`, `DEFAULT_SPIN_MICROS`): the base,
 * or a tenth of the usual task when that is longer, up to {@link SPIN_MOST_NS}. Between the calls
 * of a loop of long operations the main thread spends 0.3–0.8 ms of JavaScript (a 1024² linalg
 * call on a 2-vCPU guest), longer than the base spin: the worker slept each time and the next
 * call began 90–180 µs late (its wake-up); spinning up to a tenth of what the task itself costs
 * keeps it awake for the next one (begun 6–7 µs after the post).
 */
export function spinNsAfter(usualRunNs: number, baseNs: number): number {
  return Math.round(Math.max(baseNs, Math.min(SPIN_MOST_NS, usualRunNs / SPIN_SHARE)));
}
