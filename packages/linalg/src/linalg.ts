/**
 * `linalg(backend | session)`: torch.linalg's operations in tenferro's conventions (matrix axes
 * first — axis 0 rows, axis 1 columns —, batch axes trailing; column-major). One public operation
 * per file (`primitives/`, `composites/`), each validation, a request and ONE `runExtension` call
 * (#35): core validates the bundle's `CpuLinalgKernels` extension against the domain, decides the
 * mode, pins the inputs, admits the call like every operation, hands out fresh pooled outputs and
 * traces each kernel call on `tenferro:provider` (which kernel ran, and why an extension declined);
 * the extension's kernel runs first, the built-in one when it is absent or declines before writing,
 * and the output convention follows whichever ran. The namespace holds nothing but its target.
 */
import { CpuBackend, CpuExecSession, type Tensor, TenferroError } from '@tenferro/core';
import type { ComplexOf, F, LinalgRunOptions, LinalgTarget, RealOf } from './support/arguments.js';
import type { LstsqResult } from './composites/lstsq.js';
import { cholesky } from './primitives/cholesky.js';
import { solveTriangular } from './primitives/solve-triangular.js';
import { luFactor } from './primitives/lu-factor.js';
import { lu } from './primitives/lu.js';
import { luFullPivot } from './primitives/lu-full-pivot.js';
import { solve } from './primitives/solve.js';
import { qr } from './primitives/qr.js';
import { svd } from './primitives/svd.js';
import { svdvals } from './primitives/svdvals.js';
import { eigh } from './primitives/eigh.js';
import { eigvalsh } from './primitives/eigvalsh.js';
import { eig } from './primitives/eig.js';
import { eigvals } from './primitives/eigvals.js';
import { det } from './composites/det.js';
import { slogdet } from './composites/slogdet.js';
import { inv } from './composites/inv.js';
import { lstsq } from './composites/lstsq.js';
import { pinv } from './composites/pinv.js';
import { matrixRank } from './composites/matrix-rank.js';
import { cond } from './composites/cond.js';

export type { LinalgRunOptions, LinalgTarget } from './support/arguments.js';
export type { LstsqResult } from './composites/lstsq.js';

/**
 * torch.linalg's operations on one backend or session, from {@link linalg}: matrix axes first,
 * batch axes trailing, fresh dense outputs from the engine's pool (dispose them, or let them be
 * collected: their storage goes back either way); each call validates everything first and is one
 * operation — a provider's `CpuLinalgKernels` extension, else the built-in Eigen kernels. A frozen
 * object of functions: it keeps no state, so one namespace serves any number of calls. Which
 * kernel ran each call is on `tenferro:provider` (see `@tenferro/linalg/testing`'s
 * `recordLinalgKernels`).
 */
