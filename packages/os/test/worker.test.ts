import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { beforeAll, describe, expect, it } from 'vitest';
import { getProcessAffinity, getThreadAffinity, gettid } from '../src/index.js';
import { DIST_INDEX, cpusAllowedList, requireDist } from './helpers.js';

const PIN_WORKER = new URL('./fixtures/pin-worker.mjs', import.meta.url);
const CALL_WORKER = new URL('./fixtures/call-worker.mjs', import.meta.url);

function run<T>(file: URL, workerData: Record<string, unknown>, env?: NodeJS.ProcessEnv): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(file, { workerData: { index: pathToFileURL(DIST_INDEX).href, ...workerData }, ...(env ? { env } : {}) });
    let message: T | undefined;
    worker.once('message', (m: T) => (message = m));
    worker.once('error', reject);
    worker.once('exit', (code) => (message === undefined ? reject(new Error(`worker exited with ${code} and no message`)) : resolve(message)));
  });
}

interface PinResult {
  tid: number;
  before: number[];
  line: string;
  after: number[];
  process: number[];
  error?: { code: string; message: string };
}

const allowed = getProcessAffinity();

beforeAll(requireDist);

describe('setThreadAffinity in worker threads', () => {
  it.skipIf(allowed.length < 2)('pins only the worker thread (skipped: the process has a single CPU)', async () => {
    const highest = Math.max(...allowed);
    const lowest = Math.min(...allowed);
    const mainBefore = getThreadAffinity();
    const mainLineBefore = cpusAllowedList(gettid());

    // Two workers at once: the addon must load in several environments of one process.
    const [high, low] = await Promise.all([
      run<PinResult>(PIN_WORKER, { cpus: [highest, highest] }),
      run<PinResult>(PIN_WORKER, { cpus: [lowest] }),
    ]);
    expect(high.error).toBeUndefined();
    expect(low.error).toBeUndefined();

    expect(high.tid).not.toBe(process.pid);
    expect(low.tid).not.toBe(high.tid);
    expect(high.before).toEqual(mainBefore);
    expect(high.line).toBe(`Cpus_allowed_list:\t${highest}`);
    expect(high.after).toEqual([highest]);
    expect(low.line).toBe(`Cpus_allowed_list:\t${lowest}`);
    expect(low.after).toEqual([lowest]);
    // The process mask is the main thread's, which the workers did not touch.
    expect(high.process).toEqual(allowed);

    expect(getThreadAffinity()).toEqual(mainBefore);
    expect(cpusAllowedList(gettid())).toBe(mainLineBefore);
    expect(getProcessAffinity()).toEqual(allowed);
  });

  it('reports a CPU outside the process mask from a worker', async () => {
    const result = await run<PinResult>(PIN_WORKER, { cpus: [Math.max(...allowed) + 1] });
    expect(result.error?.code).toBe('CpuOutsideAllowedSet');
  });
});

describe('when the addon is unavailable', () => {
  it('every call throws AffinityUnavailable (validation still comes first)', async () => {
    const result = await run<Record<string, Record<string, unknown>>>(CALL_WORKER, {}, { ...process.env, TENFERRO_OS_DISABLE: '1' });
    expect(result.status).toEqual({
      available: false,
      reason: 'disabled by TENFERRO_OS_DISABLE=1',
      reasons: ['disabled by TENFERRO_OS_DISABLE=1'],
      possibleSolutions: ['unset TENFERRO_OS_DISABLE'],
    });
    for (const op of ['gettid', 'getThreadAffinity', 'getProcessAffinity', 'setThreadAffinity']) {
      expect(result[op]).toMatchObject({ code: 'AffinityUnavailable', kind: 'Unsupported', op, branded: true });
      expect(result[op]!.message).toBe(`${op}: thread affinity is unavailable: disabled by TENFERRO_OS_DISABLE=1. Possible solutions: unset TENFERRO_OS_DISABLE`);
      expect(result[op]!.detail).toEqual({
        reason: 'disabled by TENFERRO_OS_DISABLE=1',
        reasons: ['disabled by TENFERRO_OS_DISABLE=1'],
        possibleSolutions: ['unset TENFERRO_OS_DISABLE'],
      });
    }
    expect(result.setEmpty).toMatchObject({ code: 'EmptyCpuSet', kind: 'Validation' });
  });

  it('the compiled package works in a worker when available', async () => {
    const result = await run<Record<string, Record<string, unknown>>>(CALL_WORKER, {});
    expect(result.status!.available).toBe(true);
    expect(result.getProcessAffinity).toEqual({ value: allowed });
    expect(result.gettid!.value).not.toBe(process.pid);
  });
});
