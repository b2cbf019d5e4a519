import type { DType } from '../tensor/dtype.js';

/** Why a provider declined, before it wrote anything (contract §4 "Provider outcomes"). */
export type CpuProviderUnsupported =
  | { readonly kind: 'dtype'; readonly dtype: DType }
  | { readonly kind: 'rank' }
  | { readonly kind: 'layout'; readonly operand: 'lhs' | 'rhs' | 'output' }
  | { readonly kind: 'conjugation' }
  | { readonly kind: 'accumulation' }
  | { readonly kind: 'stridedBatch' }
  | { readonly kind: 'grouped' }
  | { readonly kind: 'runtimeUnavailable'; readonly detail?: string };

/** A provider either executed, or declined before touching the output (R64). Failures are thrown. */
export type CpuProviderOutcome = { readonly executed: true } | { readonly executed: false; readonly reason: CpuProviderUnsupported };

export const EXECUTED: CpuProviderOutcome = Object.freeze({ executed: true });

/** Constructors for declined outcomes. */
export const Unsupported = Object.freeze({
  dtype: (dtype: DType): CpuProviderOutcome => Object.freeze({ executed: false, reason: Object.freeze({ kind: 'dtype', dtype }) }),
  layout: (operand: 'lhs' | 'rhs' | 'output'): CpuProviderOutcome => Object.freeze({ executed: false, reason: Object.freeze({ kind: 'layout', operand }) }),
  conjugation: (): CpuProviderOutcome => Object.freeze({ executed: false, reason: Object.freeze({ kind: 'conjugation' }) }),
  of: (reason: CpuProviderUnsupported): CpuProviderOutcome => Object.freeze({ executed: false, reason: Object.freeze({ ...reason }) }),
});

/** The retryable reasons: exactly `layout(lhs)`, `layout(rhs)` and `conjugation` (R105). */
export function isRetryable(reason: CpuProviderUnsupported): boolean {
  return reason.kind === 'conjugation' || (reason.kind === 'layout' && reason.operand !== 'output');
}

export function describeUnsupported(reason: CpuProviderUnsupported): string {
  switch (reason.kind) {
    case 'dtype':
      return `dtype ${reason.dtype}`;
    case 'layout':
      return `layout of ${reason.operand}`;
    case 'runtimeUnavailable':
      return `runtime unavailable${reason.detail ? ` (${reason.detail})` : ''}`;
    default:
      return reason.kind;
  }
}