export interface Linalg {
  /**
   * L with A = L Lᴴ (lower triangle of A read), or U = Lᴴ with `upper`. `NotPositiveDefinite` names the batch and LAPACK info.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [4, 2, 2, 3]); // [[4, 2], [2, 3]]
   * const round = (t: Tensor) => t.toArray().map((v) => +Number(v).toFixed(6));
   * console.log(round(await la.cholesky(a))); // prints: [ 2, 1, 0, 1.414214 ]
   * await backend.close();
   * ```
   */
  cholesky<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly upper?: boolean }): Promise<Tensor<D>>;

  /**
   * X with A X = B (`left`, default) or X A = B, A triangular (`upper` required). No singularity check (as LAPACK trsm).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const u = Tensor.fromArray('f64', [2, 2], [2, 0, 1, 4]); // [[2, 1], [0, 4]]
   * const b = Tensor.fromArray('f64', [2, 1], [3, 4]);
   * console.log((await la.solveTriangular(u, b, { upper: true })).toArray()); // prints: [ 1, 1 ]
   * await backend.close();
   * ```
   */
  solveTriangular<D extends F>(a: Tensor<D>, b: Tensor<D>, options: LinalgRunOptions & { readonly upper: boolean; readonly left?: boolean; readonly unitDiagonal?: boolean }): Promise<Tensor<D>>;

  /**
   * `{ lu, pivots }` as LAPACK getrf: L (unit, below the diagonal) and U packed; pivots i32, 1-based (row i swapped with pivots[i]).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4], { order: 'row' }); // [[1, 2], [3, 4]]
   * const { lu, pivots } = await la.luFactor(a);
   * const round = (t: Tensor) => t.toArray().map((v) => +Number(v).toFixed(6));
   * console.log(pivots.toArray(), round(lu)); // prints: [ 2, 2 ] [ 3, 0.333333, 4, 0.666667 ]
   * await backend.close();
   * ```
   */
  luFactor<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ lu: Tensor<D>; pivots: Tensor<'i32'> }>;

  /**
   * `{ p, l, u }` with A = P L U (P m×m, L m×k unit lower, U k×n).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4], { order: 'row' });
   * const { p, l, u } = await la.lu(a);
   * console.log(p.toArray({ order: 'row' }), u.toArray({ order: 'row' })[0], l.shape); // prints: [ 0, 1, 1, 0 ] 3 [ 2, 2 ]
   * await backend.close();
   * ```
   */
  lu<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ p: Tensor<D>; l: Tensor<D>; u: Tensor<D> }>;

  /**
   * Full-pivot LU of a square A, LAPACK getc2's convention: P·A·Q = L·U with `{ lu }` packed as
   * `luFactor`'s and `pivots`/`colPivots` i32, 1-based (at step i row i was swapped with row
   * pivots[i], column i with column colPivots[i]). A pivot below smin = max(ε·max|A|, smallest
   * normal/ε) is replaced by smin (so a rank-deficient A shows as |U(i, i)| = smin) — not an error.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [1, 3, 2, 4]); // [[1, 2], [3, 4]]
   * const { pivots, colPivots } = await la.luFullPivot(a);
   * console.log(pivots.toArray(), colPivots.toArray()); // prints: [ 2, 2 ] [ 2, 2 ]
   * await backend.close();
   * ```
   */
  luFullPivot<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ lu: Tensor<D>; pivots: Tensor<'i32'>; colPivots: Tensor<'i32'> }>;

  /**
   * X with A X = B (A square, B n×k with the same batch axes). `SingularMatrix` for an exactly singular U.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [4, 2, 2, 3]); // [[4, 2], [2, 3]]
   * const b = Tensor.fromArray('f64', [2, 1], [6, 5]);
   * const round = (t: Tensor) => t.toArray().map((v) => +Number(v).toFixed(6));
   * console.log(round(await la.solve(a, b))); // prints: [ 1, 1 ]
   * await backend.close();
   * ```
   */
  solve<D extends F>(a: Tensor<D>, b: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<D>>;

  /**
   * `{ q, r }` (mode 'reduced': Q m×k, R k×n; 'complete': Q m×m, R m×n; 'r': R only, q undefined). R's diagonal is real and ≥ 0.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 1], [3, 4]);
   * const { q, r } = await la.qr(a);
   * const round = (t: Tensor) => t.toArray().map((v) => +Number(v).toFixed(6));
   * console.log(round(q!), round(r)); // prints: [ 0.6, 0.8 ] [ 5 ]
   * await backend.close();
   * ```
   */
  qr<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly mode?: 'reduced' | 'complete' | 'r' }): Promise<{ q: Tensor<D> | undefined; r: Tensor<D> }>;

  /**
   * `{ u, s, vh }` with A = U diag(S) Vᴴ; S real, descending; `fullMatrices` (default true, as torch) gives square U and Vᴴ.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [3, 0, 0, -4]); // diag(3, -4)
   * const { u, s, vh } = await la.svd(a);
   * console.log(s.toArray(), u.shape, vh.shape); // prints: [ 4, 3 ] [ 2, 2 ] [ 2, 2 ]
   * await backend.close();
   * ```
   */
  svd<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly fullMatrices?: boolean }): Promise<{ u: Tensor<D>; s: Tensor<RealOf<D>>; vh: Tensor<D> }>;

  /**
   * The singular values, real, descending.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [3, 0, 0, -4]);
   * console.log((await la.svdvals(a)).toArray()); // prints: [ 4, 3 ]
   * await backend.close();
   * ```
   */
  svdvals<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<RealOf<D>>>;

  /**
   * `{ eigenvalues, eigenvectors }` of a Hermitian A (`uplo` 'L', default, or 'U' names the triangle read); eigenvalues real, ascending.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [2, 1, 1, 2]); // [[2, 1], [1, 2]]
   * const { eigenvalues, eigenvectors } = await la.eigh(a);
   * const round = (t: Tensor) => t.toArray().map((v) => +Number(v).toFixed(6));
   * console.log(round(eigenvalues), eigenvectors.shape); // prints: [ 1, 3 ] [ 2, 2 ]
   * await backend.close();
   * ```
   */
  eigh<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly uplo?: 'L' | 'U' }): Promise<{ eigenvalues: Tensor<RealOf<D>>; eigenvectors: Tensor<D> }>;

  /**
   * The eigenvalues of a Hermitian A, real, ascending (`eigh` without the eigenvectors).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [2, 1, 1, 2]); // [[2, 1], [1, 2]]
   * const round = (t: Tensor) => t.toArray().map((v) => +Number(v).toFixed(6));
   * console.log(round(await la.eigvalsh(a))); // prints: [ 1, 3 ]
   * await backend.close();
   * ```
   */
  eigvalsh<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly uplo?: 'L' | 'U' }): Promise<Tensor<RealOf<D>>>;

  /**
   * `{ eigenvalues, eigenvectors }` of a general square A, complex (c64 for f32/c64, c128 for f64/c128); eigenvectors of unit norm.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [0, 1, -1, 0]); // [[0, -1], [1, 0]]: a rotation
   * const { eigenvalues } = await la.eig(a);
   * const imag = eigenvalues.toArray().filter((_, i) => i % 2 === 1).map((v) => Math.round(v)).sort();
   * console.log(eigenvalues.dtype, imag); // prints: c128 [ -1, 1 ]
   * await backend.close();
   * ```
   */
  eig<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ eigenvalues: Tensor<ComplexOf<D>>; eigenvectors: Tensor<ComplexOf<D>> }>;

  /**
   * The eigenvalues of a general square A, complex (`eig` without the eigenvectors), in the solver's order.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [1, 0, 5, 2]); // [[1, 5], [0, 2]]
   * const values = (await la.eigvals(a)).toArray();
   * console.log(values.filter((_, i) => i % 2 === 0).map((v) => Math.round(v)).sort()); // prints: [ 1, 2 ]
   * await backend.close();
   * ```
   */
  eigvals<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<ComplexOf<D>>>;

  /**
   * The determinant (from `luFactor`), shape = the batch axes.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [4, 2, 2, 3]); // [[4, 2], [2, 3]]
   * const round = (t: Tensor) => t.toArray().map((v) => +Number(v).toFixed(6));
   * console.log(round(await la.det(a))); // prints: [ 8 ]
   * await backend.close();
   * ```
   */
  det<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<D>>;

  /**
   * `{ sign, logabsdet }`: sign (unit phase for complex, 0 for singular) of the dtype, log|det| real (−∞ for singular).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [4, 2, 2, 3]); // [[4, 2], [2, 3]]
   * const { sign, logabsdet } = await la.slogdet(a);
   * console.log(sign.toArray(), Math.exp(logabsdet.toArray()[0]!).toFixed(6)); // prints: [ 1 ] 8.000000
   * await backend.close();
   * ```
   */
  slogdet<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ sign: Tensor<D>; logabsdet: Tensor<RealOf<D>> }>;

  /**
   * The inverse (solve against the identity). `SingularMatrix` for an exactly singular U.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [4, 2, 2, 3]); // [[4, 2], [2, 3]]
   * const round = (t: Tensor) => t.toArray().map((v) => +Number(v).toFixed(6));
   * console.log(round(await la.inv(a))); // prints: [ 0.375, -0.25, -0.25, 0.5 ]
   * await backend.close();
   * ```
   */
  inv<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<D>>;

  /**
   * Least squares, `torch.linalg.lstsq` with LAPACK gelsd's semantics: for each batch the X
   * (n×k) of minimum norm among those minimising ‖A·X − B‖ (A m×n of any rank, B m×k with A's
   * batch axes), computed from the SVD of A (the `svd` primitive: the bundle's `?gesdd_` or the
   * built-in kernel); singular values ≤ rcond·σ_max count as zero. `rcond` defaults to
   * ε·max(m, n) of the dtype; a negative one means ε (as gelsd).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * // Fit y = c0 + c1·x through (0, 1), (1, 3), (2, 5): columns [1, x].
   * const a = Tensor.fromArray('f64', [3, 2], [1, 1, 1, 0, 1, 2]);
   * const b = Tensor.fromArray('f64', [3, 1], [1, 3, 5]);
   * const { solution, rank } = await la.lstsq(a, b);
   * console.log(solution.toArray().map((v) => +Number(v).toFixed(6)), rank.toArray()); // prints: [ 1, 2 ] [ 2 ]
   * await backend.close();
   * ```
   */
  lstsq<D extends F>(a: Tensor<D>, b: Tensor<D>, options?: LinalgRunOptions & { readonly rcond?: number }): Promise<LstsqResult<D>>;

  /**
   * The Moore–Penrose pseudo-inverse (n×m per batch), `torch.linalg.pinv`: from the SVD (or, with
   * `hermitian`, from `eigh` of the lower triangle), singular values (|eigenvalues|) ≤
   * max(atol, rtol·σ_max) count as zero. Defaults as torch: atol 0; rtol ε·max(m, n), or 0 when
   * only `atol` is given (> 0).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 1], [1, 1]); // a column
   * const p = await la.pinv(a); // 1×2
   * console.log(p.shape, p.toArray().map((v) => +Number(v).toFixed(6))); // prints: [ 1, 2 ] [ 0.5, 0.5 ]
   * await backend.close();
   * ```
   */
  pinv<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly atol?: number; readonly rtol?: number; readonly hermitian?: boolean }): Promise<Tensor<D>>;

  /**
   * The number of singular values above `tol` (default max(m, n)·ε·σ_max), i32, shape = the batch axes.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [1, 2, 2, 4]); // rank 1
   * console.log((await la.matrixRank(a)).toArray()); // prints: [ 1 ]
   * await backend.close();
   * ```
   */
  matrixRank<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly tol?: number }): Promise<Tensor<'i32'>>;

  /**
   * The 2-norm condition number σ_max/σ_min (∞ when σ_min = 0), real, shape = the batch axes.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * const a = Tensor.fromArray('f64', [2, 2], [2, 0, 0, 0.5]);
   * const round = (t: Tensor) => t.toArray().map((v) => +Number(v).toFixed(6));
   * console.log(round(await la.cond(a))); // prints: [ 4 ]
   * await backend.close();
   * ```
   */
  cond<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<RealOf<D>>>;
}

