import { TenferroError } from '../errors/tenferro-error.js';
import type { ProviderSlot } from '../provider/cpu-providers.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { fingerprint } from './output-fingerprint.js';

/**
 * The one written-then-declined guard (R106, #35) of every operation that hands a provider an
 * output it must leave untouched when it declines: the caller's output, or a fresh one core goes
 * on to fill through another path. Unless the provider declares `declinesBeforeWriting`, the
 * output's bytes are fingerprinted before the call and compared after a decline; a change is
 * `ProviderContractViolation` — no retry on a modified output, and no error that promises the
 * output untouched. Dot-general, the tensor primitives and grouped GEMM use it.
 *
 * Two forms, both free when the provider declares it declines before writing: a mark taken
 * before the call and checked after a decline ({@link guardMark}, {@link checkDeclined}: a string
 * per guarded call, no closure), and the same as one function of the slot for an operation that
 * may see several declines of one output ({@link declineCheck}: one closure per guarded operation).
 */

/** Throws `ProviderContractViolation` when a provider of `slot` declined after writing the guarded output. */
export type DeclineCheck = (slot: ProviderSlot) => void;

/** The check of an unguarded output: a provider that declares it declines before writing is trusted. */
export const NO_CHECK: DeclineCheck = () => undefined;

/** The output's fingerprint before a provider call, or `undefined` when `guarded` is false (nothing to check). */
export function guardMark(out: TensorDescriptor, guarded: boolean): string | undefined {
  return guarded ? fingerprint(out) : undefined;
}

/**
 * After a decline: `ProviderContractViolation` when `out` changed since `mark` was taken
 * (`detail: { slot, ...detail }`). A `mark` of `undefined` checks nothing.
 */
export function checkDeclined(out: TensorDescriptor, mark: string | undefined, op: string, slot: ProviderSlot, detail?: Readonly<Record<string, unknown>>): void {
  if (mark === undefined || fingerprint(out) === mark) return;
  throw writtenThenDeclined(op, slot, detail);
}

/** {@link guardMark} and {@link checkDeclined} as one function of the slot: {@link NO_CHECK} when `guarded` is false. */
export function declineCheck(out: TensorDescriptor, guarded: boolean, op: string): DeclineCheck {
  if (!guarded) return NO_CHECK;
  const mark = fingerprint(out);
  return (slot) => checkDeclined(out, mark, op, slot);
}

/** The error of a provider that wrote the output and then declined. */
export function writtenThenDeclined(op: string, slot: ProviderSlot, detail?: Readonly<Record<string, unknown>>): TenferroError {
  const what = detail !== undefined && typeof detail.job === 'number' ? `the output of grouped job ${detail.job}` : 'the output';
  return new TenferroError('ProviderContractViolation', `the ${slot} provider wrote ${what} and then declined`, { op, detail: { slot, ...detail } });
}
