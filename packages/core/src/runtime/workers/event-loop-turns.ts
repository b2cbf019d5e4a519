/**
 * The main isolate's run of answers since its event loop last turned for tenferro (#37). An
 * answer seen in the main thread's blocking poll settles as a microtask, so a tight `await` loop
 * of short tasks (or a `Promise.all` of hundreds on one worker) would never give the event loop a
 * turn. After `SYNC_ANSWER_BUDGET` answers, or once the run has lasted `TURN_BUDGET_NS` by the
 * time an answer is seen, that answer settles through a macrotask (`setImmediate`), and its worker
 * is handed on only then: every timer, I/O callback and immediate waiting runs first.
 *
 * The count is strict (it restarts only at such a turn). The time is the wall time from the run's
 * start to the answer, not to the task's post: a poll that yields its CPU to a lane sharing it
 * (`pollAmongLanes`) can come back a whole scheduler slice later with the answer in hand, and that
 * slice kept the event loop from turning as surely as a busy poll would (measured on a 2-vCPU
 * guest with a `setImmediate` heartbeat beside 2-thread faer n = 512 f64 streams: 50–55 gaps over
 * 5 ms and the longest 15–26 ms per 1.5 s when the run was timed to the post, 4–6 and 5.8–8.6 ms timed
 * to the answer). The run restarts also when the caller posts a task more than `RUN_GAP_NS` after
 * the last answer (it was away: its own work is not tenferro's). At n = 64 (~25 µs a call) a turn
 * every 0.75 ms keeps the heartbeat's gaps under 1 ms; a turn costs a few µs, ~0.1 µs a call.
 */
export const SYNC_ANSWER_BUDGET = 128;
export const TURN_BUDGET_NS = 750_000n;
export const RUN_GAP_NS = 100_000n;

export class EventLoopTurns {
  /** Answers settled since the last turn. */
  #answers = 0;
  /** When the current run began. */
  #runStartNs = 0n;
  /** When the last answer was taken. */
  #lastAnsweredNs = 0n;

  /** Whether the answer of a task posted at `startedNs`, seen at `nowNs`, waits for an event-loop turn first. */
  due(startedNs: bigint, nowNs: bigint): boolean {
    if (startedNs - this.#lastAnsweredNs > RUN_GAP_NS && startedNs > this.#runStartNs) this.#runStartNs = startedNs;
    return this.#answers >= SYNC_ANSWER_BUDGET || nowNs - this.#runStartNs > TURN_BUDGET_NS;
  }

  /** The event loop just turned (an immediate ran, at `nowNs`): a new run of answers starts. */
  taken(nowNs: bigint): void {
    this.#answers = 0;
    this.#runStartNs = nowNs;
  }

  /**
   * The main thread handed the event loop control while it waited for an answer (an asynchronous
   * `Atomics.waitAsync`), and the answer came at `nowNs`: the run's time starts again — a 10 ms
   * kernel waited for asleep is not 10 ms of tenferro holding the loop. Its count does not: the
   * loop may have run the answer's wake-up before any immediate (a `Promise.all` of hundreds of
   * short parked tasks still gets a turn every `SYNC_ANSWER_BUDGET` answers).
   */
  resumed(nowNs: bigint): void {
    this.#runStartNs = nowNs;
  }

  /** An answer was settled without a turn of its own. */
  counted(): void {
    this.#answers++;
  }

  /** An answer was taken at `nowNs`. */
  answered(nowNs: bigint): void {
    this.#lastAnsweredNs = nowNs;
  }
}
