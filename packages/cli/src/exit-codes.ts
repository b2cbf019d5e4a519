import { isErrorCode, kindOf, TenferroError } from '@tenferro/core';

/** The `tenferro` command's exit codes (commander's conventions; documented in docs/cli.md). */
export const EXIT = Object.freeze({
  /** Done, or help/version asked for. */
  ok: 0,
  /** A runtime failure, including a setting of the user's that tenferro rejects (`InvalidArgument`, e.g. `TENFERRO_NUM_THREADS=abc`). */
  failure: 1,
  /** A usage error: unknown command or option, a bad option value, or no command at all. */
  usage: 2,
});

/**
 * True when an error code means that what the user gave tenferro (an option, an environment
 * variable) is wrong: every code of kind `Validation`, `InvalidArgument` first among them. Such a
 * failure never exits 0, even where the command otherwise reports and goes on.
 */
export function isUserInputError(code: string): boolean {
  return isErrorCode(code) && kindOf(code) === 'Validation';
}

/** The one line a failure prints on stderr: `tenferro: <message> [Code]`. */
export function describeError(error: unknown): string {
  if (TenferroError.is(error)) return `tenferro: ${error.message} [${error.code}]`;
  return `tenferro: ${error instanceof Error ? error.message : String(error)}`;
}
