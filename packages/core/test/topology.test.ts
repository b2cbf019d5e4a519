import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { TenferroError } from '../src/errors/tenferro-error.js';
import { CpuSet } from '../src/topology/cpu-set.js';
import { discoverCpuTopology } from '../src/topology/discover-topology.js';
import type { CpuTopology } from '../src/topology/topology-types.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'topology');

interface ExpectedNode {
  readonly id: number;
  readonly cpus: string;
  readonly hasMemory: boolean;
  readonly memoryBytes?: number;
}

interface Expected {
  readonly description?: string;
  readonly error: string | null;
  readonly kind?: string;
  readonly detail?: Record<string, unknown>;
  readonly allowedCpus?: string;
  readonly onlineCpus?: string | null;
  readonly nodes?: ExpectedNode[];
  readonly effectiveCapacity?: number;
  readonly quota?: number;
  readonly limits?: string[];
  readonly numa?: 'sysfs' | 'unavailable';
  readonly cgroup?: string | null;
}

function discoverFixture(name: string): CpuTopology {
  const root = join(FIXTURES, name);
  return discoverCpuTopology({ sysfsRoot: join(root, 'sys'), procRoot: join(root, 'proc') });
}

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

const fixtureNames = readdirSync(FIXTURES).filter((name) => existsSync(join(FIXTURES, name, 'expected.json'))).sort();

describe('discoverCpuTopology: fixture trees', () => {
  it('has the fixture trees the brief asks for', () => {
    expect(fixtureNames.filter((n) => !n.startsWith('error-')).length).toBeGreaterThanOrEqual(9);
    expect(fixtureNames).toEqual(
      expect.arrayContaining(['error-overlapping-nodes', 'error-duplicate-node', 'error-malformed-cpulist', 'error-empty-allowed']),
    );
  });

  it.each(fixtureNames)('%s matches expected.json', (name) => {
    const expected = JSON.parse(readFileSync(join(FIXTURES, name, 'expected.json'), 'utf8')) as Expected;
    if (expected.error !== null) {
      const error = catchError(() => discoverFixture(name));
      expect(TenferroError.is(error)).toBe(true);
      expect(error).toBeInstanceOf(TenferroError);
      const e = error as TenferroError;
      expect({ code: e.code, kind: e.kind, op: e.op }).toEqual({ code: expected.error, kind: expected.kind, op: 'discoverCpuTopology' });
      if (expected.detail !== undefined) expect(e.detail).toMatchObject(expected.detail);
      return;
    }

    const t = discoverFixture(name);
    expect(t.allowedCpus.toString()).toBe(expected.allowedCpus);
    expect(t.onlineCpus?.toString() ?? null).toBe(expected.onlineCpus ?? null);
    const nodes = t.nodes.map((n) => ({
      id: n.id,
      cpus: n.cpus.toString(),
      hasMemory: n.hasMemory,
      ...(n.memoryBytes === undefined ? {} : { memoryBytes: n.memoryBytes }),
    }));
    expect(nodes).toEqual(expected.nodes);
    expect(t.effectiveCapacity.cpus).toBe(expected.effectiveCapacity);
    expect(t.effectiveCapacity.quota).toBe(expected.quota);
    if (expected.limits !== undefined) expect(t.effectiveCapacity.limits.map((l) => l.source)).toEqual(expected.limits);
    if (expected.numa !== undefined) expect(t.source.numa).toBe(expected.numa);
    if (expected.cgroup !== undefined) expect(t.source.cgroup ?? null).toBe(expected.cgroup);
    expect(t.source.allowedCpus).toBe('proc-status');

    // Accessors and invariants common to every tree.
    expect(t.hasNumaNodes()).toBe(t.nodes.length > 0);
    for (const n of t.nodes) expect(t.node(n.id)).toBe(n);
    expect(t.node(9999)).toBeUndefined();
    for (const value of [t, t.nodes, t.source, t.effectiveCapacity, t.effectiveCapacity.limits, ...t.nodes, ...t.effectiveCapacity.limits]) {
      expect(Object.isFrozen(value)).toBe(true);
    }
  });
});

