import { beforeEach, describe, expect, it } from 'vitest';
import type { AcquireOptions, Arbiter } from '../src/arbiter/arbiter.js';
import { newExecutionOwner } from '../src/arbiter/execution-owner.js';
import type { Permit } from '../src/arbiter/permit.js';
import { MachineArbiter } from '../src/arbiter/machine-arbiter.js';
import { ProcessArbiter } from '../src/arbiter/process-arbiter.js';
import { processArbiter } from '../src/arbiter/process-wide-arbiter.js';
import { ResourceArbiter } from '../src/arbiter/resource-arbiter.js';
import { loadOs } from '@tenferro/os';
import type { ResourceRequest } from '../src/arbiter/resource-request.js';
import { TenferroError } from '../src/errors/tenferro-error.js';
import { CpuSet } from '../src/topology/cpu-set.js';

const cpus = (...ids: number[]): ResourceRequest => ({ cpus: CpuSet.of(ids) });
const EXCL: ResourceRequest = { providerExclusive: true };

/** Runs every pending microtask (promise reactions) — no timers involved. */
const flush = () => new Promise<void>((r) => setImmediate(r));

interface Tracked {
  state: 'pending' | 'admitted' | 'rejected';
  permit?: Permit;
  error?: unknown;
}

function track(p: Promise<Permit>): Tracked {
  const t: Tracked = { state: 'pending' };
  p.then(
    (permit) => {
      t.state = 'admitted';
      t.permit = permit;
    },
    (error: unknown) => {
      t.state = 'rejected';
      t.error = error;
    },
  );
  return t;
}

async function acquireNow(arb: Arbiter, req: ResourceRequest, opts?: AcquireOptions): Promise<Tracked> {
  const t = track(arb.acquire(req, opts));
  await flush();
  return t;
}

function expectError(e: unknown, code: string, kind: string) {
  expect(e).toBeInstanceOf(TenferroError);
  expect(TenferroError.is(e, code as never)).toBe(true);
  expect((e as TenferroError).code).toBe(code);
  expect((e as TenferroError).kind).toBe(kind);
}

/**
 * Both implementations run every test below: the in-isolate `ResourceArbiter` and the native
 * `ProcessArbiter` (each test on a private native state, so tests do not share permits).
 */
const IMPLEMENTATIONS: [string, () => Arbiter][] = [
  ['ResourceArbiter (isolate)', () => new ResourceArbiter()],
  ['ProcessArbiter (process, private state)', () => ProcessArbiter.open({ isolated: true })],
  ['MachineArbiter (machine, private segment, #41)', () => MachineArbiter.open({ isolated: true })],
];
let makeArbiter: () => Arbiter = () => new ResourceArbiter();

