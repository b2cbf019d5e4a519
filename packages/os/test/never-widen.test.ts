// R9 in the binding: under `taskset`, no thread can be widened beyond the process mask recorded
// when the addon loaded — neither through setThreadAffinity nor through the raw binding, from the
// main thread or a worker — and narrowing a thread never shrinks that recorded mask.
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { beforeAll, describe, expect, it } from 'vitest';
import { getProcessAffinity } from '../src/index.js';
import { DIST_INDEX, parseCpuList, requireDist } from './helpers.js';

const CHILD = new URL('./fixtures/widen-child.mjs', import.meta.url).pathname;
const allowed = getProcessAffinity();
const machineCpus = Math.max(availableParallelism(), allowed[allowed.length - 1]! + 1, 2);

beforeAll(requireDist);

function child(cpus: string, scenario: string): Record<string, any> {
  const r = spawnSync('taskset', ['-c', cpus, process.execPath, CHILD, DIST_INDEX, scenario, String(machineCpus)], { encoding: 'utf8', timeout: 20_000 });
  expect(r.error).toBeUndefined();
  expect(r.stderr).toBe('');
  expect({ status: r.status, signal: r.signal }).toEqual({ status: 0, signal: null });
  return JSON.parse(r.stdout) as Record<string, any>;
}

describe('setThreadAffinity never widens (taskset -c <one cpu>)', () => {
  const one = allowed[allowed.length - 1]!;

  it('refuses every CPU outside the process mask with CpuOutsideAllowedSet, on the main thread and in a worker', () => {
    const r = child(String(one), 'outside');
    expect(r.process).toEqual([one]);
    // The machine has more CPUs than the one the child may use, so every request names one outside.
    for (const side of [r.main, r.worker]) {
      expect(side.before).toEqual([one]);
      expect(side.wrapper.code).toBe('CpuOutsideAllowedSet');
      expect(side.wrapper.detail.allowed).toEqual([one]);
      expect(side.wrapper.detail.cpu).not.toBe(one);
      // The raw binding refuses on its own (C++), before any system call: the mask is unchanged.
      expect(side.raw).toBe(r.outsideAllowedSet);
      expect(side.after).toEqual([one]);
    }
    expect(r.outsideAllowedSet).toBe(-1);
    expect(parseCpuList(r.worker.line)).toEqual([one]);
  });
});

describe.skipIf(allowed.length < 2)('the process mask is the one recorded at load (skipped: one allowed CPU)', () => {
  const set = `${allowed[0]},${allowed[allowed.length - 1]}`;
  const both = [allowed[0]!, allowed[allowed.length - 1]!];

  it('narrowing the main thread does not shrink it: a worker still pins to another allowed CPU', () => {
    const r = child(set, 'narrow-main');
    expect(r.process0).toEqual(both);
    expect(parseCpuList(r.mainLine)).toEqual([both[0]]); // the main thread really is narrowed
    expect(r.processAfter).toEqual(both);
    expect(r.worker.pinned).toEqual({ value: null });
    expect(r.worker.after).toEqual([both[1]]);
    expect(r.worker.process).toEqual(both);
  });

  it('a first load in an already narrowed worker records the thread-group leader\'s mask, not the worker\'s', () => {
    const r = child(set, 'narrowed-first');
    expect(parseCpuList(r.mainLine)).toEqual(both);
    expect(r.worker.tasksetStatus).toBe(0);
    expect(parseCpuList(r.worker.narrowed)).toEqual([both[0]]);
    expect(r.worker.process).toEqual(both);
    // Pinning the narrowed worker to the whole process mask stays inside it, so it is allowed.
    expect(r.worker.widenedWithin).toEqual({ value: null });
    expect(r.worker.after).toEqual(both);
    expect(r.mainProcess).toEqual(both);
  });
});
