// The diagnostics channels (docs/observability.md), through the public API: what each channel
// carries for real operations, the tracing pairs APM tools rely on, and forwardDiagnostics.
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdmissionEvent,
  CpuBackend,
  type CpuGemmProvider,
  CpuProviderBundle,
  DIAGNOSTICS_CHANNELS,
  type ExecutionEvent,
  type ForwardedDiagnosticsEvent,
  forwardDiagnostics,
  type PoolEvent,
  type ProviderEvent,
  referenceGemmProvider,
  type TaskEvent,
  referenceLayoutProvider,
  Tensor,
  Unsupported,
} from '../src/index.js';
import { discoverCpuTopology } from '../src/index.js';
import { expectCode, expectThrows, kernel, reached, until } from './helpers.js';

const echo = kernel<number, number>('echo');
let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1 });
  await backend.ready();
});
afterAll(async () => {
  await backend.close();
});

/** Every message of the plain channel `name` while `fn` runs. */
async function plain<T>(name: string, fn: () => Promise<unknown>): Promise<T[]> {
  const seen: T[] = [];
  const on = (m: unknown) => void seen.push(m as T);
  subscribe(name, on);
  try {
    await fn();
  } finally {
    unsubscribe(name, on);
  }
  return seen;
}

/** Every (phase, context) of the tracing channel `name` while `fn` runs, contexts snapshotted at publish time. */
async function traced<T>(name: string, fn: () => Promise<unknown>): Promise<[string, T][]> {
  const seen: [string, T][] = [];
  const tc = tracingChannel(name);
  const handlers = Object.fromEntries(['start', 'end', 'asyncStart', 'asyncEnd', 'error'].map((phase) => [phase, (m: unknown) => void seen.push([phase, { ...(m as object) } as T])]));
  tc.subscribe(handlers as never);
  try {
    await fn().catch(() => undefined);
  } finally {
    tc.unsubscribe(handlers as never);
  }
  return seen;
}

describe('tenferro:admission', () => {
  it('one granted event per admission, with the request, the domain and the wait', async () => {
    const events = await plain<AdmissionEvent>(DIAGNOSTICS_CHANNELS.admission, () => backend.install((ctx) => ctx.run(echo, 1)));
    expect(events).toHaveLength(1);
    const e = events[0]!;
    const info = backend.executionInfo();
    expect(e).toMatchObject({ op: 'CpuBackend.install', via: 'arbiter', outcome: 'granted', exclusive: false, cpus: info.domainCpus, domainId: Number(info.domainId) });
    expect(e.waitNs).toBeGreaterThanOrEqual(0);
    expect(typeof e.time).toBe('bigint');
  });

  it('an aborted wait is reported as aborted', async () => {
    const c = new AbortController();
    c.abort(new Error('stop'));
    // Aborted before admission: nothing was requested, nothing is published.
    expect(await plain(DIAGNOSTICS_CHANNELS.admission, () => backend.install(() => 1, { signal: c.signal }).catch(() => undefined))).toEqual([]);
    // Aborted while queued behind a held permit.
    let release!: () => void;
    const held = backend.install(() => new Promise<void>((r) => (release = r)));
    const waiting = new AbortController();
    const events = await plain<AdmissionEvent>(DIAGNOSTICS_CHANNELS.admission, async () => {
      const queued = backend.install(() => 2, { signal: waiting.signal });
      waiting.abort(new Error('enough'));
      await expectCode(queued, 'AdmissionAborted');
    });
    release();
    await held;
    expect(events.map((e) => e.outcome)).toEqual(['aborted']);
  });
});

