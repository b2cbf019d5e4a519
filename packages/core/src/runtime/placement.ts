import type { ResourceRequest } from '../arbiter/resource-request.js';
import { type CpuBackendKind, type CpuExecutionMode, type CpuPlacement, type ResolvedCpuPlacement, describePlacement } from '../contract/backend-kind.js';
import type { CpuDomain } from '../contract/cpu-domain.js';
import type { CpuDomainExecutorCapabilities } from '../contract/executor.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuSet } from '../topology/cpu-set.js';
import type { CpuTopology } from '../topology/topology-types.js';

/**
 * Everything a handle's placement means, decided once when the placement resolves (R12–R14,
 * R34, R41) and held by the handle: which engine runs it, the domain as providers and bundle
 * validation see it (id, thread budget, admission mode), the permit each execution requests,
 * and what may be claimed about affinity. Nothing else derives these from the mode again.
 */
export interface DomainPlan {
  readonly mode: CpuExecutionMode;
  /** The engine of the coordinator that runs this plan (engines are shared by key). */
  readonly engineKey: string;
  /** The domain, with the thread budget the engine is built with. */
  readonly domain: CpuDomain;
  /** CPUs the engine's workers are pinned to and verified on; `undefined`: unpinned or not tenferro's workers. */
  readonly pinCpus: CpuSet | undefined;
  /** What each execution asks the arbiter for (R34); `undefined` for caller-managed domains, admitted by their guard (R35). */
  readonly request: ResourceRequest | undefined;
  /** The affinity `executionInfo()` may claim (R46: a cooperative external domain is never upgraded). */
  readonly affinity: CpuDomainExecutorCapabilities['affinity'];
  /** The resolved placement reported to users: managed and external cooperative execution only (R20). */
  readonly resolvedPlacement: ResolvedCpuPlacement | undefined;
  /** The CPU set executions are arbitrated on, as reported; absent for compatibility and caller-managed execution. */
  readonly domainCpus: CpuSet | undefined;
}

/** What managed planning needs from the coordinator. */
export interface ManagedPlanning {
  readonly kind: CpuBackendKind;
  readonly topology: CpuTopology;
  /** The requested thread count (the budget is capped by the domain's CPUs). */
  readonly threads: number;
  /** Whether the OS binding can pin and verify workers (D1). */
  readonly affinityAvailable: boolean;
}

/**
 * Resolve a requested placement (R12–R14) into its plan: blas accepts only `auto` (checked
 * first), which becomes provider-default-exclusive on the all-allowed engine (R19); without
 * verified affinity `auto` becomes compatibility and every explicit placement fails; faer
 * `auto`/`allAllowed` is the whole allowed set and a NUMA node must be a usable node.
 */
export function planPlacement(p: ManagedPlanning, placement: CpuPlacement, op: string): DomainPlan {
  if (p.kind === 'blas') {
    if (placement !== 'auto') {
      throw new TenferroError(
        'ExternalProviderAffinityUnmanaged',
        `the blas kind accepts only placement 'auto' (received ${describePlacement(placement)}): tenferro cannot establish the CPU affinity of provider-owned BLAS threads`,
        { op, detail: { requested: describePlacement(placement), backend: p.kind } },
      );
    }
    const shared = allAllowedEnginePlan(p);
    return Object.freeze({ ...shared, mode: 'providerDefaultExclusive', request: { providerExclusive: true } as const, resolvedPlacement: undefined, domainCpus: p.topology.allowedCpus });
  }
  if (!p.affinityAvailable) {
    if (placement === 'auto') return allAllowedEnginePlan(p);
    throw new TenferroError(
      'ManagedAffinityUnavailable',
      `placement ${describePlacement(placement)} needs verified worker affinity, which is unavailable here (no @tenferro/os binding); use 'auto' for unpinned compatibility mode`,
      { op, detail: { requested: describePlacement(placement) } },
    );
  }
  if (placement === 'auto' || placement === 'allAllowed') return allAllowedEnginePlan(p);
  if (!p.topology.hasNumaNodes()) {
    throw new TenferroError('NumaDiscoveryUnavailable', `NUMA node ${placement.numaNode} requested but this topology has no NUMA information`, {
      op,
      detail: { node: placement.numaNode },
    });
  }
  const node = p.topology.node(placement.numaNode);
  if (node === undefined) {
    throw new TenferroError(
      'UnknownNumaNode',
      `NUMA node ${placement.numaNode} is not a usable node of this process (usable: ${p.topology.nodes.map((n) => n.id).join(', ')})`,
      { op, detail: { node: placement.numaNode } },
    );
  }
  return managedPlan(p, Object.freeze({ kind: 'numaNode', id: node.id, cpus: node.cpus }));
}

