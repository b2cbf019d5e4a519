import { describeValue } from '@tenferro/os';
import { type ErrorCode, type ErrorKind, isErrorCode, kindOf } from './codes.js';

/** `<value> (<type>)`: a received value as every tenferro error message shows it (one implementation, in `@tenferro/os`, which core builds on). */
export { describeValue };

/** Brand shared by every tenferro error, also by errors raised in packages that cannot import core. */
export const TENFERRO_ERROR_BRAND: unique symbol = Symbol.for('tenferro.error') as never;

export interface TenferroErrorOptions {
  /** The public API that raised the error, e.g. `CpuSet.parse`. */
  readonly op: string;
  readonly cause?: unknown;
  /** Structured detail (ids, sets, counts) for programs; the message is for people. */
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** The one error class of tenferro: a stable `code`, its coarse `kind`, the `op` that raised it and a `cause`. */
export class TenferroError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly op: string;
  readonly detail: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: TenferroErrorOptions) {
    super(`${options.op}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TenferroError';
    this.code = code;
    this.kind = kindOf(code);
    this.op = options.op;
    this.detail = Object.freeze({ ...options.detail });
  }

  get [TENFERRO_ERROR_BRAND](): true {
    return true;
  }

  /**
   * True for any tenferro error (by brand, not `instanceof`, so copies of core and native packages
   * agree), optionally of one code — and then `e.code` is narrowed to it:
   * `if (TenferroError.is(e, 'TensorDisposed')) e.code; // 'TensorDisposed'`.
   */
  static is<C extends ErrorCode = ErrorCode>(value: unknown, code?: C): value is TenferroError & { readonly code: C } {
    if (typeof value !== 'object' || value === null) return false;
    const branded = (value as Record<symbol, unknown>)[TENFERRO_ERROR_BRAND] === true;
    if (!branded) return false;
    const actual = (value as { code?: unknown }).code;
    return isErrorCode(actual) && (code === undefined || actual === code);
  }

  /** Re-raise a branded error from another package as a core `TenferroError` (same code, op and detail). */
  static from(value: unknown, fallbackOp: string): TenferroError {
    if (value instanceof TenferroError) return value;
    if (TenferroError.is(value)) {
      const v = value as { code: ErrorCode; message: string; op?: string; detail?: Record<string, unknown> };
      const op = typeof v.op === 'string' ? v.op : fallbackOp;
      const message = v.message.startsWith(`${op}: `) ? v.message.slice(op.length + 2) : v.message;
      return new TenferroError(v.code, message, { op, cause: value, detail: v.detail ?? {} });
    }
    return new TenferroError('Internal', String((value as Error)?.message ?? value), { op: fallbackOp, cause: value });
  }

  /**
   * The `InvalidArgument` error every tenferro package raises for a bad parameter:
   * `<op>: expected <what> for <param> but received <value> (<type>)`, with `detail.param`.
   */
  static invalidArgument(op: string, param: string, expected: string, received: unknown): TenferroError {
    return invalidArgument(op, param, expected, received);
  }

  /** A value as error messages show it: short, typed, never throwing (`"x" (string)`, `[1,2] (array)`, `3n (bigint)`). */
  static describeValue(value: unknown): string {
    return describeValue(value);
  }
}

/** `<api>: expected <what> for <param> but received <value> (<type>)`. */
export function invalidArgument(op: string, param: string, expected: string, received: unknown): TenferroError {
  return new TenferroError('InvalidArgument', `expected ${expected} for ${param} but received ${describeValue(received)}`, {
    op,
    detail: { param },
  });
}