describe('discoverCpuTopology: details', () => {
  it('reports the quota and the strictest cgroup in the limit detail', () => {
    const t = discoverFixture('cfs-quota-stricter-parent');
    expect(t.effectiveCapacity.limits.at(-1)).toEqual({
      source: 'cgroupQuota',
      cpus: 2,
      detail: 'cpu.max 125000/50000 = 2.5 CPUs at /batch/job7',
    });
    expect(discoverFixture('cfs-quota').effectiveCapacity.limits.at(-1)?.detail).toBe('cpu.max 150000/100000 = 1.5 CPUs at /docker/abc123');
  });

  it('reports the cpuset limit with the count after it', () => {
    const limits = discoverFixture('cgroup-cpuset').effectiveCapacity.limits;
    expect(limits).toEqual([
      { source: 'affinity', cpus: 8, detail: 'Cpus_allowed_list 0-7' },
      { source: 'online', cpus: 8, detail: 'online 0-7' },
      { source: 'cgroupCpuset', cpus: 2, detail: 'cpuset.cpus.effective 2-3 at /kubepods.slice/pod42/ctr' },
    ]);
  });

  it('names both entries of a duplicated node id and the files of an invalid list', () => {
    const dup = catchError(() => discoverFixture('error-duplicate-node')) as TenferroError;
    expect(dup.detail).toEqual({ id: 2, entries: ['node02', 'node2'] });
    const bad = catchError(() => discoverFixture('error-malformed-cpulist')) as TenferroError;
    expect(String(bad.detail['path'])).toMatch(/node0[/\\]cpulist$/);
  });

  it('reads the affinity from procRoot even when sysfs is the real one, and a missing status file is AffinityUnavailable', () => {
    const e = catchError(() => discoverCpuTopology({ procRoot: join(FIXTURES, 'does-not-exist') })) as TenferroError;
    expect([e.code, e.kind]).toEqual(['AffinityUnavailable', 'Unsupported']);
  });

  it('rejects bad options with InvalidArgument', () => {
    for (const options of [null, 5, { sysfsRoot: 3 }, { procRoot: '' }]) {
      const e = catchError(() => discoverCpuTopology(options as never)) as TenferroError;
      expect([e.code, e.kind, e.op]).toEqual(['InvalidArgument', 'Validation', 'discoverCpuTopology']);
    }
  });
});

describe.runIf(process.platform === 'linux')('discoverCpuTopology: this machine', () => {
  it('allowedCpus equals Cpus_allowed_list of /proc/self/status; node ids are /sys node directories', () => {
    const t = discoverCpuTopology();
    const line = /^Cpus_allowed_list:\s*(.*)$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    expect(line).not.toBeNull();
    expect(t.allowedCpus.equals(CpuSet.parse(line![1]!))).toBe(true);
    expect(['os-binding', 'proc-status']).toContain(t.source.allowedCpus);

    const nodeDir = '/sys/devices/system/node';
    const dirIds = existsSync(nodeDir)
      ? readdirSync(nodeDir).flatMap((e) => (/^node(\d+)$/.test(e) ? [Number(e.slice(4))] : []))
      : [];
    for (const n of t.nodes) {
      expect(dirIds).toContain(n.id);
      expect(n.cpus.isSubsetOf(t.allowedCpus)).toBe(true);
    }
    expect(t.effectiveCapacity.cpus).toBeGreaterThanOrEqual(1);
    expect(t.effectiveCapacity.cpus).toBeLessThanOrEqual(t.allowedCpus.size);
  });
});

// --- generated layouts ------------------------------------------------------------------------

const tempRoots: string[] = [];
afterAll(() => {
  for (const root of tempRoots) rmSync(root, { recursive: true, force: true });
});

interface Layout {
  /** Node id → its OS cpulist ids (empty = memory-only). Ids are sparse and may overlap. */
  readonly nodes: ReadonlyArray<{ readonly id: number; readonly cpus: readonly number[] }>;
  readonly allowed: readonly number[];
}

