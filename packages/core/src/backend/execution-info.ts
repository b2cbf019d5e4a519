import type { ArbiterKind, ArbiterStats } from '../arbiter/arbiter.js';
import { MachineArbiter } from '../arbiter/machine-arbiter.js';
import type { CpuDomainExecutorCapabilities } from '../contract/executor.js';
import type { CpuAdmissionMode, CpuDomainId, CpuDomainOwnership } from '../contract/cpu-domain.js';
import { type CpuBackendKind, type CpuExecutionMode, type CpuPlacement, describePlacement } from '../contract/backend-kind.js';
import type { CpuProviderPackage } from '../provider/provider-package.js';
import type { ReferenceFallback } from './provider-discovery.js';
import type { Coordinator } from '../runtime/engine/coordinator.js';
import type { CpuEngine } from '../runtime/engine/cpu-engine.js';
import type { DomainPlan } from '../runtime/placement.js';
import { statusCpusAllowed } from '../runtime/workers/thread-self.js';
import type { WorkerBufferTableStats } from '../runtime/workers/buffer-table.js';

export type { WorkerBufferTableStats };
import { CpuSet } from '../topology/cpu-set.js';
import type { SharedTensorAllocationDomain } from '../buffer/allocation-domain.js';
import { providerPackageOf } from '../provider/provider-packages.js';
import type { IndexedPlanCacheLimits } from '../util/indexed-plan-cache.js';

/** One worker as observed at verification: its kernel thread id and the mask read back. */
export interface WorkerInfo {
  readonly tid: number;
  /** cpulist; `undefined` for unpinned compatibility workers. */
  readonly cpus: string | undefined;
  /**
   * The worker's buffer table now: the storage it keeps between tasks so that packed kernel
   * arguments name it by id (a count and bytes, its byte bound, what it was told to forget and
   * has not released yet). A table keeps only storage the main isolate can still name (#35).
   */
  readonly bufferTable: WorkerBufferTableStats;
}

/** `executionInfo()` (R119): what a handle runs on. Provider strings are for logs only (R120). */
export interface CpuExecutionInfo {
  readonly backendKind: CpuBackendKind;
  readonly executionMode: CpuExecutionMode;
  readonly requestedPlacement: string;
  /** Present for managed and external cooperative execution only (R20). */
  readonly resolvedPlacement: { readonly kind: 'allAllowed' | 'numaNode'; readonly id?: number; readonly cpus: string } | undefined;
  readonly topology: { readonly allowedCpus: string; readonly nodes: readonly { readonly id: number; readonly cpus: string }[] };
  readonly domainId: CpuDomainId;
  /** Absent for caller-managed and compatibility execution. */
  readonly domainCpus: string | undefined;
  readonly workerCount: number;
  readonly threadBudget: number;
  readonly admissionMode: CpuAdmissionMode;
  readonly domainOwnership: CpuDomainOwnership;
  readonly executorAffinity: CpuDomainExecutorCapabilities['affinity'];
  readonly executorShutdown: CpuDomainExecutorCapabilities['shutdown'];
  readonly providerDiagnostic: string;
  /**
   * Set when this backend runs core's TypeScript reference GEMM because no native provider of its
   * kind could be used (created without `providers`): why, and what fixes it. `undefined` otherwise.
   */
  readonly fallback: ReferenceFallback | undefined;
  /** Whether the engine of this placement is built yet (engines are built lazily). */
  readonly engineBuilt: boolean;
  /** The workers as observed at verification (empty until the engine is built). */
  readonly workers: readonly WorkerInfo[];
  /** Executor entries made on this handle's engine so far (`install` and `submit` calls). */
  readonly executorEntries: { readonly installs: number; readonly submits: number };
  /**
   * Which arbiter admits this backend's executions: `'machine'` — one state for every isolate of
   * every process that joined the same machine arbiter (#41); `'process'` — one state for every
   * worker_thread isolate of the process (the `@tenferro/os` binding loaded); `'isolate'` — this
   * isolate only (the binding is unavailable, so backends in other isolates are not kept apart).
   */
  readonly arbiter: ArbiterKind;
  /**
   * With `arbiter === 'machine'` (#41): the name of the machine arbiter this process joined
   * (`TENFERRO_MACHINE_ARBITER` or `joinMachineArbiter`, state in `/dev/shm/tenferro-<name>`);
   * `undefined` otherwise.
   */
  readonly machineArbiter: string | undefined;
  /** This isolate's permits and waiters on that arbiter right now. */
  readonly admission: ArbiterStats;
  /** The name of the allocation domain this handle's fresh outputs come from (R2), or `undefined` (the engine's buffer pool). */
  readonly allocationDomain: string | undefined;
  /** The limits of the engines' caches, the same for every engine of the coordinator (R5, R116, R118). */
  readonly caches: {
    /** Slots of each engine's GEMM-analysis cache (`setAnalysisCacheCapacity`). */
    readonly gemmAnalysisCapacity: number;
    /** Bounds of each engine's indexed-plan cache (`setIndexedPlanCacheLimits`). */
    readonly indexedPlans: IndexedPlanCacheLimits;
  };
}

/** `checkPlacement()`: each pinned worker's mask now, against the set it was verified on. */
export interface PlacementCheck {
  readonly ok: boolean;
  readonly workers: readonly { readonly tid: number; readonly expected: string; readonly observed: string | undefined; readonly ok: boolean }[];
}

