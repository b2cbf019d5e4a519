/**
 * `@tenferro/linalg/contract`: what a provider implements to plug its own linear-algebra kernels
 * into tenferro — the `CpuLinalgKernels` interface, its request type, and the bundle extension key
 * it is stored under. No native code, and nothing happens at import: the key is defined on the
 * first `linalgKernelsKey()` call (keys are identity-by-name, so every copy of this package, and
 * of core, gets the same key).
 */
import { type CpuExecutionContext, type CpuProviderOutcome, type ExtensionKey, defineExtensionKey } from '@tenferro/core';

/** The name of the extension key: `'tenferro.linalg.kernels'`. */
export const LINALG_KERNELS_KEY_NAME = 'tenferro.linalg.kernels';

/**
 * The bundle extension key of `CpuLinalgKernels` (defined lazily, same object on every call).
 *
 * @example
 * ```ts
 * import { CpuProviderBundle } from '@tenferro/core';
 * import { BUILTIN_KERNELS, linalgKernelsKey } from '@tenferro/linalg';
 *
 * const key = linalgKernelsKey();
 * console.log(key.name, key === linalgKernelsKey()); // prints: tenferro.linalg.kernels true
 * const bundle = CpuProviderBundle.builder('faer').extension(key, BUILTIN_KERNELS).build();
 * console.log(bundle.extension(key) === BUILTIN_KERNELS); // prints: true
 * ```
 */
export function linalgKernelsKey(): ExtensionKey<CpuLinalgKernels> {
  return defineExtensionKey<CpuLinalgKernels>(LINALG_KERNELS_KEY_NAME);
}

/** The dtypes of linear algebra. */
export type LinalgDType = 'f32' | 'f64' | 'c64' | 'c128';

/** The primitives, one per `CpuLinalgKernels` method. */
export type LinalgOp = 'cholesky' | 'solveTriangular' | 'luFactor' | 'lu' | 'solve' | 'qr' | 'svd' | 'eigh' | 'eig' | 'luFullPivot';

/** Every primitive a `CpuLinalgKernels` may implement, in a fixed order. */
export const LINALG_OPS: readonly LinalgOp[] = Object.freeze(['cholesky', 'solveTriangular', 'luFactor', 'lu', 'solve', 'qr', 'svd', 'eigh', 'eig', 'luFullPivot']);

/**
 * An input matrix stack: element (i, j) of batch (b₀, b₁, …) is at
 * `offset + i·rowStride + j·colStride + Σ bₜ·batchStrides[t]` in elements of the dtype (complex
 * elements are interleaved re, im). Validated by `@tenferro/linalg` against the buffer.
 */
export interface LinalgOperand {
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly rowStride: number;
  readonly colStride: number;
  readonly batchStrides: readonly number[];
}

/** The element type of an output: the request's dtype, its real or complex type, or i32 (pivots). */
export type LinalgOutputDType = LinalgDType | 'i32';

/**
 * One output of a primitive call (#35): fresh, dense, column-major and batch-contiguous storage in
 * `buffer` from element `offset` on — batch b starts at element `offset + b·size`, `size` the
 * product of the output's matrix (or vector) extents, `shape`'s leading axes. `offset` counts
 * elements of `dtype` (a complex element is one element; i32 pivots: 4-byte elements). The outputs
 * `@tenferro/linalg` hands over are 64-byte aligned at their offset, like every fresh output of
 * core, and are NOT at offset 0 in general: write through `buffer` from `offset`, never from 0.
 * Structurally a subset of core's `TensorDescriptor` (whose strides are the dense column-major ones).
 */
export interface LinalgOutput {
  readonly buffer: SharedArrayBuffer;
  /** Where batch 0 starts, in elements of `dtype`. */
  readonly offset: number;
  readonly dtype: LinalgOutputDType;
  /** The matrix extents (rows, columns) or the vector extent, then the request's batch extents. */
  readonly shape: readonly number[];
}

