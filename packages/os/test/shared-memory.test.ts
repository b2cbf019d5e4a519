// sharedMemoryRange: two SharedArrayBuffer objects over one backing store (a buffer sent to a
// worker and back) give the same address range; distinct buffers give disjoint ranges.
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { OsError, rangesOverlap, sharedMemoryRange } from '../src/index.js';
import { DIST_INDEX, requireDist } from './helpers.js';

beforeAll(requireDist);

/** Sends `sab` to a worker, which reports the range it sees and sends the buffer back. */
function roundTrip(sab: SharedArrayBuffer): Promise<{ back: SharedArrayBuffer; seen: { address: bigint; byteLength: number } }> {
  const source = `
    import { parentPort, workerData } from 'node:worker_threads';
    const os = await import(workerData.index);
    parentPort.once('message', (buffer) => parentPort.postMessage({ back: buffer, seen: os.sharedMemoryRange(buffer) }));`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: { index: pathToFileURL(DIST_INDEX).href } });
    worker.once('message', (m) => {
      void worker.terminate();
      resolve(m);
    });
    worker.once('error', reject);
    worker.postMessage(sab);
  });
}

describe('sharedMemoryRange', () => {
  it('a SharedArrayBuffer round-tripped through a worker is another object over the same range', async () => {
    const sab = new SharedArrayBuffer(4096);
    const here = sharedMemoryRange(sab);
    const { back, seen } = await roundTrip(sab);
    expect(back).not.toBe(sab);
    expect(seen).toEqual(here); // the worker's own addon sees the same memory
    expect(sharedMemoryRange(back)).toEqual(here);
    expect(rangesOverlap(sharedMemoryRange(back), here)).toBe(true);
    // And it really is the same memory.
    new Uint8Array(back)[4095] = 7;
    expect(new Uint8Array(sab)[4095]).toBe(7);
  });

  it('distinct SharedArrayBuffers have disjoint ranges', () => {
    const buffers = Array.from({ length: 16 }, (_, i) => new SharedArrayBuffer(64 + i));
    const ranges = buffers.map(sharedMemoryRange);
    for (const [i, r] of ranges.entries()) {
      expect(r.byteLength).toBe(64 + i);
      expect(r.address).toBeGreaterThan(0n);
      for (const other of ranges.slice(i + 1)) expect(rangesOverlap(r, other)).toBe(false);
    }
    expect(rangesOverlap(ranges[0]!, ranges[0]!)).toBe(true);
  });

  it('a zero-length buffer reaches nothing', () => {
    const r = sharedMemoryRange(new SharedArrayBuffer(0));
    expect(r).toEqual({ address: 0n, byteLength: 0 });
    expect(rangesOverlap(r, r)).toBe(false);
  });

  it('refuses anything but a real SharedArrayBuffer with InvalidArgument', () => {
    const forged = Object.create(SharedArrayBuffer.prototype) as SharedArrayBuffer;
    for (const value of [new ArrayBuffer(8), new Uint8Array(new SharedArrayBuffer(8)), forged, { byteLength: 8 }, null, undefined, 8]) {
      let error: unknown;
      try {
        sharedMemoryRange(value as SharedArrayBuffer);
      } catch (e) {
        error = e;
      }
      expect(OsError.is(error, 'InvalidArgument')).toBe(true);
      expect((error as OsError).detail).toEqual({ param: 'buffer' });
    }
  });
});

describe('adjustExternalMemory', () => {
  it('reports external memory to V8 and takes it back; malformed deltas are ignored', async () => {
    const { adjustExternalMemory } = await import('../src/index.js');
    const base = adjustExternalMemory(0)!;
    expect(typeof base).toBe('number');
    expect(adjustExternalMemory(1 << 20)).toBe(base + (1 << 20));
    expect(adjustExternalMemory(-(1 << 20))).toBe(base);
    expect(adjustExternalMemory(0.5)).toBeUndefined();
    expect(adjustExternalMemory(Number.NaN)).toBeUndefined();
  });
});

describe('sharedMemoryRange of a buffer longer than a typed array can be', () => {
  it('reports its address and whole length (5 GiB, never touched)', () => {
    let big: SharedArrayBuffer;
    try {
      big = new SharedArrayBuffer(5 * 2 ** 30);
    } catch {
      return; // the machine cannot reserve it: nothing to check
    }
    const range = sharedMemoryRange(big);
    expect(range.byteLength).toBe(5 * 2 ** 30);
    expect(typeof range.address).toBe('bigint');
    expect(range.address % 16n).toBe(0n);
  });
});