describe('tenferro:execution (tracing channel)', () => {
  it('start and asyncEnd of each executor entry, with domain, mode, budget, owner and duration', async () => {
    const seen = await traced<ExecutionEvent>(DIAGNOSTICS_CHANNELS.execution, () => backend.install((ctx) => ctx.run(echo, 3)));
    expect(seen.map(([phase]) => phase)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    const [, start] = seen[0]!;
    const [, done] = seen[3]!;
    expect(start).toMatchObject({ op: 'CpuBackend.install', mode: 'sequential', threadBudget: 1, domainCpus: backend.executionInfo().domainCpus });
    expect(start.durationNs).toBeUndefined();
    expect(done.owner).toBe(start.owner);
    expect(done.outcome).toBe('ok');
    expect(done.durationNs).toBeGreaterThan(0);
  });

  it('a failing body publishes error with the error, then the end with outcome error', async () => {
    const seen = await traced<ExecutionEvent>(DIAGNOSTICS_CHANNELS.execution, () =>
      backend.install(() => {
        throw new Error('body failed');
      }),
    );
    expect(seen.map(([phase]) => phase)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    expect((seen[2]![1].error as Error).message).toBe('body failed');
    expect(seen[4]![1].outcome).toBe('error');
  });
});

describe('tenferro:provider (tracing channel)', () => {
  it('a GEMM: provider name, dtype, shapes and FLOPs 2·m·n·k (8·m·n·k complex) — for any shape', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 }), fc.constantFrom('f64', 'f32', 'c64'), async (m, k, n, dtype) => {
        const size = (r: number, c: number) => r * c * (dtype === 'c64' ? 2 : 1);
        const a = Tensor.fromArray(dtype, [m, k], Array.from({ length: size(m, k) }, (_, i) => i % 3));
        const b = Tensor.fromArray(dtype, [k, n], Array.from({ length: size(k, n) }, (_, i) => i % 5));
        const seen = await traced<ProviderEvent>(DIAGNOSTICS_CHANNELS.provider, () => backend.matmul(a, b));
        const gemm = seen.filter(([phase, e]) => phase === 'asyncEnd' && e.slot === 'gemm');
        expect(gemm).toHaveLength(1);
        const e = gemm[0]![1];
        expect(e.provider).toBe(backend.providerBundle().gemm.name);
        expect(e.dtype).toBe(dtype);
        expect(e.outcome).toBe('executed');
        expect(e.flops).toBe((dtype === 'c64' ? 8 : 2) * m * n * k);
        expect(e.durationNs).toBeGreaterThan(0);
        // Shapes as the GEMM sees them (m×k, k×n, m×n, possibly transposed by the plan).
        expect(e.shapes.map((s) => s.reduce((x, y) => x * y, 1))).toEqual([m * k, k * n, m * n]);
      }),
      { numRuns: 15 },
    );
  });

  it('a decline is reported with its reason, and the retry as a second call', async () => {
    let calls = 0;
    const declining: CpuGemmProvider = {
      name: 'declines once',
      executionCapabilities: () => referenceGemmProvider.executionCapabilities(),
      async gemm(ctx, req) {
        return ++calls === 1 ? Unsupported.layout('lhs') : referenceGemmProvider.gemm(ctx, req);
      },
    };
    const b = backend.withProviderBundle(CpuProviderBundle.customBuilder().gemmProvider(declining).layoutTransformProvider(referenceLayoutProvider).build());
    const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    const seen = await traced<ProviderEvent>(DIAGNOSTICS_CHANNELS.provider, () => b.matmul(x, x));
    const ends = seen.filter(([phase]) => phase === 'asyncEnd').map(([, e]) => e);
    expect(ends[0]).toMatchObject({ slot: 'gemm', provider: 'declines once', outcome: 'declined', declineReason: { kind: 'layout', operand: 'lhs' } });
    expect(ends.at(-1)).toMatchObject({ slot: 'gemm', outcome: 'executed' });
  });
});

