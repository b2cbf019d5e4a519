import { TenferroError } from '@tenferro/core';

/** Options of {@link createBlasProvider}. */
export interface BlasProviderOptions {
  /**
   * OpenBLAS only: the kernel set to use (`OPENBLAS_CORETYPE`, e.g. `'SkylakeX'`, `'Haswell'`,
   * `'Zen'`). Set in the main thread's environment before the BLAS library is first loaded in
   * this process; `InvalidArgument` when the library is already loaded with another core, when
   * called off the main thread before the library is loaded, or when the core needs
   * instructions this CPU lacks. Without it, an `OPENBLAS_CORETYPE` already in the environment
   * applies as usual.
   */
  readonly openblasCoretype?: string;
}

export interface NormalizedOptions {
  readonly openblasCoretype: string | undefined;
}

const KNOWN = new Set(['openblasCoretype']);

export function validateOptions(options: unknown, op: string): NormalizedOptions {
  if (options === undefined) return { openblasCoretype: undefined };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalid(op, 'options', 'an options object', options);
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) throw invalid(op, `options.${key}`, `one of ${[...KNOWN].join(', ')}`, key);
  }
  const core = (options as BlasProviderOptions).openblasCoretype;
  if (core !== undefined && (typeof core !== 'string' || !/^[A-Za-z][A-Za-z0-9_]{0,31}$/.test(core))) {
    throw invalid(op, 'options.openblasCoretype', "an OpenBLAS core name such as 'SkylakeX', 'Haswell' or 'Zen'", core);
  }
  return { openblasCoretype: core };
}

export function invalid(op: string, param: string, expected: string, received: unknown): TenferroError {
  let shown: string;
  try {
    shown = typeof received === 'string' ? JSON.stringify(received) : String(received);
  } catch {
    shown = Object.prototype.toString.call(received);
  }
  return new TenferroError('InvalidArgument', `expected ${expected} for ${param} but received ${shown} (${received === null ? 'null' : typeof received})`, {
    op,
    detail: { param },
  });
}
