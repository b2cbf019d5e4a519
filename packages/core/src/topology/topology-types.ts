import type { CpuSet } from './cpu-set.js';

/** A usable NUMA node: its OS id (sparse, never renumbered) and its CPUs within the process affinity set (R7). */
export interface CpuNode {
  /** The kernel's node id (`/sys/devices/system/node/node<id>`). */
  readonly id: number;
  /** OS node CPUs ∩ process affinity; never empty. */
  readonly cpus: CpuSet;
  /** The node has local memory (`node/has_memory`, else `MemTotal > 0` in the node's meminfo). */
  readonly hasMemory: boolean;
  /** `Node <id> MemTotal` in bytes, when the node's meminfo is readable. */
  readonly memoryBytes?: number;
}

/** One source that bounded the effective capacity, with the CPU count after it applied. */
export interface CapacityLimit {
  readonly source: 'affinity' | 'online' | 'cgroupCpuset' | 'cgroupQuota';
  /** The capacity after this source was applied. */
  readonly cpus: number;
  /** What was read, for people (e.g. `cpu.max 150000/100000 = 1.5 CPUs`). */
  readonly detail: string;
}

/**
 * How many CPUs this process can really keep busy: |affinity ∩ online ∩ cgroup cpuset|, capped
 * by the cgroup v2 CFS quota (the most restrictive `cpu.max` from the process's cgroup up to the root).
 */
export interface EffectiveCapacity {
  /** At least 1. */
  readonly cpus: number;
  /** Every source that applied, in the order applied (affinity, online, cgroupCpuset, cgroupQuota). */
  readonly limits: readonly CapacityLimit[];
  /** The CFS quota in fractional CPUs (quota / period), when one is set. */
  readonly quota?: number;
}

/** Where each part of a {@link CpuTopology} came from. */
export interface TopologySource {
  /** `os-binding`: `sched_getaffinity` via `@tenferro/os`; `proc-status`: `Cpus_allowed_list` of `<procRoot>/self/status`. */
  readonly allowedCpus: 'os-binding' | 'proc-status';
  readonly sysfsRoot: string;
  readonly procRoot: string;
  /** `unavailable` when `<sysfsRoot>/devices/system/node` cannot be listed (the topology is all-allowed, no nodes). */
  readonly numa: 'sysfs' | 'unavailable';
  /** The process's cgroup v2 path (`0::<path>` in `<procRoot>/self/cgroup`), when known. */
  readonly cgroup: string | undefined;
}

/** The CPU topology as seen by this process (contract glossary "Topology", R7–R9). */
export interface CpuTopology {
  /** The process affinity set; tenferro never widens it (R9). */
  readonly allowedCpus: CpuSet;
  /** `/sys/devices/system/cpu/online`, or `undefined` when not readable. */
  readonly onlineCpus: CpuSet | undefined;
  /** Usable NUMA nodes sorted by OS id; nodes with no allowed CPU are omitted (R7). */
  readonly nodes: readonly CpuNode[];
  readonly effectiveCapacity: EffectiveCapacity;
  readonly source: TopologySource;
  /**
   * The usable node with this OS id, if any.
   *
   * @example
   * ```ts
   * import { discoverCpuTopology } from '@tenferro/core';
   *
   * const topology = discoverCpuTopology();
   * const first = topology.nodes[0];
   * console.log(first === undefined || topology.node(first.id) === first); // prints: true
   * console.log(topology.node(-1)); // prints: undefined
   * ```
   */
  node(id: number): CpuNode | undefined;
  /**
   * True when at least one usable NUMA node was discovered.
   *
   * @example
   * ```ts
   * import { discoverCpuTopology } from '@tenferro/core';
   *
   * const topology = discoverCpuTopology();
   * console.log(topology.hasNumaNodes() === topology.nodes.length > 0); // prints: true
   * console.log(topology.hasNumaNodes()); // e.g. true
   * ```
   */
  hasNumaNodes(): boolean;
}

/** Where `discoverCpuTopology` reads from: the sysfs and procfs roots (fake trees in tests). */
export interface DiscoverTopologyOptions {
  /** Root of sysfs; default `/sys`. */
  readonly sysfsRoot?: string;
  /** Root of procfs; default `/proc`. When given, the affinity set is always read from `<procRoot>/self/status`. */
  readonly procRoot?: string;
}