describe.each(IMPLEMENTATIONS)('%s', (_name, make) => {
  beforeEach(() => {
    makeArbiter = make;
  });

  describe('conflicts (R27, R28)', () => {
    it('admits disjoint sets of different owners together', async () => {
      const arb = makeArbiter();
      const a = await acquireNow(arb, cpus(0, 1));
      const b = await acquireNow(arb, cpus(2, 3));
      const c = await acquireNow(arb, cpus(4));
      expect([a.state, b.state, c.state]).toEqual(['admitted', 'admitted', 'admitted']);
      expect(arb.stats()).toEqual({ active: 3, waiting: 0 });
      expect(a.permit!.owner).not.toBe(b.permit!.owner);
      expect(a.permit!.reentrant).toBe(false);
    });

    it('never holds overlapping sets of different owners together', async () => {
      const arb = makeArbiter();
      const a = await acquireNow(arb, cpus(0, 1, 2));
      const b = await acquireNow(arb, cpus(2, 5));
      expect(a.state).toBe('admitted');
      expect(b.state).toBe('pending');
      expect(arb.stats()).toEqual({ active: 1, waiting: 1 });
      a.permit!.release();
      expect(arb.stats()).toEqual({ active: 1, waiting: 0 });
      await flush();
      expect(b.state).toBe('admitted');
      expect(b.permit!.request).toEqual(cpus(2, 5));
      b.permit!.release();
      expect(arb.stats()).toEqual({ active: 0, waiting: 0 });
    });

    it('provider-exclusive waits for any active CPU set and blocks every later request', async () => {
      const arb = makeArbiter();
      const a = await acquireNow(arb, cpus(7));
      const x = await acquireNow(arb, EXCL);
      expect(x.state).toBe('pending');
      a.permit!.release();
      await flush();
      expect(x.state).toBe('admitted');
      const b = await acquireNow(arb, cpus(3));
      expect(b.state).toBe('pending');
      x.permit!.release();
      await flush();
      expect(b.state).toBe('admitted');
    });

    it('provider-exclusive conflicts with another provider-exclusive request', async () => {
      const arb = makeArbiter();
      const x = await acquireNow(arb, EXCL);
      const y = await acquireNow(arb, EXCL);
      expect(x.state).toBe('admitted');
      expect(y.state).toBe('pending');
      expect(arb.stats()).toEqual({ active: 1, waiting: 1 });
      x.permit!.release();
      await flush();
      expect(y.state).toBe('admitted');
      expect(y.permit!.request).toEqual(EXCL);
    });
  });

  describe('re-entrancy (R30)', () => {
    it('admits the same owner on overlapping sets and reports reentrant', async () => {
      const arb = makeArbiter();
      const owner = newExecutionOwner();
      const a = await acquireNow(arb, cpus(0, 1), { owner });
      const b = await acquireNow(arb, cpus(1, 2), { owner });
      const c = await acquireNow(arb, EXCL, { owner });
      expect([a.state, b.state, c.state]).toEqual(['admitted', 'admitted', 'admitted']);
      expect(a.permit!.reentrant).toBe(false);
      expect(b.permit!.reentrant).toBe(true);
      expect(c.permit!.reentrant).toBe(true);
      expect(c.permit!.owner).toBe(owner);
      // another owner is blocked by any of them
      const other = await acquireNow(arb, cpus(5));
      expect(other.state).toBe('pending');
      c.permit!.release();
      await flush();
      expect(other.state).toBe('admitted');
    });

    it('provider-exclusive of an owner does not block its own re-entry', async () => {
      const arb = makeArbiter();
      const owner = newExecutionOwner();
      const x = await acquireNow(arb, EXCL, { owner });
      const y = await acquireNow(arb, EXCL, { owner });
      expect(y.state).toBe('admitted');
      expect(y.permit!.reentrant).toBe(true);
      x.permit!.release();
      y.permit!.release();
      expect(arb.stats()).toEqual({ active: 0, waiting: 0 });
    });

    it('re-entrancy ignores only own permits: conflict with another owner still waits', async () => {
      const arb = makeArbiter();
      const o1 = newExecutionOwner();
      const a = await acquireNow(arb, cpus(0), { owner: o1 });
      const b = await acquireNow(arb, cpus(4)); // other owner
      const c = await acquireNow(arb, cpus(0, 4), { owner: o1 });
      expect(a.state).toBe('admitted');
      expect(b.state).toBe('admitted');
      expect(c.state).toBe('pending');
      b.permit!.release();
      await flush();
      expect(c.state).toBe('admitted');
      expect(c.permit!.reentrant).toBe(true);
    });

    it('is not re-entrant once the owner has released everything', async () => {
      const arb = makeArbiter();
      const owner = newExecutionOwner();
      const a = await acquireNow(arb, cpus(0), { owner });
      a.permit!.release();
      const b = await acquireNow(arb, cpus(0), { owner });
      expect(b.permit!.reentrant).toBe(false);
    });

    it('newExecutionOwner yields distinct positive integers', () => {
      const a = newExecutionOwner();
      const b = newExecutionOwner();
      expect(Number.isInteger(a) && a > 0).toBe(true);
      expect(b).not.toBe(a);
    });
  });

  describe('permits', () => {
    it('release is idempotent and does not free a later permit of the same owner twice', async () => {
      const arb = makeArbiter();
      const owner = newExecutionOwner();
      const a = await acquireNow(arb, cpus(0), { owner });
      const b = await acquireNow(arb, cpus(0), { owner });
      expect(arb.stats().active).toBe(2);
      a.permit!.release();
      a.permit!.release();
      a.permit![Symbol.dispose]();
      expect(a.permit!.released).toBe(true);
      expect(b.permit!.released).toBe(false);
      expect(arb.stats().active).toBe(1);
      // owner still holds b: another owner must still wait
      const other = await acquireNow(arb, cpus(0));
      expect(other.state).toBe('pending');
      b.permit!.release();
      await flush();
      expect(other.state).toBe('admitted');
    });

    it('`using` releases on normal exit and on throw (R31)', async () => {
      const arb = makeArbiter();
      {
        using p = await arb.acquire(cpus(0, 1));
        expect(p.released).toBe(false);
        expect(arb.stats().active).toBe(1);
      }
      expect(arb.stats().active).toBe(0);
      let leaked: Permit | undefined;
      await expect(
        (async () => {
          using p = await arb.acquire(cpus(0, 1));
          leaked = p;
          throw new Error('boom');
        })(),
      ).rejects.toThrow('boom');
      expect(leaked!.released).toBe(true);
      expect(arb.stats()).toEqual({ active: 0, waiting: 0 });
    });

    it('dispose of a permit hands over to a waiter', async () => {
      const arb = makeArbiter();
      const w = track(
        (async () => {
          using _p = await arb.acquire(cpus(3));
          return arb.acquire(cpus(3));
        })(),
      );
      await flush();
      expect(w.state).toBe('admitted');
      expect(arb.stats()).toEqual({ active: 1, waiting: 0 });
    });
  });

  describe('FIFO without conflicting bypass (R29)', () => {
    it('a request conflicting with an active permit waits (and stays behind a conflicting older waiter)', async () => {
      const arb = makeArbiter();
      const a = await acquireNow(arb, cpus(0, 1));
      const b = await acquireNow(arb, cpus(1));
      const c = await acquireNow(arb, cpus(0));
      expect([b.state, c.state]).toEqual(['pending', 'pending']);
      expect(arb.stats()).toEqual({ active: 1, waiting: 2 });
      a.permit!.release();
      await flush();
      // B and C are disjoint: both admitted when A leaves
      expect([b.state, c.state]).toEqual(['admitted', 'admitted']);
    });

    it('a younger request conflicting with an older waiter does not bypass it', async () => {
      const arb = makeArbiter();
      const a = await acquireNow(arb, cpus(0, 1));
      const b = await acquireNow(arb, cpus(1, 2)); // waits for A
      const c = await acquireNow(arb, cpus(2)); // free, but B is older and conflicts
      expect([b.state, c.state]).toEqual(['pending', 'pending']);
      const unrelated = await acquireNow(arb, cpus(9));
      unrelated.permit?.release(); // unrelated traffic triggers re-evaluation
      await flush();
      expect(c.state).toBe('pending');
      a.permit!.release();
      await flush();
      expect([b.state, c.state]).toEqual(['admitted', 'pending']);
      b.permit!.release();
      await flush();
      expect(c.state).toBe('admitted');
    });

    it('a later request that conflicts with no older waiter is admitted immediately, ahead of them', async () => {
      const arb = makeArbiter();
      const a = await acquireNow(arb, cpus(0, 1));
      const b = await acquireNow(arb, cpus(1)); // waits for A
      expect(b.state).toBe('pending');
      const c = await acquireNow(arb, cpus(2)); // conflicts with nobody
      expect(c.state).toBe('admitted');
      expect(b.state).toBe('pending');
      expect(arb.stats()).toEqual({ active: 2, waiting: 1 });
      a.permit!.release();
    });

    it('a later waiter is admitted ahead of an older one when its own blocker leaves first', async () => {
      const arb = makeArbiter();
      const a = await acquireNow(arb, cpus(0, 1));
      const d = await acquireNow(arb, cpus(3));
      const b = await acquireNow(arb, cpus(1)); // waits for A
      const c = await acquireNow(arb, cpus(3, 4)); // waits for D only (disjoint from B)
      expect([b.state, c.state]).toEqual(['pending', 'pending']);
      d.permit!.release();
      await flush();
      expect(c.state).toBe('admitted');
      expect(b.state).toBe('pending');
      expect(arb.stats()).toEqual({ active: 2, waiting: 1 });
    });

    it('(b) is waived when the requester already holds a permit', async () => {
      const arb = makeArbiter();
      const owner = newExecutionOwner();
      const mine = await acquireNow(arb, cpus(5), { owner });
      const a = await acquireNow(arb, cpus(0, 1));
      const b = await acquireNow(arb, cpus(1, 2)); // waits for A
      const c = await acquireNow(arb, cpus(2), { owner }); // conflicts with older waiter B only
      expect(b.state).toBe('pending');
      expect(c.state).toBe('admitted');
      expect(c.permit!.reentrant).toBe(true);
      // without a held permit the same request would wait
      const d = await acquireNow(arb, cpus(2));
      expect(d.state).toBe('pending');
      void mine;
      void a;
    });

    it('(b) is waived for a queued re-entrant waiter once its conflicting active permit leaves', async () => {
      const arb = makeArbiter();
      const owner = newExecutionOwner();
      await acquireNow(arb, cpus(5), { owner });
      const a = await acquireNow(arb, cpus(0, 1));
      await acquireNow(arb, cpus(2, 3)); // E, stays active
      const b = await acquireNow(arb, cpus(2, 4)); // waits for E
      const c = await acquireNow(arb, cpus(1, 4), { owner }); // waits for A; older waiter B conflicts too
      expect([b.state, c.state]).toEqual(['pending', 'pending']);
      a.permit!.release();
      await flush();
      expect([b.state, c.state]).toEqual(['pending', 'admitted']);
      expect(c.permit!.reentrant).toBe(true);
    });

    // Setup shared by the two tests below: A{0} (owner a) and E{9} (owner e) active; W1{0,1} (owner b)
    // waits for A; W2{1} (owner X, holds nothing) waits behind older W1; W3{2} (owner X) conflicts
    // with nobody. Once W3 is admitted, X holds a permit, so (b) is waived for W2, which conflicts
    // with no active permit of another owner: W2 must be admitted as well (R29/R30).
    async function sameOwnerSetup() {
      const arb = makeArbiter();
      const x = newExecutionOwner();
      const a = await acquireNow(arb, cpus(0));
      const e = await acquireNow(arb, cpus(9));
      const w1 = await acquireNow(arb, cpus(0, 1));
      const w2 = await acquireNow(arb, cpus(1), { owner: x });
      expect([w1.state, w2.state]).toEqual(['pending', 'pending']);
      const w3 = await acquireNow(arb, cpus(2), { owner: x });
      return { arb, a, e, w1, w2, w3 };
    }

    it('admitting a waiter re-evaluates an older waiter of the same owner (acquire path)', async () => {
      const { w1, w2, w3 } = await sameOwnerSetup();
      expect(w3.state).toBe('admitted');
      expect(w2.state).toBe('admitted');
      expect(w2.permit!.reentrant).toBe(true);
      expect(w1.state).toBe('pending');
    });

    it('admitting a waiter re-evaluates an older waiter of the same owner (release path)', async () => {
      const { arb, e, w1, w2, w3 } = await sameOwnerSetup();
      e.permit?.release(); // any change: the arbiter re-evaluates the queue
      await flush();
      expect(w3.state).toBe('admitted');
      expect(w2.state).toBe('admitted');
      expect(w1.state).toBe('pending');
      expect(arb.stats()).toEqual({ active: 3, waiting: 1 });
    });

    it('releases hand over in FIFO order among mutually conflicting waiters', async () => {
      const arb = makeArbiter();
      const first = await acquireNow(arb, cpus(0));
      const order: number[] = [];
      const all = [1, 2, 3, 4].map((n) =>
        arb.acquire(n % 2 ? cpus(0, n) : EXCL).then((p) => {
          order.push(n);
          return p;
        }),
      );
      await flush();
      expect(arb.stats()).toEqual({ active: 1, waiting: 4 });
      first.permit!.release();
      for (const p of all) (await p).release();
      expect(order).toEqual([1, 2, 3, 4]);
      expect(arb.stats()).toEqual({ active: 0, waiting: 0 });
    });
  });

  describe('abort', () => {
    it('aborting a queued waiter rejects with AdmissionAborted and keeps the queue consistent', async () => {
      const arb = makeArbiter();
      const a = await acquireNow(arb, cpus(0));
      const ac = new AbortController();
      const reason = new Error('stop');
      const b = await acquireNow(arb, cpus(0), { signal: ac.signal });
      const c = await acquireNow(arb, cpus(0));
      expect(arb.stats()).toEqual({ active: 1, waiting: 2 });
      ac.abort(reason);
      expect(arb.stats()).toEqual({ active: 1, waiting: 1 });
      await flush();
      expect(b.state).toBe('rejected');
      expectError(b.error, 'AdmissionAborted', 'RuntimeState');
      expect((b.error as Error).cause).toBe(reason);
      a.permit!.release();
      await flush();
      expect(c.state).toBe('admitted');
      expect(arb.stats()).toEqual({ active: 1, waiting: 0 });
      ac.abort(); // no-op
      expect(arb.stats()).toEqual({ active: 1, waiting: 0 });
    });

    it('waiters blocked only by the aborted waiter’s FIFO precedence are admitted at once', async () => {
      const arb = makeArbiter();
      const a = await acquireNow(arb, cpus(0, 1));
      const ac = new AbortController();
      const b = await acquireNow(arb, cpus(1, 2), { signal: ac.signal }); // waits for A
      const c = await acquireNow(arb, cpus(2)); // blocked only by older waiter B
      const d = await acquireNow(arb, cpus(0)); // blocked by A
      expect([b.state, c.state, d.state]).toEqual(['pending', 'pending', 'pending']);
      ac.abort();
      await flush();
      expect([b.state, c.state, d.state]).toEqual(['rejected', 'admitted', 'pending']);
      expect(arb.stats()).toEqual({ active: 2, waiting: 1 });
      a.permit!.release();
      await flush();
      expect(d.state).toBe('admitted');
    });

    it('an already aborted signal rejects immediately, even on the uncontended path', async () => {
      const arb = makeArbiter();
      const reason = new Error('early');
      const signal = AbortSignal.abort(reason);
      const t = await acquireNow(arb, cpus(0), { signal });
      expect(t.state).toBe('rejected');
      expectError(t.error, 'AdmissionAborted', 'RuntimeState');
      expect((t.error as Error).cause).toBe(reason);
      expect(arb.stats()).toEqual({ active: 0, waiting: 0 });
    });

    it('aborting after admission is harmless (fast path and handed-over waiter)', async () => {
      const arb = makeArbiter();
      const ac1 = new AbortController();
      const a = await acquireNow(arb, cpus(0), { signal: ac1.signal });
      const ac2 = new AbortController();
      const b = await acquireNow(arb, cpus(0), { signal: ac2.signal });
      const c = await acquireNow(arb, cpus(0));
      ac1.abort();
      expect(a.permit!.released).toBe(false);
      a.permit!.release();
      await flush();
      expect(b.state).toBe('admitted');
      ac2.abort();
      await flush();
      expect(b.state).toBe('admitted');
      expect(b.permit!.released).toBe(false);
      expect(arb.stats()).toEqual({ active: 1, waiting: 1 });
      expect(c.state).toBe('pending');
      b.permit!.release();
      await flush();
      expect(c.state).toBe('admitted');
    });
  });

  describe('validation', () => {
    it.each<[string, unknown]>([
      ['null', null],
      ['undefined', undefined],
      ['a string', '0-3'],
      ['an empty object', {}],
      ['cpus as an array', { cpus: [0, 1] }],
      ['cpus as a string', { cpus: '0-1' }],
      ['providerExclusive false', { providerExclusive: false }],
      ['providerExclusive "yes"', { providerExclusive: 'yes' }],
    ])('rejects %s with InvalidArgument', async (_name, request) => {
      const arb = makeArbiter();
      const t = await acquireNow(arb, request as ResourceRequest);
      expect(t.state).toBe('rejected');
      expectError(t.error, 'InvalidArgument', 'Validation');
      expect(arb.stats()).toEqual({ active: 0, waiting: 0 });
    });

    it.each<[string, unknown]>([
      ['an unknown key', { ownr: 1 }],
      ['a signal that is no AbortSignal', { signal: {} }],
      ['null options', null],
    ])('rejects options with %s with InvalidArgument', async (_name, options) => {
      const arb = makeArbiter();
      const t = await acquireNow(arb, cpus(0), options as AcquireOptions);
      expect(t.state).toBe('rejected');
      expectError(t.error, 'InvalidArgument', 'Validation');
      expect(arb.stats()).toEqual({ active: 0, waiting: 0 });
    });

    it('returns a rejected promise instead of throwing synchronously', () => {
      const arb = makeArbiter();
      let p: Promise<Permit> | undefined;
      expect(() => {
        p = arb.acquire(null as never);
      }).not.toThrow();
      return expect(p).rejects.toBeInstanceOf(TenferroError);
    });

    // An invalid owner used to be accepted; `owner: NaN` then self-deadlocked on re-entry
    // (NaN !== NaN made the owner conflict with its own permit while it counted as held).
    it.each<[string, unknown]>([
      ['NaN', Number.NaN],
      ['0', 0],
      ['-1', -1],
      ['1.5', 1.5],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['2 ** 53', 2 ** 53],
      ['the string "1"', '1'],
    ])('rejects owner %s with InvalidArgument', async (_name, owner) => {
      const arb = makeArbiter();
      const t = await acquireNow(arb, cpus(0), { owner: owner as number });
      expect(t.state).toBe('rejected');
      expectError(t.error, 'InvalidArgument', 'Validation');
      expect(arb.stats()).toEqual({ active: 0, waiting: 0 });
    });
  });
});

