import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CpuBackend, discoverCpuTopology } from '../src/index.js';
import { LaneSpreader, LaneTable, laneNarrowed, lanePosted, laneTableBuffer } from '../src/runtime/workers/lane-spread.js';
import { kernel } from './helpers.js';

/** A spreader for lane `index` of `lanes` over `cpus`, with a recording affinity call. */
function lane(table: SharedArrayBuffer, index: number, cpus: number[], fail?: 'narrow' | 'widen') {
  const calls: number[][] = [];
  const spreader = new LaneSpreader(table, index, cpus, (set) => {
    calls.push(set);
    if ((fail === 'narrow' && set.length === 1) || (fail === 'widen' && set.length > 1)) throw new Error('EPERM');
  });
  return { spreader, calls };
}

describe('lane spreading (a lane the scheduler put on another running lane\'s CPU moves off it for its task)', () => {
  it('a lane that starts on a CPU a running lane holds narrows to a free CPU of the set, and widens back after its task', () => {
    const table = laneTableBuffer(2);
    const cpus = [0, 1];
    const a = lane(table, 0, cpus);
    const b = lane(table, 1, cpus);
    expect(a.spreader.begin(0, true)).toBe(0);
    expect(a.calls).toEqual([]);
    expect(b.spreader.begin(0, true)).toBe(1);
    expect(b.calls).toEqual([[1]]);
    expect(laneNarrowed(new Int32Array(table), 1)).toBe(true);
    b.spreader.idle();
    b.spreader.widen();
    expect(b.calls).toEqual([[1], [0, 1]]);
    expect(laneNarrowed(new Int32Array(table), 1)).toBe(false);
    // A lane that did not narrow makes no call when it widens.
    a.spreader.idle();
    a.spreader.widen();
    expect(a.calls).toEqual([]);
  });

  it('a lane whose task is posted but not begun holds the CPU it spins on: the lane that begins there first moves; one asleep holds none', () => {
    const table = laneTableBuffer(2);
    const words = new Int32Array(table);
    const a = lane(table, 0, [0, 1]);
    const b = lane(table, 1, [0, 1]);
    b.spreader.waitsOn(0);
    lanePosted(words, 1); // the main thread posts to lane 1, then to lane 0
    lanePosted(words, 0);
    expect(a.spreader.begin(0, true)).toBe(1); // lane 1 would have waited behind it
    expect(b.spreader.begin(0, true)).toBe(0);
    a.spreader.idle();
    a.spreader.widen();
    b.spreader.idle();
    // Asleep: woken on whichever CPU, so it holds none.
    b.spreader.waitsOn(-1);
    lanePosted(words, 1);
    lanePosted(words, 0);
    expect(a.spreader.begin(0, true)).toBe(0);
    expect(a.calls).toEqual([[1], [0, 1]]);
    expect(b.calls).toEqual([]);
  });

  it('never narrows a task that may keep more than one thread busy, an unknown CPU, a CPU no running lane holds, or when no CPU is free', () => {
    const table = laneTableBuffer(3);
    const a = lane(table, 0, [0, 1]);
    const b = lane(table, 1, [0, 1]);
    const c = lane(table, 2, [0, 1]);
    a.spreader.begin(0, true);
    expect(b.spreader.begin(0, false)).toBe(0); // wide: its native helpers would inherit a narrowed mask
    expect(c.spreader.begin(-1, true)).toBe(-1);
    expect(c.spreader.begin(1, true)).toBe(1); // 0 and 1 both held now: nowhere to go
    b.spreader.idle();
    c.spreader.idle();
    expect(c.spreader.begin(1, true)).toBe(1); // free of others
    expect([...a.calls, ...b.calls, ...c.calls]).toEqual([]);
  });

  it('a refused narrowing leaves the lane where it is and unflagged; a refused widening clears the flag, so a placement check reports the mask as it is', () => {
    const table = laneTableBuffer(2);
    lane(table, 0, [0, 1]).spreader.begin(0, true);
    const refused = lane(table, 1, [0, 1], 'narrow');
    expect(refused.spreader.begin(0, true)).toBe(0);
    expect(laneNarrowed(new Int32Array(table), 1)).toBe(false);
    refused.spreader.idle();
    const stuck = lane(table, 1, [0, 1], 'widen');
    expect(stuck.spreader.begin(0, true)).toBe(1);
    stuck.spreader.idle();
    expect(() => stuck.spreader.widen()).not.toThrow();
    expect(laneNarrowed(new Int32Array(table), 1)).toBe(false);
  });

  it('a replacement worker starts its lane afresh: a dead predecessor left it busy and narrowed', () => {
    const table = laneTableBuffer(2);
    lane(table, 0, [0, 1]).spreader.begin(0, true);
    lane(table, 1, [0, 1]).spreader.begin(0, true); // narrowed to 1, then its worker died mid-task
    expect(laneNarrowed(new Int32Array(table), 1)).toBe(true);
    const replacement = lane(table, 1, [0, 1]);
    expect(laneNarrowed(new Int32Array(table), 1)).toBe(false);
    // Lane 0 no longer counts CPU 1 as held.
    const zero = lane(table, 0, [0, 1]);
    expect(zero.spreader.begin(1, true)).toBe(1);
    expect([...zero.calls, ...replacement.calls]).toEqual([]);
  });

  it('property: after any sequence of begins and ends, no two running single-thread lanes share a CPU while the set has a free one', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 4 }),
        fc.array(fc.record({ lane: fc.nat(3), cpu: fc.nat(3), end: fc.boolean() }), { maxLength: 40 }),
        (width, steps) => {
          const cpus = Array.from({ length: width }, (_, i) => i);
          const table = laneTableBuffer(width);
          const lanes = cpus.map((i) => lane(table, i, cpus).spreader);
          const running = new Map<number, number>();
          for (const step of steps) {
            const i = step.lane % width;
            if (running.has(i)) {
              if (step.end) {
                lanes[i]!.idle();
                lanes[i]!.widen();
                running.delete(i);
              }
              continue;
            }
            running.set(i, lanes[i]!.begin(step.cpu % width, true));
            // Lanes never outnumber CPUs (R22): a lane that begins always finds a CPU no other running lane holds.
            const held = [...running.values()];
            expect(new Set(held).size).toBe(held.length);
          }
          const words = new Int32Array(table);
          for (const [i, cpu] of running) expect(words[i * LaneTable.WORDS + LaneTable.CPU]).toBe(cpu);
        },
      ),
    );
  });

  const allowed = discoverCpuTopology().allowedCpus;
  const rendezvousMask = kernel<{ buffer: SharedArrayBuffer; mine: number; theirs: number; timeoutMs: number }, { met: boolean; worker: number; cpus: string }>('rendezvousMask');

  it.skipIf(allowed.size < 2)('two lanes put on one CPU from outside: the one that starts second runs its task on another CPU of the set and gets the whole set back (needs 2 CPUs)', async () => {
    const b = await CpuBackend.create({ threads: 2, providers: [] });
    try {
      const workers = b.executionInfo().workers;
      expect(workers).toHaveLength(2);
      const [c0, c1] = allowed.toArray();
      for (const w of workers) expect(spawnSync('taskset', ['-p', '-c', String(c0), String(w.tid)]).status).toBe(0);
      const fanOut = () => {
        const buffer = new SharedArrayBuffer(8);
        return b.withBackendSession((s) =>
          s.run('inner', (ctx) => {
            const pool = ctx.workerPool()!;
            return Promise.all([pool.runOn(0, rendezvousMask, { buffer, mine: 0, theirs: 1, timeoutMs: 10_000 }), pool.runOn(1, rendezvousMask, { buffer, mine: 1, theirs: 0, timeoutMs: 10_000 })]);
          }),
        );
      };
      // The kernel's first task on each worker loads its module (which may start threads): never narrowed.
      const first = await fanOut();
      expect(first.map((r) => [r.met, r.cpus])).toEqual([
        [true, String(c0)],
        [true, String(c0)],
      ]);
      const seen = await fanOut();
      expect(seen.map((r) => r.met)).toEqual([true, true]);
      // Which lane began first is the scheduler's choice; the other one moved to the free CPU.
      expect(seen.map((r) => r.cpus).sort()).toEqual([String(c0), String(c1)].sort());
      const moved = seen.find((r) => r.cpus === String(c1))!;
      const check = b.checkPlacement();
      const movedBack = check.workers.find((w) => w.tid === workers[moved.worker]!.tid)!;
      const stayed = check.workers.find((w) => w.tid !== movedBack.tid)!;
      expect(movedBack).toMatchObject({ observed: allowed.toString(), ok: true });
      // The outside move of the other lane is still reported.
      expect(stayed).toMatchObject({ observed: String(c0), ok: false });
    } finally {
      await b.close();
    }
  });
});