/** What `executionInfo()` reports about one handle. */
export interface HandleFacts {
  readonly coordinator: Coordinator;
  readonly plan: DomainPlan;
  readonly placement: CpuPlacement;
  readonly providers: readonly CpuProviderPackage[];
  /** Why no provider package was discovered, when none was. */
  readonly providerNote: string | undefined;
  readonly fallback: ReferenceFallback | undefined;
  readonly allocationDomain?: SharedTensorAllocationDomain | undefined;
}

/** `executionInfo()` (R119): the plan, and — once built — what the engine observed. */
export function describeExecution(h: HandleFacts): CpuExecutionInfo {
  const c = h.coordinator;
  const plan = h.plan;
  const engine = c.builtEngine(plan);
  const domain = engine?.domain ?? plan.domain;
  const caps = engine?.capabilities;
  const placement = plan.resolvedPlacement;
  return Object.freeze({
    backendKind: c.kind,
    executionMode: plan.mode,
    requestedPlacement: describePlacement(h.placement),
    resolvedPlacement:
      placement === undefined
        ? undefined
        : placement.kind === 'numaNode'
          ? { kind: 'numaNode' as const, id: placement.id, cpus: placement.cpus.toString() }
          : { kind: 'allAllowed' as const, cpus: placement.cpus.toString() },
    topology: {
      allowedCpus: c.topology.allowedCpus.toString(),
      nodes: c.topology.nodes.map((n) => ({ id: n.id, cpus: n.cpus.toString() })),
    },
    domainId: domain.id,
    domainCpus: plan.domainCpus?.toString(),
    workerCount: caps?.workerCount ?? domain.threadBudget,
    threadBudget: domain.threadBudget,
    admissionMode: domain.admissionMode,
    domainOwnership: domain.ownership,
    executorAffinity: plan.affinity,
    executorShutdown: domain.ownership === 'externalManaged' ? 'callerOwned' : (caps?.shutdown ?? 'tenferroOwned'),
    providerDiagnostic: providerDiagnostic(h),
    fallback: h.fallback,
    engineBuilt: engine !== undefined,
    workers: workerInfo(engine),
    executorEntries: { installs: engine?.entries.installs ?? 0, submits: engine?.entries.submits ?? 0 },
    arbiter: c.arbiter.kind,
    machineArbiter: c.arbiter instanceof MachineArbiter ? c.arbiter.name : undefined,
    admission: c.arbiter.stats(),
    allocationDomain: h.allocationDomain?.name,
    caches: Object.freeze({ gemmAnalysisCapacity: c.analysisCapacity, indexedPlans: c.indexedPlanLimits }),
  });
}

const NO_TABLE: WorkerBufferTableStats = Object.freeze({ buffers: 0, bytes: 0, limitBytes: 0, releasingBytes: 0, collections: 0 });

function workerInfo(engine: CpuEngine | undefined): WorkerInfo[] {
  const observed = engine?.workers() ?? [];
  const tables = engine?.pool?.bufferTables();
  return observed.map((w, i) => Object.freeze({ tid: w.tid, cpus: w.cpus?.toString(), bufferTable: tables?.[i] ?? NO_TABLE }));
}

/**
 * Each pinned worker's `Cpus_allowed_list` in `/proc/self/task/<tid>/status` now, against the set
 * it was pinned and verified to: something outside tenferro (`taskset -p`, a cgroup change) can
 * move a thread. A lane of a fan-out that the scheduler had put on another running lane's CPU
 * narrows its mask to one CPU of the set for that task (`lane-spread.ts`): while it says so, one
 * CPU of the set is its expected mask too. Unpinned and external engines report no workers.
 */
export function checkWorkerPlacement(engine: CpuEngine | undefined): PlacementCheck {
  const pool = engine?.pool;
  const workers = (engine?.workers() ?? [])
    .filter((w) => w.cpus !== undefined)
    .map((w) => {
      const narrowedBefore = pool?.narrowed(w.index) === true;
      const observed = statusCpusAllowed(`/proc/self/task/${w.tid}/status`);
      const narrowed = narrowedBefore || pool?.narrowed(w.index) === true;
      const set = observed === undefined ? undefined : CpuSet.parse(observed);
      const ok = set !== undefined && (set.equals(w.cpus!) || (narrowed && set.size === 1 && w.cpus!.has(set.first)));
      return Object.freeze({ tid: w.tid, expected: w.cpus!.toString(), observed, ok });
    });
  return Object.freeze({ ok: workers.every((w) => w.ok), workers });
}

const WORKERS_OF_MODE: Readonly<Record<CpuExecutionMode, string>> = {
  managed: 'tenferro-managed pinned workers',
  providerDefaultExclusive: 'tenferro-managed pinned workers, provider-exclusive',
  compatibility: 'unpinned compatibility workers',
  externalManaged: 'externally managed CPU executor',
  callerManaged: 'caller-managed CPU executor and admission',
};

/** The provider packages in use and the workers they run on, for logs only (R120). */
function providerDiagnostic(h: HandleFacts): string {
  const workers = WORKERS_OF_MODE[h.plan.mode];
  const named = h.providers.filter((p) => p.kind === h.coordinator.kind).map((p) => p.name);
  // Packages of kind 'any' (tprims) fill some slots of either kind's bundle.
  const also = h.providers.filter((p) => p.kind === 'any').map((p) => ` + ${p.name}`).join('');
  if (named.length > 0) return `${named.join(', ')}${also} (${workers})`;
  const note = h.providerNote ?? `install ${providerPackageOf('faer').name} for native kernels`;
  return `reference providers (TypeScript, sequential, slow; ${note})${also} on ${workers}`;
}