describe('ProcessArbiter — specifics', () => {
  it('keeps sparse, large CPU ids apart exactly (bitset words far apart)', async () => {
    const arb = ProcessArbiter.open({ isolated: true });
    const a = await acquireNow(arb, cpus(0, 1_000_000));
    const b = await acquireNow(arb, cpus(1, 999_999, 1_000_001));
    const c = await acquireNow(arb, cpus(1_000_000));
    const d = await acquireNow(arb, cpus(31, 32, 63, 64));
    const e = await acquireNow(arb, cpus(64));
    expect([a.state, b.state, c.state, d.state, e.state]).toEqual(['admitted', 'admitted', 'pending', 'admitted', 'pending']);
    a.permit!.release();
    d.permit!.release();
    await flush();
    expect([c.state, e.state]).toEqual(['admitted', 'admitted']);
  });

  it('two clients of one state keep each other apart, and a release in one wakes the other (thread-safe function)', async () => {
    const one = ProcessArbiter.open({ isolated: true });
    // A second client on one private state is what two isolates are; the process state is shared by construction.
    const shared = ProcessArbiter.open();
    const other = ProcessArbiter.open();
    const a = await acquireNow(shared, cpus(0, 1));
    const b = await acquireNow(other, cpus(1, 2));
    expect([a.state, b.state]).toEqual(['admitted', 'pending']);
    expect(shared.processStats()).toMatchObject({ active: 1, waiting: 1 });
    expect(other.stats()).toEqual({ active: 0, waiting: 1 });
    a.permit!.release();
    // Delivered on this thread through the other client's thread-safe function, not synchronously.
    await new Promise<void>((resolve) => {
      const poll = (): void => void (b.state === 'admitted' ? resolve() : setImmediate(poll));
      poll();
    });
    expect(b.permit!.reentrant).toBe(false);
    b.permit!.release();
    expect(one.stats()).toEqual({ active: 0, waiting: 0 });
    expect(shared.processStats()).toMatchObject({ active: 0, waiting: 0 });
  });

  it('rejects unknown options of open()', () => {
    expect(() => ProcessArbiter.open({ shared: true } as never)).toThrow(TenferroError);
    expect(() => ProcessArbiter.open({ isolated: 'yes' } as never)).toThrow(/options.isolated/);
  });
});

describe('processArbiter', () => {
  it('is a per-isolate singleton, the process arbiter when the os binding loads', () => {
    expect(loadOs().available).toBe(true);
    const a = processArbiter();
    expect(a).toBeInstanceOf(ProcessArbiter);
    expect(a.kind).toBe('process');
    expect(processArbiter()).toBe(a);
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('tenferro.core.v0.arbiter')]).toBe(a);
  });
});
