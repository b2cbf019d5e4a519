import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, ExternalCpuDomain, WorkerThreadsDomainExecutor } from '../src/index.js';
import { expectCode, gate, kernel, until } from './helpers.js';

/**
 * #35, defects 1–3: when a scope or session callback settles, no kernel task of an operation that
 * began inside it runs afterwards (it is refused with ContextExpired), the tasks already posted are
 * awaited before the permit or guard is released, and a caller-managed guard hands over to the
 * longest waiter whichever handle or domain it came from. Written as an application would write the
 * code; every wait is a latch, never a sleep.
 */
const countRun = kernel<{ buffer: SharedArrayBuffer; index: number; runningIndex: number; overlapIndex: number }, void>('countRun');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');

/** A promise the test resolves by hand: the application's own `later`. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Shared words: [0] runs of the late operation, [1] runs of the other backend, [2] running, [3] overlap seen. */
function counters() {
  const words = new Int32Array(new SharedArrayBuffer(16));
  return {
    words,
    late: { buffer: words.buffer as SharedArrayBuffer, index: 0, runningIndex: 2, overlapIndex: 3 },
    other: { buffer: words.buffer as SharedArrayBuffer, index: 1, runningIndex: 2, overlapIndex: 3 },
  };
}

describe('a scope or session ends with its callback (#35)', () => {
  let a: CpuBackend;
  let b: CpuBackend;
  beforeAll(async () => {
    a = await CpuBackend.create({ threads: 2 });
    b = await CpuBackend.create({ threads: 2 }); // the same CPUs
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('an un-awaited install inside withExecutionScope that resumes after the scope settled posts no kernel: ContextExpired', async () => {
    const later = latch();
    const c = counters();
    let late: Promise<unknown> | undefined;
    await a.withExecutionScope(async () => {
      late = a.install(async (ctx) => {
        await later.opened;
        return ctx.run(countRun, c.late);
      });
      void late.catch(() => undefined);
      await Promise.resolve();
    });
    // The scope's permit is free: the other backend on the same CPUs is admitted and runs.
    expect(a.executionInfo().admission.active).toBe(0);
    const other = b.install((ctx) => ctx.run(countRun, c.other));
    later.open();
    await expectCode(late!, 'ContextExpired', 'RuntimeState');
    await other;
    expect(Atomics.load(c.words, 0)).toBe(0);
    expect(Atomics.load(c.words, 1)).toBe(1);
    expect(Atomics.load(c.words, 3)).toBe(0);
    expect(await a.install(() => 'usable')).toBe('usable');
  });

  it("a session.run('sequential') not awaited inside withBackendSession at budget 2 posts no kernel after the session: ContextExpired", async () => {
    const later = latch();
    const c = counters();
    let late: Promise<unknown> | undefined;
    await a.withBackendSession(async (session) => {
      expect(session.context.parallelMode).toBe('inner');
      late = session.run('sequential', async (ctx) => {
        await later.opened;
        return ctx.run(countRun, c.late);
      });
      void late.catch(() => undefined);
    });
    expect(a.executionInfo().admission.active).toBe(0);
    const other = b.install((ctx) => ctx.run(countRun, c.other));
    later.open();
    await expectCode(late!, 'ContextExpired', 'RuntimeState');
    await other;
    expect(Atomics.load(c.words, 0)).toBe(0);
    expect(Atomics.load(c.words, 3)).toBe(0);
  });

  it('a kernel task posted inside a scope and not awaited keeps the permit until it has settled', async () => {
    const g = gate();
    let posted: Promise<unknown> | undefined;
    let scopeEnded = false;
    const scope = a
      .withExecutionScope(async () => {
        await a.install((ctx) => {
          posted = ctx.run(holdUntil, g.payload);
          void posted.catch(() => undefined);
        });
      })
      .then(() => (scopeEnded = true));
    await g.whenEntered();
    let otherRan = false;
    const other = b.install(() => (otherRan = true));
    // Many event-loop turns: neither the scope nor the other backend's execution may finish while the kernel holds.
    for (let i = 0; i < 200; i++) await new Promise((r) => setImmediate(r));
    expect(scopeEnded).toBe(false);
    expect(otherRan).toBe(false);
    expect(a.executionInfo().admission.active).toBe(1);
    g.open();
    await scope;
    await other;
    expect(await posted).toBe(true);
    expect(otherRan).toBe(true);
  });

  it('the scope never waits on the application\'s own promises', async () => {
    const never = new Promise<void>(() => undefined);
    let late: Promise<unknown> | undefined;
    await a.withExecutionScope(async () => {
      late = a.install(async () => {
        await never;
      });
      void late.catch(() => undefined);
    });
    expect(a.executionInfo().admission.active).toBe(0);
    expect(await b.install(() => 'admitted')).toBe('admitted');
  });
});

describe('caller-managed guards (#35, R43)', () => {
  let executor: WorkerThreadsDomainExecutor;
  beforeAll(async () => {
    executor = await WorkerThreadsDomainExecutor.create({ workers: 2 });
  });
  afterAll(async () => {
    await executor.close();
  });

  it('two backends over one executor share one wait queue: a release hands over to the other backend\'s waiter', async () => {
    const first = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, executor, 2)] });
    const second = await CpuBackend.fromExternalDomains({ defaultDomain: 2, domains: [ExternalCpuDomain.callerManaged(2, executor, 2)] });
    try {
      const g = gate();
      const c = counters();
      const holding = first.install((ctx) => ctx.run(holdUntil, g.payload));
      await g.whenEntered();
      let secondRan = false;
      const waiting = second.install(async (ctx) => {
        await ctx.run(countRun, c.other);
        secondRan = true;
        return 'second';
      });
      for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
      expect(secondRan).toBe(false);
      g.open();
      expect(await holding).toBe(true);
      expect(await waiting).toBe('second');
      expect(Atomics.load(c.words, 3)).toBe(0);
      // And back again, the other way round.
      expect(await first.install(() => 'first again')).toBe('first again');
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('two domains of one backend on one executor: the second caller is admitted once the first finishes', async () => {
    const backend = await CpuBackend.fromExternalDomains({
      defaultDomain: 1,
      domains: [ExternalCpuDomain.callerManaged(1, executor, 1), ExternalCpuDomain.callerManaged(2, executor, 1)],
    });
    try {
      const g = gate();
      const holding = backend.forDomain(1).install((ctx) => ctx.run(holdUntil, g.payload));
      await g.whenEntered();
      const waiting = backend.forDomain(2).install(() => 'second', { signal: AbortSignal.timeout(20_000) });
      g.open();
      expect(await holding).toBe(true);
      expect(await waiting).toBe('second');
    } finally {
      await backend.close();
    }
  });

  it('a session with an un-awaited run leaves no guard held: the next top-level call is admitted, and the late run posts nothing', async () => {
    const backend = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, executor, 2)] });
    try {
      const later = latch();
      const c = counters();
      let late: Promise<unknown> | undefined;
      await backend.withBackendSession(async (session) => {
        late = session.run('sequential', async (ctx) => {
          await later.opened;
          return ctx.run(countRun, c.late);
        });
        void late.catch(() => undefined);
      });
      expect(await backend.install((ctx) => ctx.run(countRun, c.other).then(() => 'next'), { signal: AbortSignal.timeout(20_000) })).toBe('next');
      later.open();
      await expectCode(late!, 'ContextExpired', 'RuntimeState');
      expect(Atomics.load(c.words, 0)).toBe(0);
      expect(await backend.install(() => 'and again')).toBe('and again');
    } finally {
      await backend.close();
    }
  });
});
