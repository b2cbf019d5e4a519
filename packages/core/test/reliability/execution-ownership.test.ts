// Executions own their kernel tasks (issue: the no-overlap guarantee under ordinary JavaScript):
// no task outlives its permit, concurrent work inside one execution queues, caller-managed
// domains queue top-level calls, owner ids cross 2^31 and 2^32 without trouble.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { continueOwnersAfter } from '../../src/arbiter/execution-owner.js';
import { CpuBackend, processArbiter, TenferroError, Tensor } from '../../src/index.js';
import { naiveDotGeneral, randomOperand, relativeError, seededRandom } from '../../src/testing/index.js';
import { expectCode, kernel, reached, until } from '../helpers.js';

const noop = kernel('noop');
const twoCpus = (await import('../../src/index.js')).discoverCpuTopology().allowedCpus.size >= 2;
const echo = kernel<number, number>('echo');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2 });
});
afterAll(async () => {
  await backend.close();
});

describe('a kernel task never outlives its execution', () => {
  it('a failing Promise.all branch: the permit is held until the running kernel settles, then the branch error is reported', async () => {
    const gate = new Int32Array(new SharedArrayBuffer(8));
    const order: string[] = [];
    const first = backend.install((ctx) =>
      Promise.all([ctx.run(holdUntil, { buffer: gate.buffer as SharedArrayBuffer, index: 0, enteredIndex: 1, timeoutMs: 10_000 }).then(() => order.push('kernel done')), Promise.reject(new Error('branch failed'))]),
    );
    void first.catch(() => undefined);
    await reached(gate, 1);
    // Another backend on the same CPUs must wait: the permit is still held.
    const other = await CpuBackend.create({ threads: 1 });
    try {
      const second = other.install((ctx) => ctx.run(noop)).then(() => order.push('other ran'));
      await until(() => processArbiter().stats().waiting >= 1);
      expect(order).toEqual([]);
      Atomics.store(gate, 0, 1);
      Atomics.notify(gate, 0);
      await expect(first).rejects.toThrow('branch failed');
      await second;
      expect(order).toEqual(['kernel done', 'other ran']);
    } finally {
      await other.close();
    }
    // The engine is usable at once: no "already running" state was left behind.
    expect(await backend.install((ctx) => ctx.run(echo, 7))).toBe(7);
  });

  it('an un-awaited ctx.run: the execution ends when it settles, and its failure is the outcome', async () => {
    const fail = kernel('fail');
    const e = await expectCode(backend.install((ctx) => void ctx.run(fail, { message: 'orphan failed' })), 'KernelFailed', 'BackendFailure');
    expect((e.cause as Error).message).toBe('orphan failed');
    expect(backend.executionInfo().admission).toEqual({ active: 0, waiting: 0 });
  });

  it('a task started after the callback returned is refused with ContextExpired', async () => {
    let later: Promise<unknown> | undefined;
    await backend.install((ctx) => {
      queueMicrotask(() => {
        later = ctx.run(noop);
        later.catch(() => undefined); // inspected below
      });
    });
    await expectCode(later!, 'ContextExpired', 'RuntimeState');
    let afterAsync: Promise<unknown> | undefined;
    await backend.install(async (ctx) => {
      await ctx.run(noop);
      setImmediate(() => {
        afterAsync = ctx.run(noop);
        afterAsync.catch(() => undefined); // inspected below
      });
    });
    await until(() => afterAsync !== undefined);
    await expectCode(afterAsync!, 'ContextExpired', 'RuntimeState');
  });
});

describe('concurrent work inside one execution queues', () => {
  it.skipIf(!twoCpus)('Promise.all over ctx.run and over the worker pool on one execution: every result, no Internal (needs 2 CPUs: a pool of 2)', async () => {
    const values = await backend.install((ctx) => Promise.all(Array.from({ length: 8 }, (_, i) => ctx.run(echo, i))));
    expect(values).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const mapped = await backend.withBackendSession((s) =>
      s.run('inner', async (ctx) => {
        const pool = ctx.workerPool()!;
        return Promise.all([pool.map(echo, [1, 2, 3]), pool.map(echo, [4, 5]), pool.runOn(0, echo, 6), ctx.run(echo, 7)]);
      }),
    );
    expect(mapped).toEqual([[1, 2, 3], [4, 5], 6, 7]);
  });

  it('Promise.all of dotGenerals in one session: each result correct', async () => {
    const rand = seededRandom(11);
    const pairs = Array.from({ length: 4 }, () => [randomOperand(rand, 'f64', [17, 9], true), randomOperand(rand, 'f64', [9, 13], true)] as const);
    const dims = { contracting: [[1], [0]] as [number[], number[]] };
    const results = await backend.withBackendSession((s) => Promise.all(pairs.map(([a, b]) => s.dotGeneral(a, b, dims))));
    results.forEach((r, i) => {
      const [a, b] = pairs[i]!;
      expect(relativeError(r.toArray() as number[], naiveDotGeneral(a, b, dims).values)).toBeLessThan(1e-12);
    });
  });

  it('no pattern of concurrent calls reaches Internal', async () => {
    const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    const settled = await Promise.allSettled([
      backend.install((ctx) => Promise.all([ctx.run(noop), ctx.run(noop), Promise.reject(new Error('x'))])),
      backend.withBackendSession((s) => Promise.all([s.dotGeneral(a, a, { contracting: [[1], [0]] }), s.run('sequential', (ctx) => ctx.run(noop))])),
      backend.withExecutionScope(() => Promise.all([backend.matmul(a, a), backend.install((ctx) => ctx.run(noop)), backend.matmul(a, a)])),
      backend.matmul(a, a),
    ]);
    for (const s of settled) {
      if (s.status === 'rejected') expect(TenferroError.is(s.reason, 'Internal')).toBe(false);
    }
    expect(settled.filter((s) => s.status === 'fulfilled')).toHaveLength(3);
  });
});

describe('execution owners', () => {
  it.each([2 ** 31 - 3, 2 ** 32 - 3])('executions keep working across owner %i and the next few', async (start) => {
    continueOwnersAfter(start);
    for (let i = 0; i < 6; i++) expect(await backend.install((ctx) => ctx.run(echo, i))).toBe(i);
    const out = await backend.withExecutionScope(() => backend.install(() => 'scoped'));
    expect(out).toBe('scoped');
  });
});
