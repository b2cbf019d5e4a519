// The one line a failure prints, and which failures are the user's input: what needs @tenferro/core (exit-codes.ts does not).
import { isErrorCode, kindOf, TenferroError } from '@tenferro/core';

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
