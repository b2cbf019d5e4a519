import { AsyncLocalStorage } from 'node:async_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CpuBackend, Tensor, tidy } from '../src/index.js';
import { liveFrameCount } from '../src/runtime/execution/execution-frame.js';
import { IDLE_DISABLE_MS, IdleStorage } from '../src/util/idle-storage.js';
import { expectCode } from './helpers.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('IdleStorage', () => {
  it('disables the storage once it stayed idle for the interval; a busy storage stays on; one timer at a time', () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    const storage = new AsyncLocalStorage<number>();
    const disable = vi.spyOn(storage, 'disable');
    let idle = false;
    const release = new IdleStorage(storage as AsyncLocalStorage<unknown>, () => idle);
    release.closed();
    release.closed(); // armed already
    vi.advanceTimersByTime(IDLE_DISABLE_MS);
    expect(disable).not.toHaveBeenCalled(); // busy again when the timer fired
    idle = true;
    release.closed();
    vi.advanceTimersByTime(IDLE_DISABLE_MS - 1);
    expect(disable).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(disable).toHaveBeenCalledTimes(1);
  });

  it('a disabled storage works again from its next run(), in the continuations of that run', async () => {
    const storage = new AsyncLocalStorage<string>();
    await storage.run('a', async () => {
      await null;
      expect(storage.getStore()).toBe('a');
    });
    storage.disable();
    expect(storage.getStore()).toBeUndefined();
    await storage.run('b', async () => {
      await new Promise((resolve) => setImmediate(resolve));
      expect(storage.getStore()).toBe('b');
    });
  });
});

describe('after the async-context storages went idle and off', () => {
  it('re-entry is still refused, tidy still disposes what it made, and operations run', async () => {
    const backend = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
      for (let round = 0; round < 2; round++) {
        (await backend.matmul(a, a)).dispose();
        await tidy(async () => backend.matmul(a, a));
        // Past the idle interval: both storages were disabled (this wait only lets that happen; nothing below depends on it).
        await new Promise((resolve) => setTimeout(resolve, IDLE_DISABLE_MS + 50));
        const inner = await backend.install(async () => {
          await new Promise((resolve) => setImmediate(resolve));
          return backend.matmul(a, a).then(() => 'ran', (e: unknown) => e);
        });
        await expectCode(() => {
          throw inner;
        }, 'Reentered');
        let made: Tensor | undefined;
        const returned = await tidy(async () => {
          await new Promise((resolve) => setImmediate(resolve));
          made = await backend.matmul(a, a);
          return backend.matmul(made, a);
        });
        expect(made!.disposed).toBe(true);
        expect(returned.disposed).toBe(false);
        expect(returned.toArray()).toEqual([37, 54, 81, 118]);
      }
    } finally {
      await backend.close();
    }
  });
});

describe('execution frames end on every exit (what lets the async-context hooks go off when idle)', () => {
  it('no frame stays live after successful, failing, thrown, aborted, re-entered and closed executions, nor after tidy', async () => {
    const backend = await CpuBackend.create({ threads: 1, providers: [] });
    const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    expect(liveFrameCount()).toBe(0);
    (await backend.matmul(a, a)).dispose();
    expect(liveFrameCount()).toBe(0);
    await expect(backend.install(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      backend.install(() => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    expect(liveFrameCount()).toBe(0);
    const inner = await backend.install(async () => backend.matmul(a, a).then(() => 'ran', (e: unknown) => e));
    await expectCode(() => {
      throw inner;
    }, 'Reentered');
    const controller = new AbortController();
    controller.abort();
    await expect(backend.matmul(a, a, { signal: controller.signal })).rejects.toMatchObject({ code: 'AdmissionAborted' });
    const kept = await tidy(async () => backend.matmul(a, a));
    kept.dispose();
    expect(liveFrameCount()).toBe(0);
    let during = -1;
    const running = backend.install(async () => {
      during = liveFrameCount();
      await new Promise((resolve) => setImmediate(resolve));
    });
    const closing = backend.close();
    await Promise.allSettled([running, closing]);
    expect(during).toBe(1);
    expect(liveFrameCount()).toBe(0);
  });
});
