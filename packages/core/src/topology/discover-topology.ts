/**
 * CPU / NUMA topology discovery from the process affinity mask, sysfs and cgroupfs (contract
 * glossary "Topology", R7–R9). Synchronous, reads only, and returns a frozen snapshot.
 */
import { join } from 'node:path';
import { getProcessAffinity, loadOs } from '@tenferro/os';
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import { effectiveCapacity, readCgroupPath } from './cgroup-capacity.js';
import { normalizeCpuIds } from './cpu-list.js';
import { CpuSet } from './cpu-set.js';
import { DISCOVER_OP, listDirectory, parseOsCpuList, readOptionalCpuList, readOptionalText } from './sysfs-reader.js';
import type { CpuNode, CpuTopology, DiscoverTopologyOptions, TopologySource } from './topology-types.js';

export type { CapacityLimit, CpuNode, CpuTopology, DiscoverTopologyOptions, EffectiveCapacity, TopologySource } from './topology-types.js';

const OP = DISCOVER_OP;
const DEFAULT_SYSFS_ROOT = '/sys';
const DEFAULT_PROC_ROOT = '/proc';
/** `node<N>` directory names: N is the sparse OS node id. */
const NODE_ENTRY = /^node(\d+)$/;

/**
 * Discover the CPU topology of this process.
 *
 * - `allowedCpus`: the process affinity mask, from `sched_getaffinity` (`@tenferro/os`) when
 *   `procRoot` is not given and the addon loads, otherwise `Cpus_allowed_list` of
 *   `<procRoot>/self/status`.
 * - `nodes`: `<sysfsRoot>/devices/system/node/node<N>/cpulist` ∩ `allowedCpus`, sorted by the
 *   sparse id N; memory-only nodes and nodes with no allowed CPU are omitted. Missing NUMA
 *   information is not an error: `nodes` is empty and `source.numa` is `unavailable`.
 * - `effectiveCapacity`: |affinity ∩ online ∩ cgroup v2 cpuset|, capped by the CFS quota.
 *
 * Errors (all `TenferroError` with op `discoverCpuTopology`): `EmptyAllowedCpuSet`,
 * `AffinityUnavailable`, `AffinitySyscallFailed`, `InvalidCpuList` (a malformed OS list),
 * `DuplicateNode`, `OverlappingNodes` (`detail: {first, second, cpus}`), `TopologyDiscovery`
 * (an unreadable file or a malformed `cpu.max`), `InvalidArgument` (bad options).
 *
 * @example
 * ```ts
 * import { discoverCpuTopology } from '@tenferro/core';
 *
 * const topology = discoverCpuTopology();
 * console.log(topology.effectiveCapacity.cpus >= 1, topology.hasNumaNodes() === topology.nodes.length > 0); // prints: true true
 * console.log(String(topology.allowedCpus)); // e.g. 0-7
 * ```
 */
export function discoverCpuTopology(options?: DiscoverTopologyOptions): CpuTopology {
  const { sysfsRoot, procRoot, procRootGiven } = validateOptions(options);

  const affinity = readAllowedCpus(procRoot, procRootGiven);
  const allowedCpus = affinity.cpus;
  const onlineCpus = readOnlineCpus(sysfsRoot);
  const numa = readNodes(sysfsRoot, allowedCpus);
  const cgroup = readCgroupPath(procRoot);
  const capacity = effectiveCapacity({
    allowed: allowedCpus,
    allowedFrom: affinity.from === 'os-binding' ? 'sched_getaffinity' : 'Cpus_allowed_list',
    online: onlineCpus,
    sysfsRoot,
    cgroupPath: cgroup,
  });

  const nodes = Object.freeze(numa.nodes);
  const byId = new Map(nodes.map((n) => [n.id, n] as const));
  const source: TopologySource = Object.freeze({
    allowedCpus: affinity.from,
    sysfsRoot,
    procRoot,
    numa: numa.available ? 'sysfs' : 'unavailable',
    cgroup,
  });
  const topology: CpuTopology = {
    allowedCpus,
    onlineCpus,
    nodes,
    effectiveCapacity: capacity,
    source,
    node(id: number): CpuNode | undefined {
      return byId.get(id);
    },
    hasNumaNodes(): boolean {
      return nodes.length > 0;
    },
  };
  return Object.freeze(topology);
}

function validateOptions(options: unknown): { sysfsRoot: string; procRoot: string; procRootGiven: boolean } {
  if (options === undefined) return { sysfsRoot: DEFAULT_SYSFS_ROOT, procRoot: DEFAULT_PROC_ROOT, procRootGiven: false };
  if (options === null || typeof options !== 'object') throw invalidArgument(OP, 'options', 'an options object or undefined', options);
  const { sysfsRoot, procRoot } = options as { sysfsRoot?: unknown; procRoot?: unknown };
  for (const [name, value] of [
    ['sysfsRoot', sysfsRoot],
    ['procRoot', procRoot],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw invalidArgument(OP, `options.${name}`, 'a non-empty path string', value);
    }
  }
  return {
    sysfsRoot: (sysfsRoot as string | undefined) ?? DEFAULT_SYSFS_ROOT,
    procRoot: (procRoot as string | undefined) ?? DEFAULT_PROC_ROOT,
    procRootGiven: procRoot !== undefined,
  };
}

// --- affinity -----------------------------------------------------------------------------

interface Allowed {
  readonly cpus: CpuSet;
  readonly from: TopologySource['allowedCpus'];
}

function readAllowedCpus(procRoot: string, procRootGiven: boolean): Allowed {
  if (!procRootGiven && osBindingAvailable()) {
    let ids: number[];
    try {
      ids = getProcessAffinity();
    } catch (error) {
      throw fromOsError(error);
    }
    return { cpus: allowedSet(normalizeCpuIds(ids, OP), 'sched_getaffinity'), from: 'os-binding' };
  }
  return { cpus: readStatusAffinity(procRoot), from: 'proc-status' };
}

