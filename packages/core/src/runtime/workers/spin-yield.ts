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
