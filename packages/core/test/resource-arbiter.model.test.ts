import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Arbiter } from '../src/arbiter/arbiter.js';
import { type ExecutionOwner, newExecutionOwner } from '../src/arbiter/execution-owner.js';
import type { Permit } from '../src/arbiter/permit.js';
import { MachineArbiter } from '../src/arbiter/machine-arbiter.js';
import { ProcessArbiter } from '../src/arbiter/process-arbiter.js';
import { ResourceArbiter } from '../src/arbiter/resource-arbiter.js';
import type { ResourceRequest } from '../src/arbiter/resource-request.js';
import { TenferroError } from '../src/errors/tenferro-error.js';
import { CpuSet } from '../src/topology/cpu-set.js';

/*
 * Model-based tests of both arbiters — ResourceArbiter (isolate) and ProcessArbiter (native, each
 * run on a private state) — against one model (contract §3.E R27–R31, §6.2).
 *
 * A run draws a universe of ≥ 6 CPU sets over CPUs 0..7 (overlapping and disjoint) plus the
 * provider-exclusive request, a small pool of owners (so owners repeat and re-enter), and a
 * schedule of acquire / release / abort steps. After every step all microtasks are drained
 * (setImmediate, no timers) and the observed state is checked.
 */

const flush = () => new Promise<void>((r) => setImmediate(r));

const EXCL: ResourceRequest = { providerExclusive: true };
const OWNER_POOL = 3;

type Step =
  | { readonly t: 'acquire'; readonly req: number; readonly owner: number; readonly signal: boolean }
  | { readonly t: 'release'; readonly k: number }
  | { readonly t: 'abort'; readonly k: number };

const setArb = fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { minLength: 1, maxLength: 4 });
const universeArb = fc.array(setArb, { minLength: 6, maxLength: 9 });

function stepArb(nSets: number): fc.Arbitrary<Step> {
  const req = fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0, max: nSets - 1 }) },
    { weight: 1, arbitrary: fc.constant(nSets) }, // provider-exclusive
  );
  // owner -1: a fresh owner; 0..OWNER_POOL-1: a shared owner (re-entrancy)
  const owner = fc.oneof({ weight: 2, arbitrary: fc.constant(-1) }, { weight: 3, arbitrary: fc.integer({ min: 0, max: OWNER_POOL - 1 }) });
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ t: fc.constant('acquire' as const), req, owner, signal: fc.boolean() }) },
    { weight: 4, arbitrary: fc.record({ t: fc.constant('release' as const), k: fc.nat() }) },
    { weight: 2, arbitrary: fc.record({ t: fc.constant('abort' as const), k: fc.nat() }) },
  );
}

const scenarioArb = universeArb.chain((sets) =>
  fc.record({ sets: fc.constant(sets), steps: fc.array(stepArb(sets.length), { minLength: 1, maxLength: 40 }) }),
);

function conflict(a: ResourceRequest, b: ResourceRequest): boolean {
  if ('providerExclusive' in a || 'providerExclusive' in b) return true;
  const ids = new Set(a.cpus);
  for (const id of b.cpus) if (ids.has(id)) return true;
  return false;
}

interface Req {
  readonly id: number;
  readonly request: ResourceRequest;
  readonly owner: ExecutionOwner;
  readonly controller: AbortController | undefined;
  /** Ids of requests still pending (observed) when this one was issued. */
  readonly pendingAtIssue: readonly number[];
  state: 'pending' | 'admitted' | 'aborted';
  permit?: Permit;
  /** Position in the global sequence of observed outcomes (admission or abort). */
  seq?: number;
}

/**
 * Reference implementation of §6.2 / R29: a waiter is admissible iff no active entry of another
 * owner conflicts and (its owner is active, or no older waiter conflicts); after every change the
 * queue is re-scanned from the head until no waiter is admissible.
 */