/**
 * The linear-algebra operations on `target` (a backend: one execution per call; a session: its
 * entry), as a frozen namespace with no state of its own. Loads nothing and runs nothing until a
 * method is called.
 *
 * @example
 * ```ts
 * import { CpuBackend, Tensor } from '@tenferro/core';
 * import { linalg } from '@tenferro/linalg';
 *
 * const backend = await CpuBackend.create({ threads: 1 });
 * const la = linalg(backend);
 * const a = Tensor.fromArray('f64', [2, 2], [4, 2, 2, 3]);
 * const x = await backend.withBackendSession((session) => linalg(session).solve(a, Tensor.fromArray('f64', [2, 1], [6, 5])));
 * console.log(x.toArray().map((v) => Math.round(v)), Object.isFrozen(la)); // prints: [ 1, 1 ] true
 * await backend.close();
 * ```
 */
export function linalg(target: LinalgTarget): Linalg {
  if (!(target instanceof CpuBackend) && !(target instanceof CpuExecSession)) {
    throw TenferroError.invalidArgument('linalg', 'target', 'a CpuBackend or a CpuExecSession', target);
  }
  const la: Linalg = {
    cholesky: (a, o) => cholesky(target, a, o),
    solveTriangular: (a, b, o) => solveTriangular(target, a, b, o),
    luFactor: (a, o) => luFactor(target, a, o),
    lu: (a, o) => lu(target, a, o),
    luFullPivot: (a, o) => luFullPivot(target, a, o),
    solve: (a, b, o) => solve(target, a, b, o),
    qr: (a, o) => qr(target, a, o),
    svd: (a, o) => svd(target, a, o),
    svdvals: (a, o) => svdvals(target, a, o),
    eigh: (a, o) => eigh(target, a, o),
    eigvalsh: (a, o) => eigvalsh(target, a, o),
    eig: (a, o) => eig(target, a, o),
    eigvals: (a, o) => eigvals(target, a, o),
    det: (a, o) => det(target, a, o),
    slogdet: (a, o) => slogdet(target, a, o),
    inv: (a, o) => inv(target, a, o),
    lstsq: (a, b, o) => lstsq(target, a, b, o),
    pinv: (a, o) => pinv(target, a, o),
    matrixRank: (a, o) => matrixRank(target, a, o),
    cond: (a, o) => cond(target, a, o),
  };
  return Object.freeze(la);
}
