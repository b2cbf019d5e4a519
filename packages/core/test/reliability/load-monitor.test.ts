// Load with an invariant monitor: 1,000 concurrent mixed operations on backends whose CPU sets
// overlap (the all-allowed set against each one-CPU "NUMA node" of a fake topology) and are
// disjoint (the two nodes). Every result is bit-exact against a sequential run, and a monitor fed
// by `tenferro:execution` (node:diagnostics_channel) fails on any moment where two overlapping
// executions were active together.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, processArbiter, requestsConflict, Tensor, type ResourceRequest } from '../../src/index.js';
import { randomOperand, seededRandom } from '../../src/testing/index.js';
import { kernel, onePerCpuTopology } from '../helpers.js';

const echo = kernel<number, number>('echo');
const twoCpus = (await import('../../src/index.js')).discoverCpuTopology().allowedCpus.size >= 2;

interface Message {
  readonly phase: 'enter' | 'leave';
  readonly owner: number;
  readonly request: ResourceRequest;
}

let all: CpuBackend;
let nodes: CpuBackend[];
beforeAll(async () => {
  if (!twoCpus) return;
  const topology = onePerCpuTopology();
  all = await CpuBackend.create({ topology, threads: 2 });
  nodes = topology.nodes.slice(0, 2).map((n) => all.forPlacement({ numaNode: n.id }));
  await Promise.all(nodes.map((b) => b.ready()));
});
afterAll(async () => {
  await all?.close();
});

describe('load with an invariant monitor', () => {
  it.skipIf(!twoCpus)('1,000 concurrent mixed operations: results bit-exact, never two overlapping executions at once (needs 2 CPUs)', async () => {
    const active = new Map<number, ResourceRequest>();
    const violations: string[] = [];
    let peakDisjoint = 0;
    let enters = 0;
    const monitor = (m: unknown) => {
      const msg = m as Message;
      if (msg.phase === 'leave') {
        active.delete(msg.owner);
        return;
      }
      enters++;
      for (const [owner, request] of active) {
        if (owner !== msg.owner && requestsConflict(request, msg.request)) violations.push(`owner ${msg.owner} entered while ${owner} was active`);
      }
      active.set(msg.owner, msg.request);
      peakDisjoint = Math.max(peakDisjoint, active.size);
    };
    subscribe('tenferro:execution', monitor);
    try {
      const rand = seededRandom(99);
      const handles = [all, ...nodes];
      const jobs = Array.from({ length: 1000 }, (_, i) => {
        const kind = i % 4;
        const handle = handles[i % 3]!;
        if (kind === 3) return { kind, handle, run: () => handle.install((ctx) => ctx.run(echo, i)), expected: i };
        const a = randomOperand(rand, 'f64', [3 + (i % 5), 4], true);
        const b = randomOperand(rand, 'f64', [4, 2 + (i % 3)], true);
        return { kind, handle, a, b, run: () => handle.matmul(a, b) };
      });
      // Sequential reference first, on the all-allowed handle.
      const expected: unknown[] = [];
      for (const j of jobs) expected.push(j.kind === 3 ? j.expected : (await all.matmul(j.a!, j.b!)).toArray());
      const results = await Promise.all(jobs.map((j) => j.run()));
      results.forEach((r, i) => expect(Tensor.isTensor(r) ? r.toArray() : r).toEqual(expected[i]));
      expect(violations).toEqual([]);
      expect(enters).toBeGreaterThanOrEqual(1000);
      // The two one-CPU domains are disjoint: they must have run together at some point.
      expect(peakDisjoint).toBe(2);
      expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
    } finally {
      unsubscribe('tenferro:execution', monitor);
    }
  });
});
