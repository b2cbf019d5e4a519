import { TenferroError } from '@tenferro/core';
import type { TprimsIsa } from './native/binding.js';

/** Options of {@link createTprimsProvider}. */
export interface TprimsProviderOptions {
  /** The ISA path: `'auto'` (default: the best this CPU supports) or a specific one (it must be supported here; lower paths are for tests/profiling). */
  readonly isa?: 'auto' | TprimsIsa;
  /** Elements a task visits below which an Inner-mode request runs as one task instead of being split over the pool. Default {@link DEFAULT_PARALLEL_MIN_ELEMENTS}. */
  readonly parallelMinElements?: number;
}

/**
 * A split costs a second task round trip (and the second lane's wake-up) on the critical path:
 * about 100 µs, the time one core streams ~2^18 elements.
 */
export const DEFAULT_PARALLEL_MIN_ELEMENTS = 1 << 18;

/** {@link TprimsProviderOptions} with every default filled in, as `validateTprimsProviderOptions` returns them. */
export type ValidatedTprimsProviderOptions = Readonly<Required<TprimsProviderOptions>>;

const ISAS: readonly string[] = ['auto', 'avx512f', 'avx2', 'portable'];
const KNOWN: readonly string[] = ['isa', 'parallelMinElements'];

/**
 * Check `options` (before anything is loaded) and return a frozen copy with the defaults; `InvalidArgument` names the first bad one.
 *
 * @example
 * ```ts
 * import { TenferroError } from '@tenferro/core';
 * import { validateTprimsProviderOptions } from '@tenferro/provider-tprims';
 *
 * console.log(validateTprimsProviderOptions({ isa: 'portable' })); // prints: { isa: 'portable', parallelMinElements: 262144 }
 * try {
 *   validateTprimsProviderOptions({ threads: 2 });
 * } catch (e) {
 *   console.log(TenferroError.is(e, 'InvalidArgument'), (e as TenferroError).detail); // prints: true { param: 'options.threads' }
 * }
 * ```
 */
export function validateTprimsProviderOptions(options: unknown, op = 'createTprimsProvider'): ValidatedTprimsProviderOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw TenferroError.invalidArgument(op, 'options', 'an options object', options);
  const unknown = Object.keys(options).find((key) => !KNOWN.includes(key));
  if (unknown !== undefined) throw TenferroError.invalidArgument(op, `options.${unknown}`, `one of ${KNOWN.join(', ')}`, unknown);
  const { isa = 'auto', parallelMinElements = DEFAULT_PARALLEL_MIN_ELEMENTS } = options as TprimsProviderOptions;
  if (!ISAS.includes(isa)) throw TenferroError.invalidArgument(op, 'options.isa', `one of ${ISAS.join(', ')}`, isa);
  if (typeof parallelMinElements !== 'number' || !(parallelMinElements >= 0)) {
    throw TenferroError.invalidArgument(op, 'options.parallelMinElements', 'a non-negative number', parallelMinElements);
  }
  return Object.freeze({ isa, parallelMinElements });
}
