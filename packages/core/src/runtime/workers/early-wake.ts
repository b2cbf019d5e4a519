/**
 * When the main thread, parked while a task runs alone, wakes up on its own before the task's
 * usual end and watches that end from the event loop (one check per `setImmediate` turn) — instead
 * of waiting for the worker's notify, which goes through the event loop from idle: ~150 µs on a
 * 2-vCPU microVM, ~1 ms under load, and the main thread then runs its next call's path on a cold
 * CPU. The wake-up is `Atomics.waitAsync`'s timeout, which has the event loop's 1 ms resolution,
 * so the window before the usual end must outlast that.
 *
 * Two cases:
 * - **Every CPU busy** (the task's threads take all the CPUs the process may use): only tasks of at
 *   least `CROWDED_MIN_NS`, with a window of `CROWDED_WINDOW_NS` — at most 4 ms of turns, ≤ 15 %
 *   of one CPU, taken from the workers (#37).
 * - **A CPU to spare** (the task's threads leave one of the process's CPUs free, e.g. a
 *   single-threaded kernel on 2 CPUs): from `SPARE_MIN_NS` on, with a window of `SPARE_WINDOW_NS`.
 *   The main thread's turns then run on a CPU no worker needs. Measured on a 2-vCPU Zen 5 guest
 *   (a 1024² blas `la.cholesky` loop, 7.5 ms a call): the answer seen 11–28 µs after the worker
 *   wrote it against 150–190 µs, the worker's start lag 40 against 85–100 µs, the main thread's
 *   work after the answer 80–105 against 120–200 µs; the main thread at 14–22 % of one CPU
 *   against 6–11 % (docs/performance.md, 2026-12-09).
 * Shorter tasks park until notified (a window of turns would be most of their length).
 */
export const CROWDED_MIN_NS = 24_000_000;
export const CROWDED_WINDOW_NS = 2_000_000;
export const SPARE_MIN_NS = 4_000_000;
export const SPARE_WINDOW_NS = 1_500_000;

/**
 * How long before a task's usual end (`usualNs`) the main thread wakes up to watch it, or
 * `undefined` to park until notified. `threads`: what the task keeps busy (its native helpers
 * included); `processCpus`: the CPUs the process may use (the topology's effective capacity;
 * `undefined` when not known, then only the crowded rule applies).
 */
export function earlyWakeNs(usualNs: number, threads: number, processCpus: number | undefined): number | undefined {
  if (usualNs >= CROWDED_MIN_NS) return CROWDED_WINDOW_NS;
  if (usualNs >= SPARE_MIN_NS && processCpus !== undefined && threads < processCpus) return SPARE_WINDOW_NS;
  return undefined;
}