/** Sparse node ids; each CPU 0..47 belongs to one node or none; sometimes a few CPUs are added to a second node (overlap). */
const layoutArb: fc.Arbitrary<Layout> = fc.uniqueArray(fc.integer({ min: 0, max: 63 }), { maxLength: 6 }).chain((ids) =>
  fc
    .record({
      owner: fc.array(fc.integer({ min: -1, max: ids.length - 1 }), { minLength: 48, maxLength: 48 }),
      extra:
        ids.length === 0
          ? fc.constant<[number, number][]>([])
          : fc.oneof(
              { weight: 1, arbitrary: fc.constant<[number, number][]>([]) },
              { weight: 1, arbitrary: fc.array(fc.tuple(fc.integer({ min: 0, max: 47 }), fc.integer({ min: 0, max: ids.length - 1 })), { minLength: 1, maxLength: 4 }) },
            ),
      // A dense random mask (about half the CPUs) plus one CPU that is always allowed.
      mask: fc.array(fc.boolean(), { minLength: 48, maxLength: 48 }),
      always: fc.integer({ min: 0, max: 47 }),
    })
    .map(({ owner, extra, mask, always }) => {
      const allowed = mask.flatMap((on, cpu) => (on || cpu === always ? [cpu] : []));
      const cpus = ids.map(() => new Set<number>());
      owner.forEach((o, cpu) => {
        if (o >= 0) cpus[o]!.add(cpu);
      });
      for (const [cpu, o] of extra) cpus[o]!.add(cpu);
      return { nodes: ids.map((id, i) => ({ id, cpus: [...cpus[i]!] })), allowed };
    }),
);

function writeLayout(layout: Layout): string {
  const root = mkdtempSync(join(tmpdir(), 'tenferro-topology-'));
  tempRoots.push(root);
  const put = (rel: string, text: string): void => {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  };
  put('proc/self/status', `Name:\tnode\nCpus_allowed_list:\t${CpuSet.of(layout.allowed)}\n`);
  put('sys/devices/system/cpu/online', '0-47\n');
  mkdirSync(join(root, 'sys/devices/system/node'), { recursive: true });
  for (const n of layout.nodes) {
    put(`sys/devices/system/node/node${n.id}/cpulist`, n.cpus.length === 0 ? '\n' : `${CpuSet.of(n.cpus)}\n`);
  }
  return root;
}

describe('discoverCpuTopology: generated layouts (fast-check)', () => {
  it('nodes are sorted by id, disjoint, subsets of allowed, and keep their OS ids; overlaps are reported', () => {
    let overlapsSeen = 0;
    let disjointMultiSeen = 0;
    fc.assert(
      fc.property(layoutArb, (layout) => {
        const root = writeLayout(layout);
        try {
          const allowed = new Set(layout.allowed);
          const usable = layout.nodes
            .map((n) => ({ id: n.id, cpus: n.cpus.filter((c) => allowed.has(c)).sort((a, b) => a - b) }))
            .filter((n) => n.cpus.length > 0)
            .sort((a, b) => a.id - b.id);
          const overlap = usable.some((a, i) => usable.slice(i + 1).some((b) => b.cpus.some((c) => a.cpus.includes(c))));

          let t: CpuTopology;
          try {
            t = discoverCpuTopology({ sysfsRoot: join(root, 'sys'), procRoot: join(root, 'proc') });
          } catch (error) {
            expect(overlap).toBe(true);
            overlapsSeen++;
            expect(TenferroError.is(error, 'OverlappingNodes')).toBe(true);
            const { first, second, cpus } = (error as TenferroError).detail as { first: number; second: number; cpus: number[] };
            expect(first).toBeLessThan(second);
            const a = usable.find((n) => n.id === first)!.cpus;
            const b = usable.find((n) => n.id === second)!.cpus;
            expect(cpus).toEqual(a.filter((c) => b.includes(c)));
            return;
          }
          expect(overlap).toBe(false);
          if (usable.length >= 2) disjointMultiSeen++;

          expect(t.allowedCpus.toArray()).toEqual([...allowed].sort((a, b) => a - b));
          expect(t.nodes.map((n) => ({ id: n.id, cpus: n.cpus.toArray() }))).toEqual(usable);
          const ids = t.nodes.map((n) => n.id);
          expect(ids).toEqual([...ids].sort((a, b) => a - b));
          for (const [i, a] of t.nodes.entries()) {
            expect(a.cpus.isSubsetOf(t.allowedCpus)).toBe(true);
            for (const b of t.nodes.slice(i + 1)) expect(a.cpus.overlaps(b.cpus)).toBe(false);
          }
          expect(t.effectiveCapacity.cpus).toBe(allowed.size);
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: 100, seed: 20240611 },
    );
    // The generator exercises both outcomes (guards against a degenerate arbitrary).
    expect(overlapsSeen, 'layouts with overlapping usable nodes').toBeGreaterThan(5);
    expect(disjointMultiSeen, 'disjoint layouts with two or more usable nodes').toBeGreaterThan(10);
  });
});
