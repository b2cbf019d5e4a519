/**
 * One word that the parked lanes of a fan-out wait on together (#37).
 *
 * Each lane's answer used to wake the main thread on its own: a fan-out whose lanes outlast the
 * main thread's first poll parks every lane in `Atomics.waitAsync` on its own mailbox, and each
 * worker's notify came through the event loop as a wake-up of its own (~2.8 sleeps a call for a
 * 2-thread n = 512 GEMM that parks, ~30 µs of main-thread CPU each on a 2-vCPU guest). A pool's
 * workers share a small array of join slots: the tasks posted while a fan-out is being posted
 * (`openFanOut` … `closeFanOut`, synchronous) each count themselves into one free slot, each
 * worker takes its task out of the count once its answer is written, and the one that brings it to
 * zero notifies the slot. A lane that parks at once (`PARK_WHEN_DUE_NS` in `engine-worker.ts`: it
 * usually runs long and an event-loop turn is due by its end) waits on the slot while the count is
 * above zero, so the main thread wakes once, when the last lane is done, and settles those lanes
 * then (a lane that failed notifies the slot too: a failure is seen as it comes); other lanes wait
 * on their own mailbox, each answer seen as it comes.
 *
 * The slot only says when to look: every lane still reads its own answer, and waits on its own
 * mailbox (which its worker always notifies) once the slot is at or below zero. A slot is lent to
 * a new fan-out only when its count is zero, i.e. every task counted into it has been taken out:
 * a worker takes its task out after writing its answer, so an answer seen does not mean the slot
 * is free yet, and the next fan-out then takes another slot (or none: its lanes wait as before).
 * A worker that dies with a counted task poisons the slot (`poison`): a large negative count that
 * sends every waiter back to its own mailbox, and keeps the slot out of use.
 */

/** Join slots per pool: more than the fan-outs one execution can have parked at once. */
export const JOIN_SLOTS = 16;

/** A dead worker's slot: far below zero, never zero again. */
const POISONED = -(2 ** 30);

export class FanOutJoins {
  readonly buffer = new SharedArrayBuffer(JOIN_SLOTS * Int32Array.BYTES_PER_ELEMENT);
  readonly words = new Int32Array(this.buffer);
  #next = 0;

  /** A slot whose count is zero, or -1 when none is. */
  free(): number {
    for (let i = 0; i < JOIN_SLOTS; i++) {
      const slot = (this.#next + i) % JOIN_SLOTS;
      if (Atomics.load(this.words, slot) === 0) {
        this.#next = (slot + 1) % JOIN_SLOTS;
        return slot;
      }
    }
    return -1;
  }

  /** Count one more task into `slot` (before it is posted). */
  enter(slot: number): void {
    Atomics.add(this.words, slot, 1);
  }

  /** A worker with a task counted into `slot` died: wake the slot's waiters and keep it out of use. */
  poison(slot: number): void {
    Atomics.store(this.words, slot, POISONED);
    Atomics.notify(this.words, slot);
  }
}

/** How deep the synchronous posting of fan-outs is nested here (0: tasks join nothing). */
let opened = 0;
/** The slot the tasks of the fan-out being posted count into, once its first task chose it. */
let joining: { readonly joins: FanOutJoins; readonly slot: number } | undefined;

/** The tasks posted from now until {@link closeFanOut} are the lanes of one fan-out. */
export function openFanOut(): void {
  opened++;
}

/** The fan-out opened last is posted. */
export function closeFanOut(): void {
  if (--opened === 0) joining = undefined;
}

/**
 * The slot of `joins` a task posted now counts itself into (already counted), or -1: none when no
 * fan-out is being posted, none is free, or the fan-out's first task chose a slot of another pool.
 */
export function joinFanOut(joins: FanOutJoins): number {
  if (opened === 0) return -1;
  if (joining === undefined) {
    const slot = joins.free();
    if (slot < 0) return -1;
    joining = { joins, slot };
  } else if (joining.joins !== joins) return -1;
  joins.enter(joining.slot);
  return joining.slot;
}
