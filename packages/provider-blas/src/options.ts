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
  /**
   * Real multiply-adds (m·n·k, ×4 for complex, times the batch count) from which a GEMM on a
   * backend of more than one thread is split over the engine's workers, one BLAS thread each,
   * instead of running on the runtime's own threads. Unset: from 128³ to below 320³ and from 1536³
   * on (`splitsCall`, `SPLIT_BAND_BELOW` and `SPLIT_MIN_WORK` say why). `Infinity`: never split.
   * Only runtimes whose thread count tenferro sets are ever split.
   */
  readonly splitMinWork?: number;
  /**
   * The BLAS library to load instead of the system's (`libblas.so.3`, Debian's
   * update-alternatives choice): `'mkl'` (Intel MKL's `libmkl_rt`), `'openblas'`, or a soname or
   * absolute path of a library with CBLAS inside. Overrides `TENFERRO_BLAS_LIBRARY`. The library
   * is process-wide: the first `createBlasProvider()` call decides, before the first GEMM; a later
   * call asking for another is `InvalidArgument`. A library that cannot be loaded is
   * `ProviderUnavailable`, saying why and which library would work (#42).
   */
  readonly library?: 'mkl' | 'openblas' | (string & {});
}

/** {@link BlasProviderOptions} checked (`undefined`: not given). */
export interface ValidatedBlasProviderOptions {
  readonly openblasCoretype: string | undefined;
  readonly splitMinWork: number | undefined;
  readonly library: string | undefined;
}

const KNOWN: readonly string[] = ['openblasCoretype', 'splitMinWork', 'library'];

/** `'mkl'`, `'openblas'`, a soname (`lib….so…`) or an absolute path; no `:` (the environment's separator), no NUL. */
function validLibrary(v: unknown): v is string {
  if (typeof v !== 'string' || v.length === 0 || v.length > 4096 || /[:\0\s]/.test(v)) return false;
  if (v === 'mkl' || v === 'openblas') return true;
  return v.startsWith('/') ? v.length > 1 : /^lib[^/]*\.so(\.[0-9]+)*$/.test(v);
}

/** Check `options` (before anything is loaded) and return a frozen copy; `InvalidArgument` names the first bad one. */
export function validateBlasProviderOptions(options: unknown, op = 'createBlasProvider'): ValidatedBlasProviderOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw TenferroError.invalidArgument(op, 'options', 'an options object', options);
  const unknown = Object.keys(options).find((key) => !KNOWN.includes(key));
  if (unknown !== undefined) throw TenferroError.invalidArgument(op, `options.${unknown}`, `one of ${KNOWN.join(', ')}`, unknown);
  const { openblasCoretype, splitMinWork, library } = options as BlasProviderOptions;
  if (library !== undefined && !validLibrary(library)) {
    throw TenferroError.invalidArgument(op, 'options.library', "'mkl', 'openblas', a soname such as 'libblas.so.3' or an absolute path", library);
  }
  if (splitMinWork !== undefined && (typeof splitMinWork !== 'number' || Number.isNaN(splitMinWork) || splitMinWork < 0)) {
    throw TenferroError.invalidArgument(op, 'options.splitMinWork', 'a number of multiply-adds ≥ 0 (Infinity: never split)', splitMinWork);
  }
  if (openblasCoretype !== undefined && (typeof openblasCoretype !== 'string' || !/^[A-Za-z][A-Za-z0-9_]{0,31}$/.test(openblasCoretype))) {
    throw TenferroError.invalidArgument(op, 'options.openblasCoretype', "an OpenBLAS core name such as 'SkylakeX', 'Haswell' or 'Zen'", openblasCoretype);
  }
  return Object.freeze({ openblasCoretype, splitMinWork, library });
}
