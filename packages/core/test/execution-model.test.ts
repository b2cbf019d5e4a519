import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuDomainExecutor,
  type CpuExecutionContext,
  type CpuGemmProvider,
  type CpuLayoutTransformProvider,
  type CpuProviderExecutionCapabilities,
  CpuProviderBundle,
  discoverCpuTopology,
  ExternalCpuDomain,
  processArbiter,
  referenceGemmProvider,
  referenceLayoutProvider,
  Tensor,
  WorkerThreadsDomainExecutor,
} from '../src/index.js';
import { expectCode, kernel, onePerCpuTopology, reached, until } from './helpers.js';

const noop = kernel('noop');
const whoami = kernel<undefined, { workerIndex: number; tid: number }>('whoami');
const rendezvous = kernel<{ buffer: SharedArrayBuffer; mine: number; theirs: number; timeoutMs: number }, boolean>('rendezvous');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;
let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2 });
});
afterAll(async () => {
  await backend.close();
});

describe('non-reentrancy (R89–R95)', () => {
  it('install inside install is Reentered, before any permit is requested', async () => {
    const e = await backend.install(async () => {
      const before = processArbiter().stats();
      const error = await expectCode(backend.install(() => 1), 'Reentered', 'RuntimeState');
      expect(processArbiter().stats()).toEqual(before);
      return error;
    });
    expect(e.op).toBe('CpuBackend.install');
  });

  it('every entry point rejects re-entry: session, scope-in-install, outer lanes, a clone, another placement', async () => {
    await backend.withBackendSession(async () => {
      await expectCode(backend.install(() => 1), 'Reentered');
      await expectCode(backend.clone().withBackendSession(() => 1), 'Reentered');
      await expectCode(backend.withOuterLanes(2, () => undefined), 'Reentered');
      await expectCode(backend.forPlacement('allAllowed').install(() => 1), 'Reentered');
      await expectCode(backend.withExecutionScope(() => 1), 'ExecutionAlreadyActive', 'RuntimeState');
    });
  });

  it('a child promise started concurrently inside an execution is rejected', async () => {
    const results = await backend.install(async (ctx) => {
      return Promise.allSettled([ctx.run(noop), backend.install(() => 'child')]);
    });
    expect(results[0].status).toBe('fulfilled');
    expect(results[1].status).toBe('rejected');
    expect((results[1] as PromiseRejectedResult).reason.code).toBe('Reentered');
  });

  it('unrelated top-level executions interleaving on the event loop are not re-entry', async () => {
    const order: string[] = [];
    const run = (name: string) =>
      backend.install(async (ctx) => {
        order.push(`${name}:start`);
        await ctx.run(noop);
        order.push(`${name}:end`);
        return name;
      });
    expect(await Promise.all([run('a'), run('b'), run('c')])).toEqual(['a', 'b', 'c']);
    // Same CPU set: admitted one after another, in FIFO order.
    expect(order).toEqual(['a:start', 'a:end', 'b:start', 'b:end', 'c:start', 'c:end']);
  });

  it('work scheduled inside an execution that runs after it ended is a new top-level execution', async () => {
    let later: Promise<string> | undefined;
    await backend.install(() => {
      later = new Promise<void>((r) => setImmediate(r)).then(async () => {
        await until(() => processArbiter().stats().active === 0);
        return backend.install(() => 'fresh');
      });
    });
    expect(await later).toBe('fresh');
  });

  it('entering the backend from an engine worker while its execution is active is Reentered', async () => {
    const nested = kernel<{ coreUrl: string }, string>('nestedBackendEntry');
    const coreUrl = new URL('../dist/index.js', import.meta.url).href;
    expect(await backend.install((ctx) => ctx.run(nested, { coreUrl }))).toBe('Reentered');
  });

  it('the permit is released on success, error and exception', async () => {
    await backend.install(() => 1);
    await expect(backend.install(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      backend.install(() => {
        throw new TypeError('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
    expect(await backend.install(() => 'after')).toBe('after');
  });
});

describe('execution scope (execution_scope.rs, R83–R87)', () => {
  it('16 operations inside one scope add exactly one executor entry; one after it adds one more', async () => {
    const witness = backend.clone();
    const installs = () => backend.executionInfo().executorEntries.installs;
    const before = installs();
    const value = await backend.withExecutionScope(async () => {
      let sum = 0;
      for (let i = 0; i < 8; i++) sum += await witness.install(async (ctx) => (await ctx.run(noop), 1));
      for (let i = 0; i < 8; i++) {
        sum += await witness.withBackendSession(async (s) => {
          await s.context.run(noop);
          return s.run('sequential', () => 1);
        });
      }
      return sum;
    });
    expect(value).toBe(16);
    expect(installs() - before).toBe(1);
    await witness.install((ctx) => ctx.run(noop));
    expect(installs() - before).toBe(2);
  });

  it('a different witness inside the scope is ScopeWitnessMismatch', async () => {
    const other = await CpuBackend.create({ threads: 1 });
    try {
      await backend.withExecutionScope(async () => {
        await expectCode(other.install(() => 1), 'ScopeWitnessMismatch', 'RuntimeState');
        await expectCode(backend.forPlacement('auto').install(() => 1), 'ScopeWitnessMismatch');
      });
    } finally {
      await other.close();
    }
  });

  it('a nested scope, or a scope inside an execution, is ExecutionAlreadyActive', async () => {
    await backend.withExecutionScope(async () => {
      await expectCode(backend.withExecutionScope(() => 1), 'ExecutionAlreadyActive', 'RuntimeState');
    });
    await backend.install(async () => {
      await expectCode(backend.withExecutionScope(() => 1), 'ExecutionAlreadyActive');
    });
  });

  it('Promise.all of operations inside one scope: they take turns in call order on the scope\'s one entry (R87 on Node)', async () => {
    const before = backend.executionInfo().executorEntries.installs;
    const order: string[] = [];
    const step = (name: string) => backend.install(async (ctx) => {
      order.push(`${name} start`);
      await ctx.run(noop);
      order.push(`${name} end`);
      return name;
    });
    const results = await backend.withExecutionScope(() => Promise.all([step('a'), step('b'), step('c')]));
    expect(results).toEqual(['a', 'b', 'c']);
    expect(order).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
    expect(backend.executionInfo().executorEntries.installs - before).toBe(1);
  });

  it('an operation still queued on a scope when its callback returns is refused with ContextExpired', async () => {
    let late: Promise<unknown> | undefined;
    await backend.withExecutionScope(async () => {
      const first = backend.install((ctx) => ctx.run(noop));
      late = backend.install(() => 'late');
      void late.catch(() => undefined);
      await Promise.resolve();
    });
    await expectCode(late!, 'ContextExpired', 'RuntimeState');
    expect(await backend.install(() => 'after')).toBe('after');
  });

  it('an operation nested in a scoped operation is Reentered; outer lanes inside a scope are Scheduling', async () => {
    await backend.withExecutionScope(async () => {
      await backend.install(async () => {
        await expectCode(backend.install(() => 1), 'Reentered');
      });
      await expectCode(backend.withOuterLanes(2, () => undefined), 'Scheduling');
      expect(await backend.install(() => 'still usable')).toBe('still usable');
    });
  });

  it('returns the callback value unchanged, even an error object', async () => {
    const err = new Error('returned, not thrown');
    expect(await backend.withExecutionScope(() => err)).toBe(err);
    const obj = { a: 1 };
    expect(await backend.withExecutionScope(async () => obj)).toBe(obj);
  });

  it('an exception releases scope and permit first; the scope can be opened again', async () => {
    await expect(
      backend.withExecutionScope(async () => {
        throw new RangeError('inside');
      }),
    ).rejects.toThrow('inside');
    expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
    expect(await backend.withExecutionScope(() => backend.install(() => 'again'))).toBe('again');
    expect(await backend.install(() => 'outside')).toBe('outside');
  });

  it('backend entry from a child started inside the scope while an operation runs is rejected', async () => {
    await backend.withExecutionScope(async () => {
      const results = await backend.install(async (ctx) =>
        Promise.allSettled([ctx.run(noop), backend.clone().install(() => 1)]),
      );
      expect((results[1] as PromiseRejectedResult).reason.code).toBe('Reentered');
    });
  });
});

describe('contexts and modes (R68–R76)', () => {
  it.skipIf(!twoCpus)('install is Sequential with no pool; a session at budget 2 is Inner with a pool of 2 (needs 2 CPUs: budget 2)', async () => {
    await backend.install((ctx) => {
      expect(ctx.parallelMode).toBe('sequential');
      expect(ctx.workerPool()).toBeUndefined();
      expect(ctx.nativeThreadCount()).toBe(1);
      expect(ctx.threadBudget).toBe(2);
      expect(ctx.cpus?.toString()).toBe(backend.executionInfo().domainCpus);
      expect(ctx.admissionMode).toBe('cooperativeCpuSet');
    });
    const tids = await backend.withBackendSession(async (s) => {
      expect(s.context.parallelMode).toBe('inner');
      expect(s.context.nativeThreadCount()).toBe(2);
      const pool = s.context.workerPool()!;
      expect(pool.size).toBe(2);
      const seen = await pool.map(whoami, [undefined, undefined, undefined, undefined]);
      await expectCode(pool.runOn(2, noop), 'Scheduling');
      return seen.map((w) => w.tid);
    });
    expect(new Set(tids)).toEqual(new Set(backend.executionInfo().workers.map((w) => w.tid)));
  });

  it('a one-thread backend never exposes a pool (R75)', async () => {
    const one = await CpuBackend.create({ threads: 1 });
    try {
      await one.withBackendSession((s) => {
        expect(s.context.parallelMode).toBe('sequential');
        expect(s.context.workerPool()).toBeUndefined();
      });
      await expectCode(one.withOuterLanes(3, () => undefined), 'Scheduling', 'BackendFailure');
    } finally {
      await one.close();
    }
  });

  it.skipIf(!twoCpus)('outer lanes: min(N, budget) lanes, each job once with a Sequential context on its lane, one submit (needs 2 CPUs: budget 2)', async () => {
    const before = backend.executionInfo().executorEntries;
    const seen: { index: number; worker: number; mode: string; pool: boolean }[] = [];
    await backend.withOuterLanes(5, async (ctx, index) => {
      const w = await ctx.run(whoami);
      seen.push({ index, worker: w.workerIndex, mode: ctx.parallelMode, pool: ctx.workerPool() !== undefined });
    });
    const after = backend.executionInfo().executorEntries;
    expect(after.submits - before.submits).toBe(1);
    expect(after.installs - before.installs).toBe(0);
    expect(seen.map((s) => s.index).sort()).toEqual([0, 1, 2, 3, 4]);
    for (const s of seen) {
      expect(s.worker).toBe(s.index % 2);
      expect(s.mode).toBe('sequential');
      expect(s.pool).toBe(false);
    }
  });

  it('session.run with Outer is Scheduling; a context used after its execution is ContextExpired', async () => {
    let kept: Parameters<Parameters<CpuBackend['install']>[0]>[0] | undefined;
    await backend.withBackendSession(async (s) => {
      await expectCode(s.run('outer', () => 1), 'Scheduling');
      kept = s.context;
    });
    await expectCode(kept!.run(noop), 'ContextExpired', 'RuntimeState');
  });
});

describe('pool access is gated exactly (R75)', () => {
  /** A GEMM provider (the reference one underneath) declaring `caps` and recording the context of every call. */
  function recording(caps: Partial<CpuProviderExecutionCapabilities>) {
    const seen: { mode: string; pool: number | undefined; native: number }[] = [];
    const provider: CpuGemmProvider = {
      ...referenceGemmProvider,
      name: 'recording',
      executionCapabilities: () => ({ ...referenceGemmProvider.executionCapabilities(), ...caps }),
      async gemm(ctx, req) {
        seen.push({ mode: ctx.parallelMode, pool: ctx.workerPool()?.size, native: ctx.nativeThreadCount() });
        return referenceGemmProvider.gemm(ctx, req);
      },
    };
    return { bundle: CpuProviderBundle.builder('faer').gemmProvider(provider).build(), seen };
  }
  const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
  const eye = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);

  it.skipIf(!twoCpus)('a Sequential context has no pool wherever it comes from, also inside an Inner session (needs 2 CPUs: budget 2)', async () => {
    const contexts: { mode: string; pool: boolean; native: number }[] = [];
    const note = (ctx: CpuExecutionContext) => void contexts.push({ mode: ctx.parallelMode, pool: ctx.workerPool() !== undefined, native: ctx.nativeThreadCount() });
    await backend.install(note);
    await backend.withBackendSession(async (s) => {
      note(s.context); // the session's own Inner context (control: it has the pool)
      await s.run('sequential', note);
      await s.run('inner', note);
    });
    await backend.withOuterLanes(2, note);
    expect(contexts).toEqual([
      { mode: 'sequential', pool: false, native: 1 },
      { mode: 'inner', pool: true, native: 2 },
      { mode: 'sequential', pool: false, native: 1 },
      { mode: 'inner', pool: true, native: 2 },
      { mode: 'sequential', pool: false, native: 1 },
      { mode: 'sequential', pool: false, native: 1 },
    ]);
  });

  it.skipIf(!twoCpus)('a provider dispatched Sequential gets a context without a pool, even from an Inner session, where the session context is not reused for it (needs 2 CPUs: budget 2)', async () => {
    const { bundle, seen } = recording({ acceptsInner: false });
    const h = backend.withProviderBundle(bundle);
    await h.matmul(x, eye);
    await h.withBackendSession(async (s) => {
      expect(s.context.workerPool()?.size).toBe(2);
      await s.dotGeneral(x, eye, { contracting: [[1], [0]] });
      await s.dotGeneralInto(Tensor.fromArray('f64', [2, 2], [0, 0, 0, 0]), x, eye, { contracting: [[1], [0]] });
    });
    expect(seen).toEqual(Array.from({ length: 3 }, () => ({ mode: 'sequential', pool: undefined, native: 1 })));
  });

  it.skipIf(!twoCpus)('a layout provider dispatched Sequential while the GEMM runs Inner gets its own context without a pool (needs 2 CPUs: budget 2)', async () => {
    const layoutSeen: { mode: string; pool: number | undefined; native: number }[] = [];
    const layout: CpuLayoutTransformProvider = {
      ...referenceLayoutProvider,
      name: 'recording layout',
      executionCapabilities: () => ({ ...referenceLayoutProvider.executionCapabilities(), acceptsInner: false }),
      async materialize(ctx, req) {
        layoutSeen.push({ mode: ctx.parallelMode, pool: ctx.workerPool()?.size, native: ctx.nativeThreadCount() });
        return referenceLayoutProvider.materialize(ctx, req);
      },
    };
    const gemm = recording({ threadCount: 'perCallUpperBound', placement: 'engineWorkers' });
    const h = backend.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(gemm.bundle.gemm).layoutTransformProvider(layout).build());
    // the two contracted axes of each padded view fuse neither on it nor on the other: the canonical path materialises both operands
    const lhs = Tensor.fromArray('f64', [2, 4, 4], Array.from({ length: 32 }, (_, i) => i)).slice(undefined, [0, 3]);
    const rhs = Tensor.fromArray('f64', [5, 3, 5], Array.from({ length: 75 }, (_, i) => i % 7)).slice([0, 4]);
    await h.withBackendSession((s) => s.dotGeneral(lhs, rhs, { contracting: [[1, 2], [1, 0]] }));
    expect(gemm.seen).toEqual([{ mode: 'inner', pool: 2, native: 2 }]);
    expect(layoutSeen).toEqual(Array.from({ length: 2 }, () => ({ mode: 'sequential', pool: undefined, native: 1 })));
  });

  it.skipIf(!twoCpus)('a perCallUpperBound provider dispatched Inner at budget 2 gets the pool of 2 (control; needs 2 CPUs: budget 2)', async () => {
    const { bundle, seen } = recording({ threadCount: 'perCallUpperBound', placement: 'engineWorkers' });
    const h = backend.withProviderBundle(bundle);
    await h.matmul(x, eye);
    await h.withBackendSession((s) => s.dotGeneral(x, eye, { contracting: [[1], [0]] }));
    expect(seen).toEqual(Array.from({ length: 2 }, () => ({ mode: 'inner', pool: 2, native: 2 })));
  });

  it('an Inner context on an executor that offers no pool has none, and native work gets one thread', async () => {
    const real = await WorkerThreadsDomainExecutor.create({ workers: 2 });
    const noPool: CpuDomainExecutor = {
      capabilities: () => ({ ...real.capabilities(), innerParallelism: 'none' }),
      install: (job) => real.install(job),
      submit: (jobs) => real.submit(jobs),
      workerPool: () => real.workerPool(),
      runKernel: (task) => real.runKernel(task),
      scopeRecord: () => real.scopeRecord(),
    };
    const b = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, noPool, 2)] });
    try {
      const seen = await b.withBackendSession((s) => s.run('inner', (ctx) => ({ mode: ctx.parallelMode, budget: ctx.threadBudget, pool: ctx.workerPool(), native: ctx.nativeThreadCount() })));
      expect(seen).toEqual({ mode: 'inner', budget: 2, pool: undefined, native: 1 });
    } finally {
      await b.close();
      await real.close();
    }
  });

  it("an executor learns how many threads each task may keep busy: the context's native thread count for ctx.run, one for a pool lane", async () => {
    const real = await WorkerThreadsDomainExecutor.create({ workers: 2 });
    const threads: (number | undefined)[] = [];
    const recording: CpuDomainExecutor = {
      capabilities: () => real.capabilities(),
      install: (job) => real.install(job),
      submit: (jobs) => real.submit(jobs),
      workerPool: () => real.workerPool(),
      runKernel: (task) => (threads.push(task.threads), real.runKernel(task)),
      scopeRecord: () => real.scopeRecord(),
    };
    const b = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, recording, 2)] });
    try {
      const native = await b.withBackendSession((s) =>
        s.run('inner', async (ctx) => {
          await ctx.run(noop);
          await ctx.workerPool()!.runOn(1, noop);
          return ctx.nativeThreadCount();
        }),
      );
      await b.withBackendSession((s) => s.run('sequential', (ctx) => ctx.run(noop)));
      expect(native).toBe(2);
      expect(threads).toEqual([2, 1, 1]);
    } finally {
      await b.close();
      await real.close();
    }
  });

  // A provider whose thread control is `sequential` (R55: enforced limit 1) but which accepts Inner is
  // dispatched Inner above budget 1 (R62); the context it is handed is capped at its limit (R75).
  it.skipIf(!twoCpus)('a provider declaring sequential threads never receives a pool or more than one native thread (needs 2 CPUs: budget 2)', async () => {
    const { bundle, seen } = recording({ threadCount: 'sequential', placement: 'callingThread' });
    const h = backend.withProviderBundle(bundle);
    await h.matmul(x, eye);
    await h.withBackendSession((s) => s.dotGeneral(x, eye, { contracting: [[1], [0]] }));
    expect(seen).toHaveLength(2);
    for (const c of seen) expect({ pool: c.pool, native: c.native }).toEqual({ pool: undefined, native: 1 });
  });
});

