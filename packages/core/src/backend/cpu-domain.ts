import type { CpuAdmissionMode } from '../execution/execution-context.js';
import type { ResolvedCpuPlacement } from './placement.js';

/** Stable domain id: managed all-allowed engine 0, managed NUMA engines 1 + position; external domains keep the caller's id. */
export type CpuDomainId = number | bigint;

export type CpuDomainOwnership = 'managed' | 'externalManaged';

/** A resource domain: what an engine's executions are admitted on and run with (contract glossary). */
export interface CpuDomain {
  readonly id: CpuDomainId;
  readonly admissionMode: CpuAdmissionMode;
  /** Cooperative domains: the resolved or declared placement. */
  readonly placement: ResolvedCpuPlacement | undefined;
  readonly ownership: CpuDomainOwnership;
  /** ≥ 1; equals the worker count for managed engines (R22). */
  readonly threadBudget: number;
}

