import { TenferroError } from '@tenferro/core';

/** Options of {@link createBlasProvider}. */
export interface BlasProviderOptions {
  /**
   * OpenBLAS only: the kernel set to use (`OPENBLAS_CORETYPE`, e.g. `'SkylakeX'`, `'Haswell'`,
   * `'Zen'`), put into the process environment (native `setenv`) just before the library is
   * loaded, on the first GEMM. `'keep'`: never set it — OpenBLAS chooses by itself.
   * Without this option tenferro sets the core matching this CPU when the OpenBLAS found here
   * would pick one below it (e.g. Prescott on an AVX-512 CPU), unless `OPENBLAS_CORETYPE` is
   * already in the environment (then it is left alone). `InvalidArgument` when the library is
   * already loaded with another core, when an earlier call asked for another core, or when the
   * core needs instructions this CPU lacks.
   */
  readonly openblasCoretype?: 'keep' | (string & {});
}

/** {@link BlasProviderOptions} checked (`undefined`: not given). */
export interface ValidatedBlasProviderOptions {
  readonly openblasCoretype: string | undefined;
}

const KNOWN: readonly string[] = ['openblasCoretype'];

/** Check `options` (before anything is loaded) and return a frozen copy; `InvalidArgument` names the first bad one. */
export function validateBlasProviderOptions(options: unknown, op = 'createBlasProvider'): ValidatedBlasProviderOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw TenferroError.invalidArgument(op, 'options', 'an options object', options);
  const unknown = Object.keys(options).find((key) => !KNOWN.includes(key));
  if (unknown !== undefined) throw TenferroError.invalidArgument(op, `options.${unknown}`, `one of ${KNOWN.join(', ')}`, unknown);
  const { openblasCoretype } = options as BlasProviderOptions;
  if (openblasCoretype !== undefined && (typeof openblasCoretype !== 'string' || !/^[A-Za-z][A-Za-z0-9_]{0,31}$/.test(openblasCoretype))) {
    throw TenferroError.invalidArgument(op, 'options.openblasCoretype', "an OpenBLAS core name such as 'SkylakeX', 'Haswell' or 'Zen'", openblasCoretype);
  }
  return Object.freeze({ openblasCoretype });
}