describe('tenferro:pool', () => {
  it('a miss, then a hit for the same size; evictions when the cap shrinks', async () => {
    const b = await CpuBackend.create({ threads: 1 });
    try {
      const x = Tensor.fromArray('f64', [8, 8], Array.from({ length: 64 }, (_, i) => i));
      const events = await plain<PoolEvent>(DIAGNOSTICS_CHANNELS.pool, async () => {
        (await b.matmul(x, x)).dispose();
        (await b.matmul(x, x)).dispose();
        b.setBufferPoolLimitBytes(0);
      });
      const kinds = events.map((e) => e.kind);
      expect(kinds[0]).toBe('miss');
      expect(kinds).toContain('hit');
      expect(kinds.at(-1)).toBe('evict');
      expect(events.every((e) => e.dtype === 'f64' && e.bytes >= 64 * 8)).toBe(true);
      expect(events.at(-1)!.retainedBytes).toBe(0);
    } finally {
      await b.close();
    }
  });
});

describe('tenferro:task', () => {
  const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');
  const noop = kernel('noop');

  it("one event per kernel task, its spans placed on one clock around what the kernel did", async () => {
    const flags = new Int32Array(new SharedArrayBuffer(8));
    let entered = 0n;
    let released = 0n;
    const events = await plain<TaskEvent>(DIAGNOSTICS_CHANNELS.task, async () => {
      const running = backend.install((ctx) => ctx.run(holdUntil, { buffer: flags.buffer as SharedArrayBuffer, index: 0, enteredIndex: 1, timeoutMs: 10_000 }));
      await reached(flags, 1);
      entered = process.hrtime.bigint();
      released = process.hrtime.bigint();
      Atomics.store(flags, 0, 1);
      Atomics.notify(flags, 0);
      expect(await running).toBe(true);
    });
    expect(events).toHaveLength(1);
    const e = events[0]!;
    expect(e).toMatchObject({ op: 'CpuExecutionContext.run', kernel: 'holdUntil', worker: 0, fanOut: false, tid: backend.executionInfo().workers[0]!.tid });
    const began = e.postedAt + BigInt(Math.round(e.startLagNs));
    const answered = began + BigInt(Math.round(e.runNs));
    // The kernel began before the main thread saw it enter, and answered after it was released.
    expect(began).toBeLessThanOrEqual(entered + 1_000n);
    expect(answered + 1_000n).toBeGreaterThanOrEqual(released);
    expect(answered + BigInt(Math.round(e.wakeNs))).toBeLessThanOrEqual(e.time + 1_000n);
    expect(e.time).toBeGreaterThanOrEqual(released);
    expect(() => structuredClone(e)).not.toThrow();
  });

  it('a matmul publishes the kernel tasks it ran', async () => {
    const x = Tensor.fromArray('f64', [4, 4], Array.from({ length: 16 }, (_, i) => i));
    const events = await plain<TaskEvent>(DIAGNOSTICS_CHANNELS.task, () => backend.matmul(x, x));
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events.every((e) => e.startLagNs >= 0 && e.runNs >= 0 && e.wakeNs >= 0)).toBe(true);
    expect(DIAGNOSTICS_CHANNELS.task).toBe('tenferro:task');
  });

  it.skipIf(discoverCpuTopology().allowedCpus.size < 2)('the lanes of a fan-out are told apart, each marked fanOut (needs 2 CPUs: a pool of 2)', async () => {
    const b = await CpuBackend.create({ threads: 2 });
    try {
      const events = await plain<TaskEvent>(DIAGNOSTICS_CHANNELS.task, () => b.withBackendSession((s) => s.context.workerPool()!.map(noop, [1, 2])));
      expect(events).toHaveLength(2);
      expect(new Set(events.map((e) => e.worker))).toEqual(new Set([0, 1]));
      expect(events.every((e) => e.fanOut && e.op === 'CpuExecutionContext.workerPool')).toBe(true);
      // Alone afterwards: a sequential task is not a lane of a fan-out.
      const after = await plain<TaskEvent>(DIAGNOSTICS_CHANNELS.task, () => b.install((ctx) => ctx.run(noop)));
      expect(after.map((e) => e.fanOut)).toEqual([false]);
    } finally {
      await b.close();
    }
  });
});