describe('arbitration between engines (R27)', () => {
  it.skipIf(!twoCpus)('disjoint CPU sets run concurrently; overlapping sets never do (needs 2 CPUs: two disjoint NUMA nodes)', async () => {
    const topology = onePerCpuTopology();
    const [n0, n1] = topology.nodes;
    const b = await CpuBackend.create({ topology, threads: 1, placement: { numaNode: n0!.id } });
    try {
      const b1 = b.forPlacement({ numaNode: n1!.id });
      const all = b.forPlacement('allAllowed');
      await Promise.all([b1.ready(), all.ready()]);

      // Disjoint: both kernels are inside their rendezvous at the same time.
      const flags = new SharedArrayBuffer(8);
      const both = await Promise.all([
        b.install((ctx) => ctx.run(rendezvous, { buffer: flags, mine: 0, theirs: 1, timeoutMs: 10_000 })),
        b1.install((ctx) => ctx.run(rendezvous, { buffer: flags, mine: 1, theirs: 0, timeoutMs: 10_000 })),
      ]);
      expect(both).toEqual([true, true]);

      // Overlapping: while node 0 holds its permit, the all-allowed execution waits in the queue.
      const gate = new SharedArrayBuffer(12);
      const g = new Int32Array(gate);
      const first = b.install((ctx) => ctx.run(holdUntil, { buffer: gate, index: 0, enteredIndex: 1, timeoutMs: 10_000 }));
      await reached(g, 1);
      let secondStarted = false;
      const second = all.install(async (ctx) => {
        secondStarted = true;
        return ctx.run(holdUntil, { buffer: gate, index: 0, enteredIndex: 2, timeoutMs: 10_000 });
      });
      await until(() => processArbiter().stats().waiting === 1);
      expect(secondStarted).toBe(false);
      expect(Atomics.load(g, 2)).toBe(0);
      Atomics.store(g, 0, 1);
      Atomics.notify(g, 0);
      expect(await first).toBe(true);
      expect(await second).toBe(true);
      expect(secondStarted).toBe(true);
    } finally {
      await b.close();
    }
  });
});
