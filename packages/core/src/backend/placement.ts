import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { CpuSet } from '../topology/cpu-set.js';
import type { CpuTopology } from '../topology/topology-types.js';
import type { CpuDomainId } from './cpu-domain.js';

export type CpuBackendKind = 'faer' | 'blas';

/** Requested placement (D6). */
export type CpuPlacement = 'auto' | 'allAllowed' | { readonly numaNode: number };

export type ResolvedCpuPlacement =
  | { readonly kind: 'allAllowed'; readonly cpus: CpuSet }
  | { readonly kind: 'numaNode'; readonly id: number; readonly cpus: CpuSet };

export type CpuExecutionMode = 'managed' | 'externalManaged' | 'callerManaged' | 'providerDefaultExclusive' | 'compatibility';

/** How a managed coordinator runs one placement (contract `ResolvedCpuExecution`). */
export type ResolvedExecution =
  | { readonly mode: 'managed'; readonly placement: ResolvedCpuPlacement }
  | { readonly mode: 'compatibility' }
  | { readonly mode: 'providerDefaultExclusive' }
  | { readonly mode: 'externalManaged'; readonly placement: ResolvedCpuPlacement; readonly domainId: CpuDomainId }
  | { readonly mode: 'callerManaged'; readonly domainId: CpuDomainId };

export function validateKind(kind: unknown, op: string, param = 'options.kind'): CpuBackendKind {
  if (kind === 'faer' || kind === 'blas') return kind;
  throw invalidArgument(op, param, "'faer' or 'blas'", kind);
}

export function validatePlacement(placement: unknown, op: string, param = 'options.placement'): CpuPlacement {
  if (placement === 'auto' || placement === 'allAllowed') return placement;
  if (typeof placement === 'object' && placement !== null && 'numaNode' in placement) {
    const id = (placement as { numaNode: unknown }).numaNode;
    if (typeof id === 'number' && Number.isInteger(id) && id >= 0) return Object.freeze({ numaNode: id });
    throw invalidArgument(op, `${param}.numaNode`, 'a non-negative integer NUMA node id', id);
  }
  throw invalidArgument(op, param, "'auto', 'allAllowed' or { numaNode: id }", placement);
}


export function describePlacement(p: CpuPlacement): string {
  return typeof p === 'string' ? p : `{ numaNode: ${p.numaNode} }`;
}

/**
 * Resolve a requested placement (R12–R14): blas accepts only `auto` (checked first), which
 * becomes provider-default-exclusive; without verified affinity `auto` becomes compatibility
 * and every explicit placement fails; faer `auto`/`allAllowed` is the whole allowed set and a
 * NUMA node must be a usable node of the topology.
 */
export function resolvePlacement(
  kind: CpuBackendKind,
  placement: CpuPlacement,
  topology: CpuTopology,
  affinityAvailable: boolean,
  op: string,
): ResolvedExecution {
  if (kind === 'blas') {
    if (placement !== 'auto') {
      throw new TenferroError(
        'ExternalProviderAffinityUnmanaged',
        `the blas kind accepts only placement 'auto' (received ${describePlacement(placement)}): tenferro cannot establish the CPU affinity of provider-owned BLAS threads`,
        { op, detail: { requested: describePlacement(placement), backend: kind } },
      );
    }
    return { mode: 'providerDefaultExclusive' };
  }
  if (!affinityAvailable) {
    if (placement === 'auto') return { mode: 'compatibility' };
    throw new TenferroError(
      'ManagedAffinityUnavailable',
      `placement ${describePlacement(placement)} needs verified worker affinity, which is unavailable here (no @tenferro/os binding); use 'auto' for unpinned compatibility mode`,
      { op, detail: { requested: describePlacement(placement) } },
    );
  }
  if (placement === 'auto' || placement === 'allAllowed') {
    return { mode: 'managed', placement: Object.freeze({ kind: 'allAllowed', cpus: topology.allowedCpus }) };
  }
  if (!topology.hasNumaNodes()) {
    throw new TenferroError('NumaDiscoveryUnavailable', `NUMA node ${placement.numaNode} requested but this topology has no NUMA information`, {
      op,
      detail: { node: placement.numaNode },
    });
  }
  const node = topology.node(placement.numaNode);
  if (node === undefined) {
    throw new TenferroError(
      'UnknownNumaNode',
      `NUMA node ${placement.numaNode} is not a usable node of this process (usable: ${topology.nodes.map((n) => n.id).join(', ')})`,
      { op, detail: { node: placement.numaNode } },
    );
  }
  return { mode: 'managed', placement: Object.freeze({ kind: 'numaNode', id: node.id, cpus: node.cpus }) };
}

/** Managed domain ids: all-allowed 0, NUMA node 1 + its position in the sorted node list (D6). */
export function managedDomainId(placement: ResolvedCpuPlacement, topology: CpuTopology): number {
  if (placement.kind === 'allAllowed') return 0;
  return 1 + topology.nodes.findIndex((n) => n.id === placement.id);
}
