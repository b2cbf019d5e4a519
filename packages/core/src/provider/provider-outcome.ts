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

/**
 * The outcome of a provider call that executed (and wrote its output).
 *
 * @example
 * ```ts
 * import { type CpuGemmProvider, EXECUTED, Unsupported } from '@tenferro/core';
 *
 * const gemm: CpuGemmProvider['gemm'] = async (ctx, request) => {
 *   if (request.dtype === 'c64') return Unsupported.dtype('c64'); // declined before writing
 *   // … run the kernel tasks through ctx.run …
 *   return EXECUTED;
 * };
 * ```
 */
export const EXECUTED: CpuProviderOutcome = Object.freeze({ executed: true });

/**
 * Constructors for declined outcomes: a provider returns one before it writes anything.
 *
 * @example
 * ```ts
 * import { Unsupported } from '@tenferro/core';
 *
 * const declined = Unsupported.layout('lhs');
 * console.log(declined); // prints: { executed: false, reason: { kind: 'layout', operand: 'lhs' } }
 * ```
 */
export const Unsupported = Object.freeze({
  /** Declined: this dtype is not supported. */
  dtype: (dtype: DType): CpuProviderOutcome => Object.freeze({ executed: false, reason: Object.freeze({ kind: 'dtype', dtype }) }),
  /** Declined: the layout of this operand is not supported (`lhs`/`rhs`: retried on a dense copy, R105). */
  layout: (operand: 'lhs' | 'rhs' | 'output'): CpuProviderOutcome => Object.freeze({ executed: false, reason: Object.freeze({ kind: 'layout', operand }) }),
  /** Declined: conjugation is not supported (retried on a conjugated copy, R105). */
  conjugation: (): CpuProviderOutcome => Object.freeze({ executed: false, reason: Object.freeze({ kind: 'conjugation' }) }),
  /** Declined for any other {@link CpuProviderUnsupported} reason (`rank`, `grouped`, `runtimeUnavailable`, …). */
  of: (reason: CpuProviderUnsupported): CpuProviderOutcome => Object.freeze({ executed: false, reason: Object.freeze({ ...reason }) }),
});

/**
 * The retryable reasons: exactly `layout(lhs)`, `layout(rhs)` and `conjugation` (R105).
 *
 * @example
 * ```ts
 * import { isRetryable } from '@tenferro/core';
 *
 * console.log(isRetryable({ kind: 'conjugation' }), isRetryable({ kind: 'dtype', dtype: 'i32' })); // prints: true false
 * ```
 */
export function isRetryable(reason: CpuProviderUnsupported): boolean {
  return reason.kind === 'conjugation' || (reason.kind === 'layout' && reason.operand !== 'output');
}

/**
 * A short description of why a provider declined, for messages and logs.
 *
 * @example
 * ```ts
 * import { describeUnsupported } from '@tenferro/core';
 *
 * console.log(describeUnsupported({ kind: 'layout', operand: 'rhs' })); // prints: layout of rhs
 * ```
 */
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
