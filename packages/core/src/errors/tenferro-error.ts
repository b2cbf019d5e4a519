import { describeValue } from '@tenferro/os';
import { type ErrorCode, type ErrorKind, isErrorCode, kindOf } from './codes.js';

/** `<value> (<type>)`: a received value as every tenferro error message shows it (one implementation, in `@tenferro/os`, which core builds on). */
export { describeValue };

/** Brand shared by every tenferro error, also by errors raised in packages that cannot import core. */
export const TENFERRO_ERROR_BRAND: unique symbol = Symbol.for('tenferro.error') as never;

/** What a {@link TenferroError} carries besides its code and message: the raising API, a cause, structured detail. */
export interface TenferroErrorOptions {
  /** The public API that raised the error, e.g. `CpuSet.parse`. */
  readonly op: string;
  readonly cause?: unknown;
  /** Structured detail (ids, sets, counts) for programs; the message is for people. */
  readonly detail?: Readonly<Record<string, unknown>>;
}

/**
 * The one error class of tenferro: a stable `code`, its coarse `kind`, the `op` that raised it,
 * structured `detail` and a `cause`. Programs branch on `code` (see {@link TenferroError.is}).
 *
 * @example
 * ```ts
 * import { Tensor, TenferroError } from '@tenferro/core';
 *
 * try {
 *   Tensor.fromArray('f64', [2], [1, 2, 3]);
 * } catch (e) {
 *   if (TenferroError.is(e)) console.log(e.code, e.kind, e.op); // prints: ShapeMismatch Validation Tensor.fromArray
 * }
 * ```
 */
export class TenferroError extends Error {
  readonly code: ErrorCode;
  readonly kind: ErrorKind;
  readonly op: string;
  readonly detail: Readonly<Record<string, unknown>>;

  /**
   * An error with `code` (its `kind` follows from it); the message is prefixed with `options.op`.
   *
   * @example
   * ```ts
   * import { TenferroError } from '@tenferro/core';
   *
   * const e = new TenferroError('InvalidArgument', 'expected a positive size', { op: 'myLib.resize', detail: { param: 'size' } });
   * console.log(e.message, e.kind); // prints: myLib.resize: expected a positive size Validation
   * ```
   */
  constructor(code: ErrorCode, message: string, options: TenferroErrorOptions) {
    super(`${options.op}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TenferroError';
    this.code = code;
    this.kind = kindOf(code);
    this.op = options.op;
    this.detail = Object.freeze({ ...options.detail });
  }

  /** The brand {@link TenferroError.is} checks: `true` on every tenferro error. */
  get [TENFERRO_ERROR_BRAND](): true {
    return true;
  }

  /**
   * True for any tenferro error (by brand, not `instanceof`, so copies of core and native packages
   * agree), optionally of one code — and then `e.code` is narrowed to it:
   * `if (TenferroError.is(e, 'TensorDisposed')) e.code; // 'TensorDisposed'`.
   *
   * @example
   * ```ts
   * import { Tensor, TenferroError } from '@tenferro/core';
   *
   * const t = Tensor.zeros('f64', [2]);
   * t.dispose();
   * try {
   *   t.toArray();
   * } catch (e) {
   *   if (TenferroError.is(e, 'TensorDisposed')) console.log(e.detail); // prints: { param: 'tensor' }
   * }
   * ```
   */
  static is<C extends ErrorCode = ErrorCode>(value: unknown, code?: C): value is TenferroError & { readonly code: C } {
    if (typeof value !== 'object' || value === null) return false;
    const branded = (value as Record<symbol, unknown>)[TENFERRO_ERROR_BRAND] === true;
    if (!branded) return false;
    const actual = (value as { code?: unknown }).code;
    return isErrorCode(actual) && (code === undefined || actual === code);
  }

  /**
   * Re-raise a branded error from another package as a core `TenferroError` (same code, op and
   * detail); anything else becomes `Internal`.
   *
   * @example
   * ```ts
   * import { TenferroError } from '@tenferro/core';
   *
   * const e = TenferroError.from(new Error('boom'), 'myLib.run');
   * console.log(e.code, e.message); // prints: Internal myLib.run: boom
   * ```
   */
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
   *
   * @example
   * ```ts
   * import { TenferroError } from '@tenferro/core';
   *
   * const e = TenferroError.invalidArgument('myLib.resize', 'options.size', 'a positive integer', -1);
   * console.log(e.message); // prints: myLib.resize: expected a positive integer for options.size but received -1 (number)
   * ```
   */
  static invalidArgument(op: string, param: string, expected: string, received: unknown): TenferroError {
    return invalidArgument(op, param, expected, received);
  }

  /**
   * A value as error messages show it: short, typed, never throwing (`"x" (string)`, `[1,2]
   * (array)`, `3n (bigint)`).
   *
   * @example
   * ```ts
   * import { TenferroError } from '@tenferro/core';
   *
   * console.log(TenferroError.describeValue('x'), TenferroError.describeValue(3n)); // prints: "x" (string) 3n (bigint)
   * ```
   */
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