function osBindingAvailable(): boolean {
  try {
    return loadOs().available;
  } catch {
    return false;
  }
}

/** Re-raise an `@tenferro/os` error (same code when it is a tenferro code) under this op. */
function fromOsError(error: unknown): TenferroError {
  const branded = TenferroError.is(error);
  const code = branded ? error.code : 'AffinityUnavailable';
  const message = error instanceof Error ? error.message : String(error);
  return new TenferroError(code, `cannot read the process affinity mask: ${message}`, {
    op: OP,
    cause: error,
    detail: branded ? { ...error.detail } : {},
  });
}

function readStatusAffinity(procRoot: string): CpuSet {
  const path = join(procRoot, 'self', 'status');
  let text: string | undefined;
  let cause: unknown;
  try {
    text = readOptionalText(path);
  } catch (error) {
    cause = error;
  }
  if (text === undefined) {
    throw new TenferroError('AffinityUnavailable', `cannot read the process affinity mask: ${path} is not readable`, {
      op: OP,
      cause,
      detail: { path },
    });
  }
  const line = /^Cpus_allowed_list:[ \t]*(.*)$/m.exec(text);
  if (line === null) {
    throw new TenferroError('AffinityUnavailable', `cannot read the process affinity mask: ${path} has no Cpus_allowed_list line`, {
      op: OP,
      detail: { path },
    });
  }
  return allowedSet(parseOsCpuList(line[1]!, `${path} Cpus_allowed_list`), path);
}

function allowedSet(ids: number[], from: string): CpuSet {
  if (ids.length === 0) {
    throw new TenferroError('EmptyAllowedCpuSet', `the process affinity mask read from ${from} is empty`, {
      op: OP,
      detail: { source: from },
    });
  }
  return CpuSet.of(ids);
}

// --- online CPUs --------------------------------------------------------------------------

function readOnlineCpus(sysfsRoot: string): CpuSet | undefined {
  const ids = readOptionalCpuList(join(sysfsRoot, 'devices', 'system', 'cpu', 'online'));
  return ids === undefined || ids.length === 0 ? undefined : CpuSet.of(ids);
}

// --- NUMA nodes ---------------------------------------------------------------------------

function readNodes(sysfsRoot: string, allowed: CpuSet): { available: boolean; nodes: CpuNode[] } {
  const nodeDir = join(sysfsRoot, 'devices', 'system', 'node');
  const entries = listDirectory(nodeDir);
  if (entries === undefined) return { available: false, nodes: [] };

  // Sparse ids: take every node<N> entry; two spellings of one id (node2, node02) are a duplicate.
  const entryById = new Map<number, string>();
  for (const entry of [...entries].sort()) {
    const m = NODE_ENTRY.exec(entry);
    if (m === null) continue;
    if (m[1]!.length > 9) {
      throw new TenferroError('TopologyDiscovery', `${join(nodeDir, entry)}: node id out of range`, {
        op: OP,
        detail: { path: join(nodeDir, entry) },
      });
    }
    const id = Number(m[1]);
    const previous = entryById.get(id);
    if (previous !== undefined) {
      throw new TenferroError('DuplicateNode', `NUMA node ${id} appears twice in ${nodeDir} (${previous} and ${entry})`, {
        op: OP,
        detail: { id, entries: [previous, entry] },
      });
    }
    entryById.set(id, entry);
  }

  const hasMemoryIds = readOptionalCpuList(join(nodeDir, 'has_memory'));
  const hasMemorySet = hasMemoryIds === undefined ? undefined : new Set(hasMemoryIds);

  const nodes: CpuNode[] = [];
  for (const id of [...entryById.keys()].sort((a, b) => a - b)) {
    const dir = join(nodeDir, entryById.get(id)!);
    const ids = readOptionalCpuList(join(dir, 'cpulist'));
    // No cpulist (not a real node directory) or an empty one (a memory-only node): no CPUs to use.
    if (ids === undefined || ids.length === 0) continue;
    const cpus = CpuSet.of(ids).intersect(allowed);
    if (cpus === undefined) continue; // R7: no allowed CPU on this node.
    const memTotalKb = readMemTotalKb(join(dir, 'meminfo'));
    const hasMemory = hasMemorySet !== undefined ? hasMemorySet.has(id) : memTotalKb !== undefined && memTotalKb > 0;
    const node: CpuNode =
      memTotalKb === undefined ? { id, cpus, hasMemory } : { id, cpus, hasMemory, memoryBytes: memTotalKb * 1024 };
    nodes.push(Object.freeze(node));
  }

  // R8: usable nodes are disjoint.
  for (let i = 0; i < nodes.length; i++) {
    for (let j = i + 1; j < nodes.length; j++) {
      const a = nodes[i]!;
      const b = nodes[j]!;
      const shared = a.cpus.intersect(b.cpus);
      if (shared !== undefined) {
        throw new TenferroError('OverlappingNodes', `NUMA nodes ${a.id} and ${b.id} share CPUs ${shared}`, {
          op: OP,
          detail: { first: a.id, second: b.id, cpus: shared.toArray() },
        });
      }
    }
  }
  return { available: true, nodes };
}

/** `Node <N> MemTotal: <X> kB` of a node's meminfo, in kB; `undefined` when absent. */
function readMemTotalKb(path: string): number | undefined {
  const text = readOptionalText(path);
  if (text === undefined) return undefined;
  const m = /^Node\s+\d+\s+MemTotal:\s*(\d+)\s*kB/m.exec(text);
  return m === null ? undefined : Number(m[1]);
}