class ReferenceArbiter {
  readonly active: { id: number; request: ResourceRequest; owner: ExecutionOwner }[] = [];
  readonly waiting: { id: number; request: ResourceRequest; owner: ExecutionOwner }[] = [];
  readonly reentrant = new Map<number, boolean>();

  acquire(id: number, request: ResourceRequest, owner: ExecutionOwner): void {
    this.waiting.push({ id, request, owner });
    this.settle();
  }

  release(id: number): void {
    const i = this.active.findIndex((a) => a.id === id);
    if (i >= 0) this.active.splice(i, 1);
    this.settle();
  }

  abort(id: number): boolean {
    const i = this.waiting.findIndex((w) => w.id === id);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    this.settle();
    return true;
  }

  private settle(): void {
    for (;;) {
      const i = this.waiting.findIndex((w, pos) => this.admissible(w, pos));
      if (i < 0) return;
      const [w] = this.waiting.splice(i, 1);
      this.reentrant.set(w!.id, this.active.some((a) => a.owner === w!.owner));
      this.active.push(w!);
    }
  }

  private admissible(w: { request: ResourceRequest; owner: ExecutionOwner }, pos: number): boolean {
    if (this.active.some((a) => a.owner !== w.owner && conflict(a.request, w.request))) return false;
    if (this.active.some((a) => a.owner === w.owner)) return true;
    return !this.waiting.slice(0, pos).some((o) => conflict(o.request, w.request));
  }
}