/**
 * Every domain a bundle of a managed coordinator can reach (R60): the all-allowed engine and
 * every lazily constructible NUMA engine, or the one compatibility engine — so that a later
 * `forPlacement` cannot bypass the bundle.
 */
export function reachableManagedDomains(p: ManagedPlanning): CpuDomain[] {
  if (!p.affinityAvailable) return [allAllowedEnginePlan(p).domain];
  return [
    allAllowedEnginePlan(p).domain,
    ...p.topology.nodes.map((n) => managedPlan(p, { kind: 'numaNode', id: n.id, cpus: n.cpus }).domain),
  ];
}

/** The engine on the whole allowed set: pinned (managed `allAllowed`) or, without affinity, unpinned compatibility. */
function allAllowedEnginePlan(p: ManagedPlanning): DomainPlan {
  const cpus = p.topology.allowedCpus;
  if (p.affinityAvailable) return managedPlan(p, Object.freeze({ kind: 'allAllowed', cpus }));
  return Object.freeze({
    mode: 'compatibility',
    engineKey: 'compatibility',
    domain: Object.freeze({
      id: 0,
      admissionMode: 'cooperativeCpuSet',
      placement: undefined,
      ownership: 'managed',
      threadBudget: Math.max(1, Math.min(p.threads, p.topology.effectiveCapacity.cpus)),
    }),
    pinCpus: undefined,
    request: { cpus },
    affinity: 'none',
    resolvedPlacement: undefined,
    domainCpus: undefined,
  });
}

/** A pinned engine on `placement`'s CPUs: budget `min(threads, |cpus|)` (R22). */
function managedPlan(p: ManagedPlanning, placement: ResolvedCpuPlacement): DomainPlan {
  return Object.freeze({
    mode: 'managed',
    engineKey: placement.kind === 'allAllowed' ? 'allAllowed' : `numaNode:${placement.id}`,
    domain: Object.freeze({
      id: managedDomainId(placement, p.topology),
      admissionMode: 'cooperativeCpuSet',
      placement,
      ownership: 'managed',
      threadBudget: Math.min(p.threads, placement.cpus.size),
    }),
    pinCpus: placement.cpus,
    request: { cpus: placement.cpus },
    affinity: 'tenferroPinnedVerified',
    resolvedPlacement: placement,
    domainCpus: placement.cpus,
  });
}

/** The plan of a registered external domain (§3.F): its engine, its declared placement, its guard or CPU-set permit. */
export function externalPlan(domain: CpuDomain, executorAffinity: CpuDomainExecutorCapabilities['affinity']): DomainPlan {
  const cooperative = domain.placement !== undefined;
  return Object.freeze({
    mode: cooperative ? 'externalManaged' : 'callerManaged',
    engineKey: `external:${String(domain.id)}`,
    domain,
    pinCpus: undefined,
    request: cooperative ? { cpus: domain.placement!.cpus } : undefined,
    affinity: cooperative ? 'callerDeclaredUnverified' : executorAffinity,
    resolvedPlacement: domain.placement,
    domainCpus: domain.placement?.cpus,
  });
}

/** Managed domain ids: all-allowed 0, NUMA node 1 + its position in the sorted node list (D6). */
export function managedDomainId(placement: ResolvedCpuPlacement, topology: CpuTopology): number {
  if (placement.kind === 'allAllowed') return 0;
  return 1 + topology.nodes.findIndex((n) => n.id === placement.id);
}
