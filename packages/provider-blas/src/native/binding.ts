/**
 * The raw exports of the native addon `tenferro_blas.node` (registered in native/src/addon.cc;
 * `gemm` is native/src/gemm.cc, `load`/`info`/`getThreads`/`setThreads` native/src/runtime.cc).
 * Loading the addon loads no BLAS: `load()` dlopen()s the runtime (once per process).
 * No function throws: failures are status codes ({@link BlasStatus}).
 */
import { ABI } from '../../native/src/abi.mjs';

export { ABI };

/** What `load()` was asked. */
export interface RawLoadRequest {
  /** Sonames or paths, tried in order (empty: the addon's built-in list). */
  readonly candidates: readonly string[];
  /** OPENBLAS_CORETYPE to put into the process environment (setenv) before dlopen. */
  readonly coretype?: string;
  /** Replace a value already in the environment (else only fill an empty one). */
  readonly coretypeOverwrite?: boolean;
  /**
   * Read by `loadAndProbe` only (not the addon): the loading execution's thread budget. A threaded
   * MKL layer then runs one probe GEMM with it, so that its OpenMP team starts on the loading
   * (pinned) worker and is seen by the census (#42).
   */
  readonly threads?: number;
}

/** What `load()` did (the first call's outcome, for every later call too). */
export interface RawLoadOutcome {
  readonly loaded: boolean;
  /** One line per candidate that failed (dlerror, or no cblas_?gemm in it). */
  readonly errors: readonly string[];
  /** The candidate that loaded. */
  readonly library: string;
  /** OPENBLAS_CORETYPE in the process environment before, null when unset. */
  readonly coretypeBefore: string | null;
  /** Whether load() called setenv. */
  readonly coretypeApplied: boolean;
  /** The thread that ran dlopen, and its affinity mask then. */
  readonly loaderTid: number;
  readonly loaderCpus: string;
  /** A candidate refused on purpose: `'ILP64'` (MKL asked for 64-bit integers, #42), else `''`. Absent from older builds. */
  readonly refused?: string;
}

/** What the addon found with dlsym/dladdr in this process. */
export interface RawBlasInfo {
  /** Whether a BLAS runtime is loaded in this process (by any thread). */
  readonly loaded: boolean;
  readonly load: RawLoadOutcome;
  /** `openblas` (openblas_get_config present), `mkl`, `blis`, else `reference`; `none` before loading. */
  readonly vendor: 'openblas' | 'mkl' | 'blis' | 'reference' | 'none';
  /** `dladdr(cblas_dgemm)`: the library CBLAS is called in (e.g. the libblas.so.3 alternative). */
  readonly libraryPath: string;
  /** The library the runtime identity symbol lives in (e.g. libopenblas.so.0), or ''. */
  readonly runtimePath: string;
  /** MKL or BLIS version string ('' otherwise). */
  readonly version: string;
  /** `openblas_get_config()` ('' otherwise). */
  readonly config: string;
  /** `openblas_get_corename()` ('' otherwise). */
  readonly coreName: string;
  /** OpenBLAS `openblas_get_parallel()` (0 serial, 1 pthreads, 2 OpenMP); BLIS 0 off, 1 pthreads, 2 OpenMP; -1 unknown. */
  readonly parallel: number;
  /** The runtime's current thread count, -1 when it has none. */
  readonly threads: number;
  readonly mklLocalThreads: boolean;
  /** MKL: the threading layer load() selected (`sequential`, `gnu-openmp`, `intel-openmp`, `tbb`), '' otherwise. Absent from older builds. */
  readonly mklLayer?: string;
  /** MKL: `environment` (MKL_THREADING_LAYER) or `tenferro` (the runtime present). */
  readonly mklLayerSource?: string;
  /** MKL: the OpenMP runtime made global for that layer (`libgomp.so.1`, `libomp.so.5` …), '' for sequential. */
  readonly mklOpenmpRuntime?: string;
  /** `MKL_NUM_THREADS` / `OPENBLAS_NUM_THREADS` / `BLIS_NUM_THREADS` of the environment, null when unset. */
  readonly envThreads?: string | null;
  /** The largest thread count the addon passes (counts are clamped to the CPUs configured). */
  readonly maxThreads?: number;
  readonly openblasSetThreads: boolean;
  /** BLIS: `bli_thread_set_num_threads` takes effect (probed on a helper thread). */
  readonly blisSetEffective: boolean;
  /** BLIS: that setting stays local to the calling thread (probed, BLIS ≥ 0.9 with TLS). */
  readonly blisThreadLocal: boolean;
}