describe('tenferro:task watch: how the main thread waits for a task that runs alone', () => {
  const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');
  const noop = kernel('noop');
  /** `count` tasks of at least 6 ms each (a hold that times out), each posted as `threads` threads; their events. */
  const longTasks = (b: CpuBackend, threads: number, count: number) =>
    plain<TaskEvent>(DIAGNOSTICS_CHANNELS.task, () =>
      b.withBackendSession(async (s) => {
        const flags = new Int32Array(new SharedArrayBuffer(8));
        for (let i = 0; i < count; i++) {
          expect(await s.context.run(holdUntil, { buffer: flags.buffer as SharedArrayBuffer, index: 0, enteredIndex: 1, timeoutMs: 6 }, { threads })).toBe(false);
        }
      }),
    );

  it('short tasks are seen in the blocking poll (a spinning worker answers a no-op within it, in one of twenty tries at least)', async () => {
    const events = await plain<TaskEvent>(DIAGNOSTICS_CHANNELS.task, () =>
      backend.install(async (ctx) => {
        for (let i = 0; i < 20; i++) await ctx.run(noop);
      }),
    );
    expect(events).toHaveLength(20);
    expect(events.map((e) => e.watch)).toContain('poll');
  });

  it.skipIf(discoverCpuTopology().effectiveCapacity.cpus < 2)(
    'tasks of 4 ms or more that leave one of the process\'s CPUs free wake the main thread early; ones that take every CPU park until answered (needs 2 CPUs)',
    async () => {
      const b = await CpuBackend.create({ threads: 2 });
      try {
        // The watch follows the worker's moving average of round trips (1/8 per task, from 20 µs):
        // above 4 ms from the tenth task of 6 ms on.
        const spare = await longTasks(b, 1, 14);
        expect(spare.slice(-4).map((e) => e.watch)).toEqual(['earlyWake', 'earlyWake', 'earlyWake', 'earlyWake']);
        expect(spare.every((e) => e.threads === 1 && !e.fanOut)).toBe(true);
        // Posted as 2 threads on 2 CPUs: none left for the main thread's turns, and 6 ms is below the 24 ms of that case.
        const crowded = await longTasks(b, 2, 14);
        expect(crowded.slice(-4).map((e) => e.watch)).toEqual(['park', 'park', 'park', 'park']);
      } finally {
        await b.close();
      }
    },
  );
});

describe('CpuExecutionContext.run options (KernelRunOptions)', () => {
  const noop = kernel('noop');

  it.skipIf(discoverCpuTopology().allowedCpus.size < 2)('a task posted with { threads: 1 } in an Inner context of 2 native threads is a one-thread task; by default it keeps 2 busy; lanes 1 each (needs 2 CPUs)', async () => {
    const b = await CpuBackend.create({ threads: 2 });
    try {
      const events = await plain<TaskEvent>(DIAGNOSTICS_CHANNELS.task, () =>
        b.withBackendSession(async (s) => {
          const ctx = s.context;
          expect(ctx.nativeThreadCount()).toBe(2);
          await ctx.run(noop);
          await ctx.run(noop, undefined, { threads: 1 });
          await ctx.run(noop, undefined, { threads: 2 });
          await ctx.run(noop, undefined, {});
          await ctx.workerPool()!.map(noop, [1, 2]);
        }),
      );
      expect(events.map((e) => e.threads)).toEqual([2, 1, 2, 2, 1, 1]);
    } finally {
      await b.close();
    }
  });

  it('bad options are InvalidArgument before anything is posted: unknown keys, non-integers, 0, more than nativeThreadCount()', async () => {
    const events = await plain<TaskEvent>(DIAGNOSTICS_CHANNELS.task, () =>
      backend.install(async (ctx) => {
        expect(ctx.nativeThreadCount()).toBe(1);
        for (const bad of [{ threads: 0 }, { threads: 1.5 }, { threads: 2 }, { threads: '1' }, { thread: 1 }, null, 1]) {
          const e = await expectCode(ctx.run(noop, undefined, bad as never), 'InvalidArgument', 'Validation');
          expect(e.op).toBe('CpuExecutionContext.run');
        }
        expect(await ctx.run(noop, undefined, { threads: 1 })).toBeUndefined();
      }),
    );
    expect(events.map((e) => e.threads)).toEqual([1]);
  });
});

