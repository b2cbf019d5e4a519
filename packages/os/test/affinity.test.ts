import { isMainThread } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { currentCpu, getProcessAffinity, getThreadAffinity, gettid, loadOs, setThreadAffinity, yieldThread } from '../src/index.js';
import { cpusAllowedList, parseCpuList } from './helpers.js';

describe('native addon on the main thread', () => {
  it('is available (the native build must have run)', () => {
    const status = loadOs();
    expect(status.available, status.available ? '' : status.reason).toBe(true);
    expect(loadOs()).toBe(status); // cached
  });

  it('yieldThread() returns at once and leaves the mask alone', () => {
    const before = getThreadAffinity();
    for (let i = 0; i < 1000; i++) expect(yieldThread()).toBeUndefined();
    expect(getThreadAffinity()).toEqual(before);
  });

  it('currentCpu() is a CPU of the thread\'s mask; pinned to one CPU, it is that CPU', () => {
    const before = getThreadAffinity();
    expect(before).toContain(currentCpu());
    try {
      for (const cpu of before) {
        expect(setThreadAffinity([cpu])).toBeUndefined();
        for (let i = 0; i < 100; i++) expect(currentCpu()).toBe(cpu);
      }
    } finally {
      setThreadAffinity(before);
    }
    expect(getThreadAffinity()).toEqual(before);
  });

  it('gettid() is process.pid on the main thread', () => {
    expect(isMainThread).toBe(true);
    expect(gettid()).toBe(process.pid);
  });

  it('getThreadAffinity() equals Cpus_allowed_list of /proc/self/task/<tid>/status', () => {
    const cpus = getThreadAffinity();
    expect(cpus.length).toBeGreaterThan(0);
    expect(cpus).toEqual([...cpus].sort((a, b) => a - b));
    expect(cpus).toEqual(parseCpuList(cpusAllowedList(gettid())));
  });

  it('getProcessAffinity() equals the main thread mask', () => {
    expect(getProcessAffinity()).toEqual(parseCpuList(cpusAllowedList(process.pid)));
    expect(getProcessAffinity()).toEqual(getThreadAffinity());
  });

  it('setThreadAffinity() accepts duplicates and unsorted ids (setting the current mask is a no-op)', () => {
    const before = getThreadAffinity();
    const shuffled = [...before].reverse();
    setThreadAffinity([...shuffled, ...shuffled]);
    expect(getThreadAffinity()).toEqual(before);
    expect(cpusAllowedList(gettid())).toBe(cpusAllowedList(process.pid));
  });
});