async function runScenario(make: () => Arbiter, sets: number[][], steps: readonly Step[], strict: boolean): Promise<void> {
  const arb = make();
  const ref = strict ? new ReferenceArbiter() : undefined;
  const universe: ResourceRequest[] = [...sets.map((ids) => ({ cpus: CpuSet.of(ids) })), EXCL];
  const owners = Array.from({ length: OWNER_POOL }, () => newExecutionOwner());
  const reqs: Req[] = [];
  let seq = 0;
  const violations: string[] = [];

  const held = () => reqs.filter((r) => r.state === 'admitted' && !r.permit!.released);
  const pending = () => reqs.filter((r) => r.state === 'pending');

  const check = (where: string) => {
    expect(violations, where).toEqual([]);
    const h = held();
    // R27/R28 safety: no two active permits of different owners conflict.
    for (let i = 0; i < h.length; i++) {
      for (let j = i + 1; j < h.length; j++) {
        const a = h[i]!;
        const b = h[j]!;
        if (a.owner !== b.owner && conflict(a.request, b.request)) {
          throw new Error(`${where}: #${a.id} and #${b.id} of different owners conflict and are both active`);
        }
      }
    }
    expect(arb.stats(), where).toEqual({ active: h.length, waiting: pending().length });
    if (ref !== undefined) {
      const ids = (xs: { id: number }[]) => xs.map((x) => x.id).sort((a, b) => a - b);
      expect(ids(h), `${where}: active (implementation vs reference)`).toEqual(ids(ref.active));
      expect(ids(pending()), `${where}: waiting (implementation vs reference)`).toEqual(ids(ref.waiting));
      for (const r of h) expect(r.permit!.reentrant, `${where}: #${r.id} reentrant`).toBe(ref.reentrant.get(r.id));
    }
  };

  for (const [n, step] of steps.entries()) {
    if (step.t === 'acquire') {
      const request = universe[step.req]!;
      const owner = step.owner < 0 ? newExecutionOwner() : owners[step.owner]!;
      const controller = step.signal ? new AbortController() : undefined;
      const r: Req = {
        id: reqs.length,
        request,
        owner,
        controller,
        pendingAtIssue: pending().map((p) => p.id),
        state: 'pending',
      };
      reqs.push(r);
      arb.acquire(request, controller === undefined ? { owner } : { owner, signal: controller.signal }).then(
        (permit) => {
          if (r.state !== 'pending') violations.push(`#${r.id} settled twice`);
          if (permit.owner !== owner || permit.request !== request) violations.push(`#${r.id} permit owner/request mismatch`);
          r.state = 'admitted';
          r.permit = permit;
          r.seq = seq++;
        },
        (error: unknown) => {
          if (r.state !== 'pending') violations.push(`#${r.id} settled twice`);
          if (!TenferroError.is(error, 'AdmissionAborted') || error.kind !== 'RuntimeState') violations.push(`#${r.id} rejected with ${String(error)}`);
          r.state = 'aborted';
          r.seq = seq++;
        },
      );
      ref?.acquire(r.id, request, owner);
    } else if (step.t === 'release') {
      // any admitted permit, released ones included (release is idempotent)
      const admitted = reqs.filter((r) => r.state === 'admitted');
      if (admitted.length > 0) {
        const r = admitted[step.k % admitted.length]!;
        r.permit!.release();
        ref?.release(r.id);
      }
    } else {
      // any request with a signal, admitted / aborted ones included (must be harmless)
      const withSignal = reqs.filter((r) => r.controller !== undefined);
      if (withSignal.length > 0) {
        const r = withSignal[step.k % withSignal.length]!;
        r.controller!.abort(new Error(`abort #${r.id}`));
        ref?.abort(r.id);
      }
    }
    await flush();
    check(`after step ${n} (${JSON.stringify(step)})`);
  }

  // Release everything until nothing waits.
  for (let round = 0; pending().length > 0 || held().length > 0; round++) {
    if (round > reqs.length + 2) throw new Error(`liveness: ${pending().length} request(s) never admitted`);
    for (const r of held()) {
      r.permit!.release();
      ref?.release(r.id);
    }
    await flush();
    check(`drain round ${round}`);
  }

  // Liveness: every request not aborted was admitted.
  for (const r of reqs) expect(r.state === 'admitted' || r.state === 'aborted', `#${r.id} ${r.state}`).toBe(true);
  expect(arb.stats()).toEqual({ active: 0, waiting: 0 });

  // FIFO without conflicting bypass: if i was waiting when a later conflicting j was issued, j is
  // admitted only after i has left the queue — unless j was admitted re-entrantly (waiver of
  // R29 (b)). This holds for any owners; the brief's "different owners, neither re-entrant" case
  // is a special case of it.
  for (const j of reqs) {
    if (j.state !== 'admitted' || j.permit!.reentrant) continue;
    for (const iId of j.pendingAtIssue) {
      const i = reqs[iId]!;
      if (!conflict(i.request, j.request)) continue;
      if (!(i.seq! < j.seq!)) {
        throw new Error(`FIFO: #${j.id} (${show(j)}) admitted before older conflicting waiter #${i.id} (${show(i)}) left the queue`);
      }
    }
  }
}

function show(r: Req): string {
  return `${'providerExclusive' in r.request ? 'excl' : r.request.cpus.toString()} owner ${r.owner}`;
}

/** 1000 runs take well under a second per property; raise with ARBITER_MODEL_RUNS for soak runs. */
const RUNS = Number(process.env.ARBITER_MODEL_RUNS ?? 1000);

const IMPLEMENTATIONS: [string, () => Arbiter][] = [
  ['ResourceArbiter', () => new ResourceArbiter()],
  ['ProcessArbiter', () => ProcessArbiter.open({ isolated: true })],
  // #41: the machine arbiter's rule and shared-segment state, on a private segment.
  ['MachineArbiter', () => MachineArbiter.open({ isolated: true })],
];

describe.each(IMPLEMENTATIONS)('%s model', (_name, make) => {
  it('safety after every step, liveness and FIFO over random schedules', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, ({ sets, steps }) => runScenario(make, sets, steps, false)),
      { numRuns: RUNS },
    );
  });

  it('matches the §6.2 reference model after every step (admitted set, queue, reentrant flag)', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, ({ sets, steps }) => runScenario(make, sets, steps, true)),
      { numRuns: RUNS },
    );
  });
});