describe('forwardDiagnostics', () => {
  it('forwards every channel in one cloneable shape, stamped with hrtime and the threadId', async () => {
    const got: ForwardedDiagnosticsEvent[] = [];
    const stop = forwardDiagnostics((e) => got.push(e));
    const before = process.hrtime.bigint();
    const x = Tensor.fromArray('f64', [3, 3], Array.from({ length: 9 }, (_, i) => i));
    (await backend.matmul(x, x)).dispose();
    stop();
    (await backend.matmul(x, x)).dispose(); // after stop: nothing more
    const channels = new Set(got.map((e) => e.channel));
    expect(channels).toEqual(new Set(['tenferro:admission', 'tenferro:execution', 'tenferro:provider', 'tenferro:pool', 'tenferro:task']));
    for (const e of got) {
      expect(e.threadId).toBe(0);
      expect(e.time).toBeGreaterThanOrEqual(before);
      expect(() => structuredClone(e)).not.toThrow();
    }
    expect(got.filter((e) => e.channel === 'tenferro:execution').map((e) => e.phase)).toEqual(['start', 'end']);
    const count = got.length;
    expect(got).toHaveLength(count);
  });

  it('a failing execution forwards its error as name, message and code', async () => {
    const got: ForwardedDiagnosticsEvent[] = [];
    const stop = forwardDiagnostics((e) => got.push(e), { channels: ['execution'] });
    await backend.install(() => Promise.reject(new Error('nope'))).catch(() => undefined);
    stop();
    const error = got.find((e) => e.phase === 'error');
    expect(error?.payload.error).toEqual({ name: 'Error', message: 'nope', code: undefined });
    expect(new Set(got.map((e) => e.channel))).toEqual(new Set(['tenferro:execution']));
  });

  it('a sink that throws is unsubscribed, and the operation is unaffected', async () => {
    let calls = 0;
    forwardDiagnostics(() => {
      calls++;
      throw new Error('closed port');
    });
    expect(await backend.install((ctx) => ctx.run(echo, 9))).toBe(9);
    const after = calls;
    expect(after).toBe(1);
    await backend.install((ctx) => ctx.run(echo, 10));
    expect(calls).toBe(after);
  });

  it('bad input is an InvalidArgument before anything is subscribed', () => {
    expectThrows(() => forwardDiagnostics(42 as never), 'InvalidArgument');
    expectThrows(() => forwardDiagnostics({} as never), 'InvalidArgument');
    expectThrows(() => forwardDiagnostics(() => undefined, { channel: ['pool'] } as never), 'InvalidArgument');
    expectThrows(() => forwardDiagnostics(() => undefined, { channels: ['gpu'] } as never), 'InvalidArgument');
    expectThrows(() => forwardDiagnostics(() => undefined, 'all' as never), 'InvalidArgument');
  });
});

describe('no subscriber, no work', () => {
  it('the channels have no subscriber unless someone subscribes, and forwarding stops cleanly', () => {
    const tc = tracingChannel(DIAGNOSTICS_CHANNELS.execution);
    expect(tc.start.hasSubscribers).toBe(false);
    const stop = forwardDiagnostics(() => undefined, { channels: ['execution'] });
    expect(tc.start.hasSubscribers).toBe(true);
    stop();
    stop();
    expect(tc.start.hasSubscribers).toBe(false);
  });
});
