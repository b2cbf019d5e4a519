/**
 * vitest, when it is installed, and the kit's assertions either way (#40).
 *
 * `@tenferro/core/testing` is two things: plain functions (`providerConformanceCases()`,
 * `tensorPrimitivesConformanceCases()`, the oracles and random operands) that a provider author
 * may run from any program, and `runProviderConformance` / `runTensorPrimitivesConformance`, which
 * register a vitest suite. vitest is an optional peer of core: a static `import … from 'vitest'`
 * made the whole entry fail to load where it is not installed, plain functions included. So vitest
 * is imported here, once, when this module loads (a top-level `await`, before any case can run) —
 * and a missing vitest leaves the plain functions working:
 *  - `kitExpect` is vitest's `expect` when vitest is there (so the kit's assertions count as the
 *    test's own, as `expect.hasAssertions()` wants), else a small stand-in with the same matchers
 *    that throws node's `AssertionError`;
 *  - `vitestSuite()` hands the registering functions vitest's `describe`/`it`, or throws a
 *    `TenferroError` (`Unsupported`) saying that they need vitest and that the plain `…Cases` functions do not.
 */
import { AssertionError } from 'node:assert';
import { inspect, isDeepStrictEqual } from 'node:util';
import { TenferroError } from '../errors/tenferro-error.js';

/** The matchers the kit uses, with vitest's meaning. */
export interface KitMatchers {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeLessThanOrEqual(expected: number | bigint): void;
  toBeGreaterThan(expected: number | bigint): void;
  toContain(item: unknown): void;
  toBeDefined(): void;
  toBeTypeOf(type: 'bigint' | 'boolean' | 'function' | 'number' | 'object' | 'string' | 'symbol' | 'undefined'): void;
}

type KitExpect = (actual: unknown, message?: string) => KitMatchers;

/** A test's context as the registering functions use it. */
interface KitTestContext {
  skip(note?: string): void;
}

/** What the registering functions take from vitest. */
export interface KitSuite {
  describe(name: string, body: () => void): void;
  it(name: string, body: (context: KitTestContext) => Promise<void>, timeout?: number): void;
}

let vitest: { expect: unknown; describe: unknown; it: unknown } | undefined;
let missing: unknown;
try {
  vitest = (await import('vitest')) as typeof vitest;
} catch (e) {
  missing = e;
}

/** The kit's stand-in for vitest's `expect` (same matchers, node's `AssertionError`). */
function plainExpect(actual: unknown, message?: string): KitMatchers {
  const fail = (what: string, expected: unknown): never => {
    const text = `${message === undefined ? '' : `${message}: `}expected ${inspect(actual)} ${what}`;
    throw new AssertionError({ message: text, actual, expected, operator: what });
  };
  return {
    toBe: (expected) => void (Object.is(actual, expected) || fail(`to be ${inspect(expected)}`, expected)),
    toEqual: (expected) => void (isDeepStrictEqual(actual, expected) || fail(`to equal ${inspect(expected)}`, expected)),
    toBeLessThanOrEqual: (expected) => void ((actual as number) <= expected || fail(`to be less than or equal to ${inspect(expected)}`, expected)),
    toBeGreaterThan: (expected) => void ((actual as number) > expected || fail(`to be greater than ${inspect(expected)}`, expected)),
    toContain: (item) => void ((typeof actual === 'string' ? actual.includes(item as string) : Array.from(actual as Iterable<unknown>).includes(item)) || fail(`to contain ${inspect(item)}`, item)),
    toBeDefined: () => void (actual !== undefined || fail('to be defined', 'defined')),
    toBeTypeOf: (type) => void (typeof actual === type || fail(`to be of type ${type}`, type)),
  };
}

/** vitest's `expect` when vitest is installed, else the kit's stand-in. */
export const kitExpect: KitExpect = vitest === undefined ? plainExpect : (vitest.expect as KitExpect);

/** vitest's `describe` and `it`, for the functions that register a suite; a typed error when vitest cannot be imported. */
export function vitestSuite(op: string): KitSuite {
  if (vitest === undefined) {
    throw new TenferroError('Unsupported', `${op} registers a vitest suite and needs vitest, which cannot be imported here (${missing instanceof Error ? missing.message : String(missing)}); install vitest as a dev dependency, or run the cases yourself with the plain …Cases functions of @tenferro/core/testing, which do not need it`, {
      op,
      cause: missing,
      detail: { needs: 'vitest' },
    });
  }
  return { describe: vitest.describe as KitSuite['describe'], it: vitest.it as KitSuite['it'] };
}
