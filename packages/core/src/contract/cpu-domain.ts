import type { ResolvedCpuPlacement } from './backend-kind.js';

/** How executions of a domain are admitted: on its CPU set through the arbiter, or by the caller's own guard (R35, R43). */
export type CpuAdmissionMode = 'cooperativeCpuSet' | 'callerManaged';

/** Stable domain id: managed all-allowed engine 0, managed NUMA engines 1 + position; external domains keep the caller's id. */
export type CpuDomainId = number | bigint;

/** Who owns a domain's executor: tenferro (`managed` engines) or the application (`externalManaged`, {@link ExternalCpuDomain}). */
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


/** What bundle validation and dispatch need to know about a domain (R55–R62). */
export type ValidationDomain = Pick<CpuDomain, 'id' | 'threadBudget' | 'admissionMode'>;