/**
 * One primitive call over a batch of matrices. Inputs may be strided; outputs (`out`, see
 * {@link LinalgOutput}) are fresh, dense, column-major and batch-contiguous, taken from the
 * engine's buffer pool: zeroed, unless the kernels declare `overwritesOutputs` and
 * `declinesBeforeWriting` — then their contents are unspecified (whatever the storage last held)
 * and an executing kernel must write every element of every output it is given — except a batch
 * whose `info` makes the call fail (NotPositiveDefinite, SingularMatrix, NoConvergence: the outputs
 * are then disposed unread). `info` starts zeroed.
 *
 * Shapes (m = `m`, n = `n`, k = min(m, n); each followed by the batch extents in `out[i].shape`)
 * and outputs per op — `@tenferro/linalg`'s `linalgOutputSpecs` computes them:
 * - `cholesky`: a m×m (lower triangle read) → out[0] m×m, L or (flags.upper) Lᴴ.
 * - `solveTriangular`: a (left ? m×m : n×n), b m×n → out[0] X m×n with a·X = b (left) or X·a = b.
 * - `luFactor`: a m×n → out[0] LU m×n (L unit lower below the diagonal, U on and above), out[1] i32 pivots k (LAPACK's 1-based swaps).
 * - `lu`: a m×n → out[0] P m×m, out[1] L m×k, out[2] U k×n with a = P·L·U.
 * - `solve`: a m×m, b m×n → out[0] X m×n with a·X = b.
 * - `qr`: a m×n → out[0] Q (m×k, complete: m×m; absent when flags.rOnly), out[1] R (k×n, complete: m×n) with a = Q·R.
 * - `svd`: a m×n → out[1] S k (real dtype, descending); with flags.vectors out[0] U (m×k, full: m×m), out[2] Vᴴ (k×n, full: n×n).
 * - `eigh`: a m×m Hermitian (lower triangle read, flags.upper: upper) → out[0] eigenvalues m (real dtype, ascending), out[1] eigenvectors m×m with flags.vectors.
 * - `eig`: a m×m → out[0] eigenvalues m (complex dtype, in any order), out[1] the matching eigenvectors m×m (complex, any non-zero scale) with flags.vectors.
 * - `luFullPivot`: a m×m → out[0] LU m×m, out[1] i32 row pivots m, out[2] i32 column pivots m (LAPACK getc2: 1-based swaps, pivots
 *   below smin = max(ε·max|A|, smallest normal/ε) replaced by smin, info = the last step where that happened — not an error).
 *
 * The output convention is NOT the kernel's job (#35): after whichever kernel ran — an extension's
 * or the built-in one — `@tenferro/linalg` applies it once, in `applyOutputConvention`
 * (src/output-convention.ts), to every batch whose `info` is 0. A kernel returns the raw
 * factorisation (LAPACK's: geqrf/orgqr's Q and R, gesdd's U and Vᴴ, syevd's and geev's vectors in
 * geev's order), and the caller gets:
 * - `qr`: R's diagonal real and ≥ 0 (row i of R times conj(phase(Rᵢᵢ)), column i of Q times phase(Rᵢᵢ));
 * - `svd`, `eigh`: each singular vector (column of U; V's matching column takes the same phase, so
 *   U·S·Vᴴ is unchanged) and eigenvector has its entry of largest magnitude (first of equal ones)
 *   real and non-negative;
 * - `eig`: eigenvalues ordered by real part, runs of real parts within √ε·max|λ| of their first by
 *   imaginary part (NaN last; stable), the vectors following, each scaled to unit 2-norm and then
 *   normalised as eigh's.
 *
 * `info[b]` receives LAPACK's info for batch b (0: success; cholesky: order of the first
 * non-positive leading minor; luFactor/lu/solve: 1-based index of the first exactly zero pivot of
 * U; svd/eigh/eig: non-zero when the iteration did not converge; luFullPivot: getc2's info). It is
 * an Int32Array view of at least the batch count at any 4-byte aligned byte offset of its buffer
 * (`info.byteOffset`): write through the view, or through its buffer from `info.byteOffset`.
 */
export interface LinalgRequest {
  readonly op: LinalgOp;
  readonly dtype: LinalgDType;
  readonly m: number;
  readonly n: number;
  /** Batch extents (the trailing axes of the tensors), first fastest. */
  readonly batch: readonly number[];
  readonly flags: LinalgFlags;
  readonly a: LinalgOperand;
  /** The right-hand side (`solveTriangular`, `solve`). */
  readonly b?: LinalgOperand;
  /** The outputs, by slot (see above), each with its offset; `undefined` where the op has none. */
  readonly out: readonly (LinalgOutput | undefined)[];
  /** LAPACK's info per batch (see above): a view at `info.byteOffset` of its buffer, starting zeroed. */
  readonly info: Int32Array;
}

/** The boolean options of one primitive call (those a primitive does not use are false). */
export interface LinalgFlags {
  /** cholesky, solveTriangular, eigh: the upper triangle (else the lower). */
  readonly upper: boolean;
  /** solveTriangular: A·X = B (else X·A = B). */
  readonly left: boolean;
  /** solveTriangular: the diagonal of A is taken as ones. */
  readonly unitDiagonal: boolean;
  /** svd: full U and V; qr: complete Q. */
  readonly full: boolean;
  /** svd: U and Vᴴ; eigh/eig: eigenvectors. */
  readonly vectors: boolean;
  /** qr: R only. */
  readonly rOnly: boolean;
}

/** A primitive: runs on an entered context and either executes (writing every output) or declines before writing anything (R64, R65). */
export type LinalgKernel = (ctx: CpuExecutionContext, request: LinalgRequest) => Promise<CpuProviderOutcome> | CpuProviderOutcome;

/**
 * A provider's linear-algebra kernels, stored in its bundle under `linalgKernelsKey()`. Every method
 * is optional; an absent method, or `Unsupported` returned before writing, makes `@tenferro/linalg`
 * run its built-in kernel. A method that throws is reported (`ProviderFailed`), never retried; one
 * that writes and then declines is a `ProviderContractViolation`.
 */
export interface CpuLinalgKernels {
  readonly name: string;
  /** Declared like a GEMM provider's (R52): validated against every domain before anything runs. */
  readonly executionCapabilities?: () => import('@tenferro/core').CpuProviderExecutionCapabilities;
  /**
   * Every method that executes writes every element of every output it is given (R108). With
   * `declinesBeforeWriting` too, outputs are handed over unzeroed (no zero-fill on the caller's
   * thread, no check after a decline); without, they are zeroed.
   */
  readonly overwritesOutputs?: boolean;
  /** Every method decides to decline before it writes anything (R64): no output check after a decline. */
  readonly declinesBeforeWriting?: boolean;
  readonly cholesky?: LinalgKernel;
  readonly solveTriangular?: LinalgKernel;
  readonly luFactor?: LinalgKernel;
  readonly lu?: LinalgKernel;
  readonly solve?: LinalgKernel;
  readonly qr?: LinalgKernel;
  readonly svd?: LinalgKernel;
  readonly eigh?: LinalgKernel;
  readonly eig?: LinalgKernel;
  readonly luFullPivot?: LinalgKernel;
}
