/**
 * The errors of `@tenferro/os`.
 *
 * `@tenferro/core` owns tenferro's one error hierarchy (`TenferroError`), but core depends on
 * this package, so this package cannot import it. `OsError` therefore carries the same shape
 * (`code`, `kind`, `op`, `detail`, message `<op>: <text>`) and the same brand
 * (`Symbol.for('tenferro.error')`), so `TenferroError.is(e)` accepts it and
 * `TenferroError.from(e, op)` re-raises it unchanged in meaning. Every code listed in
 * `OS_ERROR_CODES` must also be a code of core.
 */

/** Coarse classes of failure, a subset of core's `ErrorKind`. */
export type OsErrorKind = 'Validation' | 'BackendFailure' | 'Unsupported';

const KINDS = {
  /** A CPU id list is malformed: not an array, or an id that is not a number, negative, not an integer, or >= 2^20. */
  InvalidCpuList: 'Validation',
  /** An empty CPU list was given. */
  EmptyCpuSet: 'Validation',
  /** A CPU outside the process affinity mask was named (affinity is never widened). */
  CpuOutsideAllowedSet: 'Validation',
  /** sched_getaffinity / sched_setaffinity failed; `detail.errno` carries errno. */
  AffinitySyscallFailed: 'BackendFailure',
  /** The native addon is not available (not built, failed to load, or not Linux). */
  AffinityUnavailable: 'Unsupported',
  /** An argument has the wrong type or value (e.g. `loadAddon` options); `detail.param` names it. */
  InvalidArgument: 'Validation',
} as const satisfies Record<string, OsErrorKind>;

/** A stable error code of `@tenferro/os`. */
export type OsErrorCode = keyof typeof KINDS;

/** Every code `OsError` can carry. */
export const OS_ERROR_CODES: readonly OsErrorCode[] = Object.freeze(Object.keys(KINDS) as OsErrorCode[]);

/** The brand shared by every tenferro error (the same symbol core uses). */
const TENFERRO_ERROR_BRAND: unique symbol = Symbol.for('tenferro.error') as never;

/** Extra information of an `OsError`: what caused it and the structured detail. */
export interface OsErrorOptions {
  readonly cause?: unknown;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/**
 * The kind of an os error code.
 *
 * @example
 * ```ts
 * import { osErrorKind } from '@tenferro/os';
 *
 * console.log(osErrorKind('EmptyCpuSet'), osErrorKind('AffinityUnavailable')); // prints: Validation Unsupported
 * ```
 */
export function osErrorKind(code: OsErrorCode): OsErrorKind {
  return KINDS[code];
}

function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) freezeDeep(inner);
  }
  return value;
}

/** An error raised by `@tenferro/os`; branded as a tenferro error. */
export class OsError extends Error {
  readonly code: OsErrorCode;
  readonly kind: OsErrorKind;
  readonly op: string;
  readonly detail: Readonly<Record<string, unknown>>;

  constructor(code: OsErrorCode, op: string, message: string, options: OsErrorOptions = {}) {
    super(`${op}: ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OsError';
    this.code = code;
    this.kind = KINDS[code];
    this.op = op;
    // A copy, so freezing never reaches a caller's object; nested arrays are copied by the raisers.
    this.detail = freezeDeep({ ...options.detail });
  }

  /** The brand `TenferroError.is` recognises, so that errors of this package count as tenferro errors. */
  get [TENFERRO_ERROR_BRAND](): true {
    return true;
  }

  /**
   * True for an `OsError` (by brand and code, not `instanceof`), optionally of one code.
   *
   * @example
   * ```ts
   * import { OsError, setThreadAffinity } from '@tenferro/os';
   *
   * try {
   *   setThreadAffinity([-1]);
   * } catch (e) {
   *   console.log(OsError.is(e), OsError.is(e, 'InvalidCpuList'), OsError.is(e, 'EmptyCpuSet')); // prints: true true false
   * }
   * console.log(OsError.is(new Error('plain'))); // prints: false
   * ```
   */
  static is(value: unknown, code?: OsErrorCode): value is OsError {
    if (typeof value !== 'object' || value === null) return false;
    if ((value as Record<symbol, unknown>)[TENFERRO_ERROR_BRAND] !== true) return false;
    const actual = (value as { code?: unknown }).code;
    return typeof actual === 'string' && Object.hasOwn(KINDS, actual) && (code === undefined || actual === code);
  }
}

/**
 * `<value> (<type>)`, as core's messages show a received value.
 *
 * @example
 * ```ts
 * import { describeValue } from '@tenferro/os';
 *
 * console.log(describeValue('4'), describeValue([1, 2]), describeValue(null), describeValue(3n)); // prints: "4" (string) [1,2] (array) null (null) 3n (bigint)
 * ```
 */
export function describeValue(value: unknown): string {
  let shown: string;
  try {
    shown = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'bigint' ? `${value}n` : String(value);
    if (Array.isArray(value)) shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = Object.prototype.toString.call(value);
  }
  if (shown.length > 80) shown = `${shown.slice(0, 77)}...`;
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return `${shown} (${type})`;
}
