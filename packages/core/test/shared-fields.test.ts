import { describe, expect, it } from 'vitest';
import { LaneTable } from '../src/runtime/workers/lane-spread.js';
import { EngineState, Mailbox } from '../src/runtime/workers/shared-fields.js';

/** Int32 words between two fields that can never share a cache line or its adjacent-line prefetch pair: 128 bytes. */
const APART = 128 / Int32Array.BYTES_PER_ELEMENT;

/** Whether every field of `a` is at least APART words from every field of `b`. */
function apart(a: readonly number[], b: readonly number[]): boolean {
  return a.every((x) => b.every((y) => Math.abs(x - y) >= APART));
}

describe('the shared control blocks', () => {
  it('keep what the main isolate writes and what a worker writes on cache lines of their own (#38 item 7)', () => {
    const mainWrites = [Mailbox.REQUEST, Mailbox.TASK_FLAGS, Mailbox.KERNEL_ID, Mailbox.WORDS, Mailbox.BUFFERS, Mailbox.MAIN_CPU, Mailbox.TASK];
    // TIMES is two float64 words: four int32 words from TIMES on.
    const workerWrites = [Mailbox.RESPONSE, Mailbox.RESULT_FLAGS, Mailbox.WORKER_CPU, Mailbox.TIMES, Mailbox.TIMES + 3];
    expect(apart(mainWrites, workerWrites)).toBe(true);
    const all = [...mainWrites, Mailbox.RESPONSE, Mailbox.RESULT_FLAGS, Mailbox.WORKER_CPU, Mailbox.TIMES, Mailbox.TIMES + 1, Mailbox.TIMES + 2, Mailbox.TIMES + 3];
    expect(new Set(all).size).toBe(all.length);
    expect(Math.max(...all)).toBeLessThan(Mailbox.LENGTH);
    expect(Mailbox.TIMES % 2).toBe(0); // a Float64Array index over the same buffer
  });

  it('keep the park word spinning workers read away from the owner words each execution writes', () => {
    expect(apart([EngineState.PARK], [EngineState.ACTIVE_OWNER, EngineState.DEPTH])).toBe(true);
    expect(EngineState.PARK).toBeLessThan(EngineState.LENGTH);
  });

  it('give each lane of the lane table its own cache lines', () => {
    // Lane i+1's first word is at least APART words past lane i's last.
    expect(LaneTable.WORDS - Math.max(LaneTable.CPU, LaneTable.BUSY, LaneTable.NARROWED)).toBeGreaterThanOrEqual(APART);
    expect(Math.max(LaneTable.CPU, LaneTable.BUSY, LaneTable.NARROWED)).toBeLessThan(LaneTable.WORDS);
  });
});
