// Load with an invariant monitor: 1,000 concurrent mixed operations on backends whose CPU sets
// overlap (the all-allowed set against each one-CPU "NUMA node" of a fake topology) and are
// disjoint (the two nodes). Every result is bit-exact against a sequential run, and a monitor fed
// by the `tenferro:execution` tracing channel (node:diagnostics_channel, through
// `forwardDiagnostics`, the shape worker isolates forward in) fails on any moment where two
// overlapping executions were active together.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, forwardDiagnostics, processArbiter, Tensor } from '../../src/index.js';
import { randomOperand, seededRandom } from '../../src/testing/index.js';
import { kernel, onePerCpuTopology } from '../helpers.js';
import { executionMonitor } from './execution-monitor.js';

const echo = kernel<number, number>('echo');
const twoCpus = (await import('../../src/index.js')).discoverCpuTopology().allowedCpus.size >= 2;

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
    const monitor = executionMonitor();
    const stop = forwardDiagnostics(monitor.onEvent, { channels: ['execution'] });
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
      expect(monitor.violations).toEqual([]);
      expect(monitor.starts()).toBeGreaterThanOrEqual(1000);
      expect(monitor.active.size).toBe(0);
      // The two one-CPU domains are disjoint: they must have run together at some point.
      expect(monitor.peak()).toBe(2);
      expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
    } finally {
      stop();
    }
  }, 120_000);
});