export interface BlasBinding {
  /** One (strided-batched) column-major ?gemm described by `desc` (see {@link Desc}); returns a {@link BlasStatus}. */
  gemm(desc: Float64Array, a: Uint8Array, b: Uint8Array, c: Uint8Array): number;
  /** dlopen the BLAS runtime (once per process; later calls return the first outcome). */
  load(request: RawLoadRequest): RawLoadOutcome;
  info(): RawBlasInfo;
  getThreads(): number;
  setThreads(threads: number): number;
  /** Threads the runtime started during calls (MKL's OpenMP teams, found natively), for the census; absent from older builds. */
  callThreads?(): number[];
  /** The CBLAS code tenferro uses for "conjugate without transpose" (OpenBLAS extension). */
  readonly conjNoTrans: number;
  /** The hash of native/src/abi.mjs the addon was built from (defineAddon compares it with the table's, #40). */
  readonly abiHash: string;
  /** Which LAPACK routines the loaded runtime exports (dlsym in its handle); null before it is loaded. */
  /** Keys: the routine without its trailing underscore (`dpotrf`, `zgeev`, `cungqr`, …; potrf, getrf, getrs, trsm, geqrf, orgqr/ungqr, gesdd, syevd/heevd, geev, getc2, gesv in s, d, c, z). */
  lapackSymbols(): Readonly<Record<string, boolean>> | null;
  /** One linalg primitive over a batch with the runtime's LAPACK (native/src/lapack.cc); a {@link BlasStatus}. */
  lapack(words: Float64Array, a: Uint8Array, b: Uint8Array, out0: Uint8Array, out1: Uint8Array, out2: Uint8Array, info: Int32Array): number;
}

// The transpose codes, the gemm descriptor and the status codes are native/src/abi.mjs's, which the
// addon compiles through the generated native/src/abi.generated.h (#40). (`abiCodes` of
// @tenferro/core, inlined: the identification child imports this file and never core.)
const codes = <const N extends readonly string[]>(names: N) => Object.freeze(Object.fromEntries(names.map((n, i) => [n, i]))) as { readonly [K in N[number]]: number };

/** CBLAS transpose codes. */
export const Trans = Object.freeze({ No: ABI.constants.TransNo, T: ABI.constants.TransT, ConjT: ABI.constants.TransConjT, ConjNo: ABI.constants.TransConjNo });

/** Indices of the gemm descriptor (a Float64Array); from `Header` on: the batch extents and strides. */
export const Desc = Object.freeze({ ...codes(ABI.enums.Desc), Header: ABI.enums.Desc.length });

export const MAX_BATCH_RANK = ABI.constants.MaxBatchRank;

/**
 * Status codes of `gemm` and `setThreads`: `Ok` 0, `BadArguments`, `BadDescriptor`, `OutOfBoundsA`,
 * `OutOfBoundsB`, `OutOfBoundsC`, `TooLarge`, `BadDType`, `BadTranspose`, `Misaligned` (a used
 * operand's data is not aligned to its element's component: 4 bytes for s/c, 8 for d/z),
 * `NotLoaded` (the call would reach BLAS but no runtime is loaded in this process yet).
 */
export const BlasStatus = codes(ABI.enums.Status);

export type BlasStatusName = keyof typeof BlasStatus;

/** The name of status `status` (as in native/src/blas_addon.h: `kStatusOutOfBoundsA` → `OutOfBoundsA`), or undefined for an unknown number. */
export function blasStatusName(status: number): BlasStatusName | undefined {
  return (Object.keys(BlasStatus) as BlasStatusName[]).find((name) => BlasStatus[name] === status);
}

export function describeStatus(status: number): string {
  const name = blasStatusName(status);
  return name === undefined ? `unknown status ${status}` : `${name} (${status})`;
}
