import type { ArbiterStats } from '../arbiter/resource-arbiter.js';
import type { CpuDomainExecutorCapabilities } from '../executor/cpu-domain-executor.js';
import type { CpuAdmissionMode } from '../execution/execution-context.js';
import type { CpuDomainId, CpuDomainOwnership } from './cpu-domain.js';
import type { CpuBackendKind, CpuExecutionMode } from './placement.js';

/** One worker as observed at verification: its kernel thread id and the mask read back. */
export interface WorkerInfo {
  readonly tid: number;
  /** cpulist; `undefined` for unpinned compatibility workers. */
  readonly cpus: string | undefined;
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
  /** Whether the engine of this placement is built yet (engines are built lazily). */
  readonly engineBuilt: boolean;
  /** The workers as observed at verification (empty until the engine is built). */
  readonly workers: readonly WorkerInfo[];
  /** Executor entries made on this handle's engine so far (`install` and `submit` calls). */
  readonly executorEntries: { readonly installs: number; readonly submits: number };
  /** The process arbiter right now. */
  readonly admission: ArbiterStats;
}
