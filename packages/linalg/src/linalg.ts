/**
 * `linalg(backend | session)`: torch.linalg's operations in tenferro's conventions (matrix axes
 * first — axis 0 rows, axis 1 columns —, batch axes trailing; column-major). Every method
 * validates its arguments before anything is allocated or run, allocates fresh dense outputs
 * (disposable), and runs one primitive per call inside one execution: the bundle's
 * `CpuLinalgKernels` extension first, the built-in kernel when it is absent or declines before
 * writing.
 */
import { CpuBackend, CpuExecSession, type CpuExecutionContext, DTYPE_INFO, type DType, type SessionBufferPool, Tensor, TenferroError } from '@tenferro/core';
import { BUILTIN_KERNELS } from './builtin.js';
import { type CpuLinalgKernels, type LinalgDType, type LinalgFlags, type LinalgOp, type LinalgOperand, type LinalgOutputDType, type LinalgRequest, linalgKernelsKey } from './contract/index.js';
import { MAX_BATCH_AXES } from './native/binding.js';
import { applyOutputConvention } from './output-convention.js';
import { type SvdFactors, applyPseudoInverse, invertAbove, squaredResiduals } from './pseudo-inverse.js';

/** What `linalg()` runs on: a backend handle (one execution per call) or a session (its entry). */
export type LinalgTarget = CpuBackend | CpuExecSession;
type F = LinalgDType;
type RealOf<D extends F> = D extends 'f32' | 'c64' ? 'f32' : 'f64';
type ComplexOf<D extends F> = D extends 'f32' | 'c64' ? 'c64' : 'c128';

/** The option every linalg method takes (besides its own). */
export interface LinalgRunOptions {
  /** Abort the call: while it waits → `AdmissionAborted`; while it runs → `ExecutionAborted`. */
  readonly signal?: AbortSignal;
}

/** Which kernel ran each primitive call (tests and diagnostics). */
export interface LinalgCallRecord {
  readonly op: LinalgOp;
  readonly kernel: 'extension' | 'builtin';
  /** Present when the extension had a kernel for the op and declined (before writing): its reason. */
  readonly declined?: string;
}

/** The result of {@link Linalg.lstsq} (torch.linalg.lstsq's fields, gelsd semantics). */
export interface LstsqResult<D extends F> {
  /** X (n×k) minimising ‖A·X − B‖ per column; of minimum norm when A is rank-deficient. */
  readonly solution: Tensor<D>;
  /** ‖A·X − B‖² per column (real, [k, …batch]) when m > n and every matrix has rank n; else shape [0]. */
  readonly residuals: Tensor<RealOf<D>>;
  /** The effective rank (singular values above rcond·σ_max), i32, shape = the batch axes. */
  readonly rank: Tensor<'i32'>;
  /** The singular values of A, real, descending ([min(m, n), …batch]). */
  readonly singularValues: Tensor<RealOf<D>>;
}

const FLOAT: readonly string[] = ['f32', 'f64', 'c64', 'c128'];
const realOf = (d: F): 'f32' | 'f64' => (d === 'f32' || d === 'c64' ? 'f32' : 'f64');
const complexOf = (d: F): 'c64' | 'c128' => (d === 'f32' || d === 'c64' ? 'c64' : 'c128');
const isComplex = (d: F): boolean => d === 'c64' || d === 'c128';

const NO_FLAGS: LinalgFlags = Object.freeze({ upper: false, left: true, unitDiagonal: false, full: false, vectors: true, rOnly: false });

function checkOptions(op: string, options: unknown, known: readonly string[]): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) throw TenferroError.invalidArgument(op, 'options', 'an options object', options);
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw TenferroError.invalidArgument(op, `options.${key}`, `one of ${known.join(', ')}`, key);
  }
  const o = options as Record<string, unknown>;
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw TenferroError.invalidArgument(op, 'options.signal', 'an AbortSignal', o.signal);
  return o;
}

function bool(op: string, o: Record<string, unknown>, key: string, dflt: boolean): boolean {
  const v = o[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw TenferroError.invalidArgument(op, `options.${key}`, 'a boolean', v);
  return v;
}

/** A float tensor of rank ≥ 2 with at most 16 batch axes. */
function matrix(op: string, param: string, t: unknown): Tensor<F> {
  if (!Tensor.isTensor(t)) throw TenferroError.invalidArgument(op, param, 'a Tensor', t);
  if (t.disposed) throw new TenferroError('TensorDisposed', `${op}: ${param} was disposed`, { op, detail: { param } });
  if (!FLOAT.includes(t.dtype)) {
    throw new TenferroError('UnsupportedDType', `${op}: ${param} has dtype ${t.dtype}; linear algebra takes f32, f64, c64 and c128`, { op, detail: { param, dtype: t.dtype } });
  }
  if (t.rank < 2 || t.rank - 2 > MAX_BATCH_AXES) {
    throw new TenferroError('RankMismatch', `${op}: ${param} must have rank 2 to ${2 + MAX_BATCH_AXES} (matrix axes first, batch axes trailing) but has rank ${t.rank}`, { op, detail: { param, rank: t.rank } });
  }
  return t as Tensor<F>;
}

function square(op: string, param: string, t: Tensor<F>): void {
  if (t.shape[0] !== t.shape[1]) throw new TenferroError('ShapeMismatch', `${op}: ${param} must be square in its first two axes but is ${t.shape[0]}×${t.shape[1]}`, { op, detail: { param, shape: t.shape } });
}

function sameBatch(op: string, a: Tensor<F>, b: Tensor<F>): void {
  if (a.dtype !== b.dtype) throw new TenferroError('DTypeMismatch', `${op}: a is ${a.dtype} but b is ${b.dtype}`, { op, detail: { a: a.dtype, b: b.dtype } });
  const ba = a.shape.slice(2), bb = b.shape.slice(2);
  if (ba.length !== bb.length || ba.some((e, i) => e !== bb[i])) {
    throw new TenferroError('ShapeMismatch', `${op}: the batch axes of a [${ba.join(', ')}] and b [${bb.join(', ')}] differ`, { op, detail: { a: a.shape, b: b.shape } });
  }
}

function operand(t: Tensor<F>): LinalgOperand {
  return Object.freeze({ buffer: t.buffer, offset: t.offset, rowStride: t.strides[0]!, colStride: t.strides[1]!, batchStrides: Object.freeze(t.strides.slice(2)) });
}

const count = (batch: readonly number[]): number => batch.reduce((p, e) => p * e, 1);

/** One primitive call before its outputs exist: the request's fields, and each output slot's dtype and shape (or none). */
interface LinalgPlan extends Omit<LinalgRequest, 'out' | 'info'> {
  readonly outs: readonly (readonly [DType, readonly number[]] | undefined)[];
}

/** The zeroed outputs and info words are still all zero (an extension that declined wrote nothing). */
function untouched(outs: readonly (Tensor | undefined)[], info: Int32Array): boolean {
  for (const t of outs) {
    if (t === undefined) continue;
    const bytes = DTYPE_INFO[t.dtype].bytes;
    const v = new Uint8Array(t.buffer, t.offset * bytes, t.size * bytes);
    for (let i = 0; i < v.length; i++) if (v[i] !== 0) return false;
  }
  for (let i = 0; i < info.length; i++) if (info[i] !== 0) return false;
  return true;
}

const warnedFallbacks = new Set<string>();

/**
 * Never silently slow: the first time an extension declines a primitive and the built-in kernel
 * runs instead, the process is told once per (extension, primitive) (`TENFERRO_LINALG_FALLBACK`).
 */
function warnFallback(provider: string, primitive: string, op: string, declined: string): void {
  const key = `${provider}\u0000${primitive}`;
  if (warnedFallbacks.has(key)) return;
  warnedFallbacks.add(key);
  process.emitWarning(`${provider} declined ${primitive} for ${op} (${declined}): tenferro's built-in kernel ran instead; later declines of it are not reported again`, {
    type: 'TenferroWarning',
    code: 'TENFERRO_LINALG_FALLBACK',
  });
}

function describeDecline(reason: { readonly kind: string; readonly detail?: unknown; readonly dtype?: unknown }): string {
  return typeof reason.detail === 'string' ? `${reason.kind}: ${reason.detail}` : reason.dtype !== undefined ? `${reason.kind}: ${String(reason.dtype)}` : reason.kind;
}

function batchIndex(batch: readonly number[], flat: number): number[] {
  const idx: number[] = [];
  for (const e of batch) { idx.push(flat % e); flat = Math.floor(flat / e); }
  return idx;
}

/**
 * The linear-algebra operations on `target` (a backend: one execution per call; a session: its
 * entry). Loads nothing and runs nothing until a method is called.
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
 * console.log(x.toArray().map((v) => Math.round(v))); // prints: [ 1, 1 ]
 * await backend.close();
 * ```
 */
export function linalg(target: LinalgTarget): Linalg {
  if (!(target instanceof CpuBackend) && !(target instanceof CpuExecSession)) {
    throw TenferroError.invalidArgument('linalg', 'target', 'a CpuBackend or a CpuExecSession', target);
  }
  return new Linalg(target);
}

/**
 * torch.linalg's operations on one backend or session, from {@link linalg}: matrix axes first,
 * batch axes trailing, fresh dense outputs; each call validates everything first and runs one
 * primitive (a provider's `CpuLinalgKernels` extension, else the built-in Eigen kernels).
 *
 * @example
 * ```ts
 * import { CpuBackend, Tensor } from '@tenferro/core';
 * import { linalg } from '@tenferro/linalg';
 *
 * const backend = await CpuBackend.create({ threads: 1 });
 * const la = linalg(backend);
 * const batch = Tensor.fromArray('f64', [1, 1, 3], [2, 4, 8]); // three 1×1 matrices
 * console.log((await la.det(batch)).toArray().map((d) => +d.toFixed(12))); // prints: [ 2, 4, 8 ]
 * await backend.close();
 * ```
 */
export class Linalg {
  readonly #target: LinalgTarget;
  readonly #calls: LinalgCallRecord[] = [];

  /** @internal use `linalg(target)`. */
  constructor(target: LinalgTarget) {
    this.#target = target;
  }

  /**
   * The kernels that ran, in call order, since the last `takeCallRecords()`.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor } from '@tenferro/core';
   * import { linalg } from '@tenferro/linalg';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const la = linalg(backend);
   * await la.det(Tensor.fromArray('f64', [1, 1], [2]));
   * console.log(la.takeCallRecords().map((r) => r.op)); // prints: [ 'luFactor' ]
   * await backend.close();
   * ```
   */
  takeCallRecords(): LinalgCallRecord[] {
    return this.#calls.splice(0);
  }

  // ── primitives ──────────────────────────────────────────────────────────────────────────────

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
  async cholesky<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly upper?: boolean }): Promise<Tensor<D>> {
    const op = 'linalg.cholesky';
    const o = checkOptions(op, options, ['signal', 'upper']);
    const upper = bool(op, o, 'upper', false);
    const A = matrix(op, 'a', a);
    square(op, 'a', A);
    const n = A.shape[0]!, batch = A.shape.slice(2);
    const [L] = await this.#execute(op, o, { op: 'cholesky', dtype: A.dtype, m: n, n, batch, flags: { ...NO_FLAGS, upper }, a: operand(A), outs: [[A.dtype, A.shape]] }, 'NotPositiveDefinite');
    return L as Tensor<D>;
  }

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
  async solveTriangular<D extends F>(a: Tensor<D>, b: Tensor<D>, options: LinalgRunOptions & { readonly upper: boolean; readonly left?: boolean; readonly unitDiagonal?: boolean }): Promise<Tensor<D>> {
    const op = 'linalg.solveTriangular';
    if (options === undefined) throw TenferroError.invalidArgument(op, 'options', 'an options object with upper', options);
    const o = checkOptions(op, options, ['signal', 'upper', 'left', 'unitDiagonal']);
    if (typeof o.upper !== 'boolean') throw TenferroError.invalidArgument(op, 'options.upper', 'a boolean', o.upper);
    const left = bool(op, o, 'left', true), unitDiagonal = bool(op, o, 'unitDiagonal', false);
    const A = matrix(op, 'a', a), B = matrix(op, 'b', b);
    square(op, 'a', A);
    sameBatch(op, A, B);
    const m = B.shape[0]!, n = B.shape[1]!;
    if (A.shape[0] !== (left ? m : n)) throw new TenferroError('ShapeMismatch', `${op}: a is ${A.shape[0]}×${A.shape[0]} but b is ${m}×${n} (${left ? 'rows' : 'columns'} must agree)`, { op, detail: { a: A.shape, b: B.shape } });
    const batch = A.shape.slice(2);
    const [X] = await this.#execute(op, o, { op: 'solveTriangular', dtype: A.dtype, m, n, batch, flags: { ...NO_FLAGS, upper: o.upper, left, unitDiagonal }, a: operand(A), b: operand(B), outs: [[A.dtype, B.shape]] }, undefined);
    return X as Tensor<D>;
  }

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
  async luFactor<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ lu: Tensor<D>; pivots: Tensor<'i32'> }> {
    const op = 'linalg.luFactor';
    const o = checkOptions(op, options, ['signal']);
    const A = matrix(op, 'a', a);
    const [m, n] = [A.shape[0]!, A.shape[1]!], batch = A.shape.slice(2);
    const [LU, piv] = await this.#execute(op, o, { op: 'luFactor', dtype: A.dtype, m, n, batch, flags: NO_FLAGS, a: operand(A), outs: [[A.dtype, A.shape], ['i32', [Math.min(m, n), ...batch]]] }, undefined);
    return { lu: LU as Tensor<D>, pivots: piv as Tensor<'i32'> };
  }

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
  async lu<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ p: Tensor<D>; l: Tensor<D>; u: Tensor<D> }> {
    const op = 'linalg.lu';
    const o = checkOptions(op, options, ['signal']);
    const A = matrix(op, 'a', a);
    const [m, n] = [A.shape[0]!, A.shape[1]!], k = Math.min(m, n), batch = A.shape.slice(2);
    const [P, L, U] = await this.#execute(op, o, { op: 'lu', dtype: A.dtype, m, n, batch, flags: NO_FLAGS, a: operand(A), outs: [[A.dtype, [m, m, ...batch]], [A.dtype, [m, k, ...batch]], [A.dtype, [k, n, ...batch]]] }, undefined);
    return { p: P as Tensor<D>, l: L as Tensor<D>, u: U as Tensor<D> };
  }

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
  async luFullPivot<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ lu: Tensor<D>; pivots: Tensor<'i32'>; colPivots: Tensor<'i32'> }> {
    const op = 'linalg.luFullPivot';
    const o = checkOptions(op, options, ['signal']);
    const A = matrix(op, 'a', a);
    square(op, 'a', A);
    const n = A.shape[0]!, batch = A.shape.slice(2);
    const [LU, piv, cpiv] = await this.#execute(op, o, { op: 'luFullPivot', dtype: A.dtype, m: n, n, batch, flags: NO_FLAGS, a: operand(A), outs: [[A.dtype, A.shape], ['i32', [n, ...batch]], ['i32', [n, ...batch]]] }, undefined);
    return { lu: LU as Tensor<D>, pivots: piv as Tensor<'i32'>, colPivots: cpiv as Tensor<'i32'> };
  }

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
  async solve<D extends F>(a: Tensor<D>, b: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<D>> {
    const op = 'linalg.solve';
    const o = checkOptions(op, options, ['signal']);
    const A = matrix(op, 'a', a), B = matrix(op, 'b', b);
    square(op, 'a', A);
    sameBatch(op, A, B);
    if (B.shape[0] !== A.shape[0]) throw new TenferroError('ShapeMismatch', `${op}: a is ${A.shape[0]}×${A.shape[0]} but b has ${B.shape[0]} rows`, { op, detail: { a: A.shape, b: B.shape } });
    const batch = A.shape.slice(2);
    const [X] = await this.#execute(op, o, { op: 'solve', dtype: A.dtype, m: A.shape[0]!, n: B.shape[1]!, batch, flags: NO_FLAGS, a: operand(A), b: operand(B), outs: [[A.dtype, B.shape]] }, 'SingularMatrix');
    return X as Tensor<D>;
  }

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
  async qr<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly mode?: 'reduced' | 'complete' | 'r' }): Promise<{ q: Tensor<D> | undefined; r: Tensor<D> }> {
    const op = 'linalg.qr';
    const o = checkOptions(op, options, ['signal', 'mode']);
    const mode = o.mode ?? 'reduced';
    if (mode !== 'reduced' && mode !== 'complete' && mode !== 'r') throw TenferroError.invalidArgument(op, 'options.mode', "'reduced', 'complete' or 'r'", mode);
    const A = matrix(op, 'a', a);
    const [m, n] = [A.shape[0]!, A.shape[1]!], k = Math.min(m, n), batch = A.shape.slice(2);
    const full = mode === 'complete';
    const [Q, R] = await this.#execute(op, o, { op: 'qr', dtype: A.dtype, m, n, batch, flags: { ...NO_FLAGS, full, rOnly: mode === 'r' }, a: operand(A), outs: [mode === 'r' ? undefined : [A.dtype, [m, full ? m : k, ...batch]], [A.dtype, [full ? m : k, n, ...batch]]] }, undefined);
    return { q: Q as Tensor<D> | undefined, r: R as Tensor<D> };
  }

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
  async svd<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly fullMatrices?: boolean }): Promise<{ u: Tensor<D>; s: Tensor<RealOf<D>>; vh: Tensor<D> }> {
    const op = 'linalg.svd';
    const o = checkOptions(op, options, ['signal', 'fullMatrices']);
    const full = bool(op, o, 'fullMatrices', true);
    const A = matrix(op, 'a', a);
    const [m, n] = [A.shape[0]!, A.shape[1]!], k = Math.min(m, n), batch = A.shape.slice(2);
    const [U, S, Vh] = await this.#execute(op, o, { op: 'svd', dtype: A.dtype, m, n, batch, flags: { ...NO_FLAGS, full, vectors: true }, a: operand(A), outs: [[A.dtype, [m, full ? m : k, ...batch]], [realOf(A.dtype), [k, ...batch]], [A.dtype, [full ? n : k, n, ...batch]]] }, 'NoConvergence');
    return { u: U as Tensor<D>, s: S as Tensor<RealOf<D>>, vh: Vh as Tensor<D> };
  }

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
  async svdvals<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<RealOf<D>>> {
    const op = 'linalg.svdvals';
    const o = checkOptions(op, options, ['signal']);
    const A = matrix(op, 'a', a);
    const [m, n] = [A.shape[0]!, A.shape[1]!], k = Math.min(m, n), batch = A.shape.slice(2);
    const [, S] = await this.#execute(op, o, { op: 'svd', dtype: A.dtype, m, n, batch, flags: { ...NO_FLAGS, vectors: false }, a: operand(A), outs: [undefined, [realOf(A.dtype), [k, ...batch]], undefined] }, 'NoConvergence');
    return S as Tensor<RealOf<D>>;
  }

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
  async eigh<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly uplo?: 'L' | 'U' }): Promise<{ eigenvalues: Tensor<RealOf<D>>; eigenvectors: Tensor<D> }> {
    const r = await this.#eigh('linalg.eigh', a, options, true);
    return r as { eigenvalues: Tensor<RealOf<D>>; eigenvectors: Tensor<D> };
  }

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
  async eigvalsh<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly uplo?: 'L' | 'U' }): Promise<Tensor<RealOf<D>>> {
    return (await this.#eigh('linalg.eigvalsh', a, options, false)).eigenvalues as Tensor<RealOf<D>>;
  }

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
  async eig<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ eigenvalues: Tensor<ComplexOf<D>>; eigenvectors: Tensor<ComplexOf<D>> }> {
    const r = await this.#eig('linalg.eig', a, options, true);
    return r as { eigenvalues: Tensor<ComplexOf<D>>; eigenvectors: Tensor<ComplexOf<D>> };
  }

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
  async eigvals<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<ComplexOf<D>>> {
    return (await this.#eig('linalg.eigvals', a, options, false)).eigenvalues as Tensor<ComplexOf<D>>;
  }

  // ── composites ───────────────────────────────────────────────────────────────────────────

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
  async det<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<D>> {
    const { sign, logabsdet } = await this.#slogdet('linalg.det', a, options);
    const out = Tensor.zeros(a.dtype, sign.shape);
    const s = sign.toTypedArray(), l = logabsdet.toTypedArray(), d = new (s.constructor as Float64ArrayConstructor)(s.length);
    const cplx = isComplex(a.dtype);
    for (let i = 0; i < l.length; i++) {
      const mag = Math.exp(l[i]!);
      if (cplx) { d[2 * i] = s[2 * i]! * mag; d[2 * i + 1] = s[2 * i + 1]! * mag; } else d[i] = s[i]! * mag;
    }
    sign.dispose(); logabsdet.dispose();
    const r = Tensor.from(d as never, out.shape, { dtype: a.dtype } as never) as Tensor<D>;
    out.dispose();
    return r;
  }

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
  async slogdet<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<{ sign: Tensor<D>; logabsdet: Tensor<RealOf<D>> }> {
    return (await this.#slogdet('linalg.slogdet', a, options)) as { sign: Tensor<D>; logabsdet: Tensor<RealOf<D>> };
  }

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
  async inv<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<D>> {
    const op = 'linalg.inv';
    const o = checkOptions(op, options, ['signal']);
    const A = matrix(op, 'a', a);
    square(op, 'a', A);
    const n = A.shape[0]!, batch = A.shape.slice(2);
    const cplx = isComplex(A.dtype);
    const eye = Tensor.zeros(A.dtype, [n, n]);
    const Lanes = realOf(A.dtype) === 'f32' ? Float32Array : Float64Array;
    const lanes = cplx ? 2 : 1;
    const ev = new Lanes(eye.buffer as unknown as ArrayBuffer, eye.offset * lanes * Lanes.BYTES_PER_ELEMENT, lanes * n * n);
    for (let i = 0; i < n; i++) ev[lanes * (i + i * n)] = 1;
    const b: LinalgOperand = { buffer: eye.buffer, offset: eye.offset, rowStride: 1, colStride: n, batchStrides: batch.map(() => 0) };
    const [X] = await this.#execute(op, o, { op: 'solve', dtype: A.dtype, m: n, n, batch, flags: NO_FLAGS, a: operand(A), b, outs: [[A.dtype, A.shape]] }, 'SingularMatrix');
    return X as Tensor<D>;
  }

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
  async lstsq<D extends F>(a: Tensor<D>, b: Tensor<D>, options?: LinalgRunOptions & { readonly rcond?: number }): Promise<LstsqResult<D>> {
    const op = 'linalg.lstsq';
    const o = checkOptions(op, options, ['signal', 'rcond']);
    if (o.rcond !== undefined && (typeof o.rcond !== 'number' || !Number.isFinite(o.rcond))) throw TenferroError.invalidArgument(op, 'options.rcond', 'a finite number', o.rcond);
    const A = matrix(op, 'a', a), B = matrix(op, 'b', b);
    sameBatch(op, A, B);
    const [m, n] = [A.shape[0]!, A.shape[1]!], r = B.shape[1]!, k = Math.min(m, n), batch = A.shape.slice(2), nb = count(batch);
    if (B.shape[0] !== m) throw new TenferroError('ShapeMismatch', `${op}: a is ${m}×${n} but b has ${B.shape[0]} rows`, { op, detail: { a: A.shape, b: B.shape } });
    const eps = realOf(A.dtype) === 'f32' ? 2 ** -23 : 2 ** -52;
    const rcond = o.rcond === undefined ? eps * Math.max(m, n) : (o.rcond as number) < 0 ? eps : (o.rcond as number);
    const { u, s, vh } = await this.svd(A, { fullMatrices: false, ...(o.signal ? { signal: o.signal as AbortSignal } : {}) });
    try {
      const cplx = isComplex(A.dtype);
      const f: SvdFactors = { m, n, k, complex: cplx, u: u.toTypedArray() as Float64Array, s: s.toTypedArray() as Float64Array, vh: vh.toTypedArray() as Float64Array };
      const Real = realOf(A.dtype) === 'f32' ? Float32Array : Float64Array;
      const bData = B.toTypedArray() as Float64Array;
      const x = new Real((cplx ? 2 : 1) * n * r * nb);
      const rank = new Int32Array(nb);
      for (let bi = 0; bi < nb; bi++) {
        const smax = k > 0 ? f.s[bi * k]! : 0;
        const { inv, rank: rk } = invertAbove(f.s, bi * k, k, rcond * smax);
        rank[bi] = rk;
        applyPseudoInverse(f, bi, inv, bData, bi * m * r, r, x, bi * n * r);
      }
      let residuals: Tensor<RealOf<D>>;
      if (m > n && rank.every((v) => v === n)) {
        const res = new Real(r * nb), aData = A.toTypedArray() as Float64Array;
        for (let bi = 0; bi < nb; bi++) squaredResiduals(m, n, r, cplx, aData, bi * m * n, x, bi * n * r, bData, bi * m * r, res, bi * r);
        residuals = Tensor.from(res as never, [r, ...batch]) as Tensor<RealOf<D>>;
      } else residuals = Tensor.zeros(realOf(A.dtype), [0]) as Tensor<RealOf<D>>;
      return { solution: Tensor.from(x as never, [n, r, ...batch], { dtype: A.dtype } as never) as Tensor<D>, residuals, rank: Tensor.from(rank, batch), singularValues: s as Tensor<RealOf<D>> };
    } catch (e) {
      s.dispose();
      throw e;
    } finally {
      u.dispose();
      vh.dispose();
    }
  }

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
  async pinv<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly atol?: number; readonly rtol?: number; readonly hermitian?: boolean }): Promise<Tensor<D>> {
    const op = 'linalg.pinv';
    const o = checkOptions(op, options, ['signal', 'atol', 'rtol', 'hermitian']);
    for (const key of ['atol', 'rtol'] as const) {
      const v = o[key];
      if (v !== undefined && (typeof v !== 'number' || !(v >= 0) || !Number.isFinite(v))) throw TenferroError.invalidArgument(op, `options.${key}`, 'a finite non-negative number', v);
    }
    const hermitian = bool(op, o, 'hermitian', false);
    const A = matrix(op, 'a', a);
    if (hermitian) square(op, 'a', A);
    const [m, n] = [A.shape[0]!, A.shape[1]!], k = Math.min(m, n), batch = A.shape.slice(2), nb = count(batch);
    const eps = realOf(A.dtype) === 'f32' ? 2 ** -23 : 2 ** -52;
    const atol = (o.atol as number | undefined) ?? 0;
    const rtol = (o.rtol as number | undefined) ?? (o.atol !== undefined && atol > 0 ? 0 : eps * Math.max(m, n));
    const sig = o.signal ? { signal: o.signal as AbortSignal } : {};
    const cplx = isComplex(A.dtype), c = cplx ? 2 : 1;
    let f: SvdFactors;
    if (hermitian) {
      const { eigenvalues, eigenvectors } = await this.eigh(A, sig);
      const v = eigenvectors.toTypedArray() as Float64Array, w = eigenvalues.toTypedArray() as Float64Array;
      eigenvalues.dispose(); eigenvectors.dispose();
      const vh = new (v.constructor as Float64ArrayConstructor)(v.length);
      for (let bi = 0; bi < nb; bi++)
        for (let j = 0; j < n; j++)
          for (let i = 0; i < n; i++) {
            const from = c * (bi * n * n + i + j * n), to = c * (bi * n * n + j + i * n);
            vh[to] = v[from]!;
            if (cplx) vh[to + 1] = -v[from + 1]!;
          }
      f = { m, n, k, complex: cplx, u: v, s: w, vh };
    } else {
      const { u, s, vh } = await this.svd(A, { fullMatrices: false, ...sig });
      f = { m, n, k, complex: cplx, u: u.toTypedArray() as Float64Array, s: s.toTypedArray() as Float64Array, vh: vh.toTypedArray() as Float64Array };
      u.dispose(); s.dispose(); vh.dispose();
    }
    const Real = realOf(A.dtype) === 'f32' ? Float32Array : Float64Array;
    const eye = new Float64Array(c * m * m);
    for (let i = 0; i < m; i++) eye[c * (i + i * m)] = 1;
    const x = new Real(c * n * m * nb);
    for (let bi = 0; bi < nb; bi++) {
      let smax = 0;
      for (let l = 0; l < k; l++) smax = Math.max(smax, Math.abs(f.s[bi * k + l]!));
      const { inv } = invertAbove(f.s, bi * k, k, Math.max(atol, rtol * smax));
      applyPseudoInverse(f, bi, inv, eye, 0, m, x, bi * n * m);
    }
    return Tensor.from(x as never, [n, m, ...batch], { dtype: A.dtype } as never) as Tensor<D>;
  }

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
  async matrixRank<D extends F>(a: Tensor<D>, options?: LinalgRunOptions & { readonly tol?: number }): Promise<Tensor<'i32'>> {
    const op = 'linalg.matrixRank';
    const o = checkOptions(op, options, ['signal', 'tol']);
    if (o.tol !== undefined && (typeof o.tol !== 'number' || !(o.tol >= 0))) throw TenferroError.invalidArgument(op, 'options.tol', 'a non-negative number', o.tol);
    const A = matrix(op, 'a', a);
    const S = await this.svdvals(A, o.signal ? { signal: o.signal as AbortSignal } : undefined);
    const k = S.shape[0]!, batch = S.shape.slice(1), s = S.toTypedArray();
    S.dispose();
    const eps = realOf(A.dtype) === 'f32' ? 2 ** -23 : 2 ** -52;
    const out = new Int32Array(count(batch));
    for (let bi = 0; bi < out.length; bi++) {
      const max = k > 0 ? s[bi * k]! : 0;
      const tol = (o.tol as number | undefined) ?? Math.max(A.shape[0]!, A.shape[1]!) * eps * max;
      let r = 0;
      for (let i = 0; i < k; i++) if (s[bi * k + i]! > tol) r++;
      out[bi] = r;
    }
    return Tensor.from(out, batch);
  }

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
  async cond<D extends F>(a: Tensor<D>, options?: LinalgRunOptions): Promise<Tensor<RealOf<D>>> {
    const op = 'linalg.cond';
    const o = checkOptions(op, options, ['signal']);
    const A = matrix(op, 'a', a);
    const S = await this.svdvals(A, o.signal ? { signal: o.signal as AbortSignal } : undefined);
    const k = S.shape[0]!, batch = S.shape.slice(1), s = S.toTypedArray();
    S.dispose();
    const out = new (realOf(A.dtype) === 'f32' ? Float32Array : Float64Array)(count(batch));
    for (let bi = 0; bi < out.length; bi++) out[bi] = k === 0 ? 0 : s[bi * k]! / s[bi * k + k - 1]!;
    return Tensor.from(out as never, batch) as Tensor<RealOf<D>>;
  }

  // ── internals ────────────────────────────────────────────────────────────────────────────

  async #eigh(op: string, a: Tensor<F>, options: unknown, vectors: boolean): Promise<{ eigenvalues: Tensor<F>; eigenvectors: Tensor<F> }> {
    const o = checkOptions(op, options, ['signal', 'uplo']);
    const uplo = o.uplo ?? 'L';
    if (uplo !== 'L' && uplo !== 'U') throw TenferroError.invalidArgument(op, 'options.uplo', "'L' or 'U'", uplo);
    const A = matrix(op, 'a', a);
    square(op, 'a', A);
    const n = A.shape[0]!, batch = A.shape.slice(2);
    const [W, V] = await this.#execute(op, o, { op: 'eigh', dtype: A.dtype, m: n, n, batch, flags: { ...NO_FLAGS, upper: uplo === 'U', vectors }, a: operand(A), outs: [[realOf(A.dtype), [n, ...batch]], vectors ? [A.dtype, A.shape] : undefined] }, 'NoConvergence');
    return { eigenvalues: W as Tensor<F>, eigenvectors: V as Tensor<F> };
  }

  async #eig(op: string, a: Tensor<F>, options: unknown, vectors: boolean): Promise<{ eigenvalues: Tensor<F>; eigenvectors: Tensor<F> }> {
    const o = checkOptions(op, options, ['signal']);
    const A = matrix(op, 'a', a);
    square(op, 'a', A);
    const n = A.shape[0]!, batch = A.shape.slice(2);
    const [W, V] = await this.#execute(op, o, { op: 'eig', dtype: A.dtype, m: n, n, batch, flags: { ...NO_FLAGS, vectors }, a: operand(A), outs: [[complexOf(A.dtype), [n, ...batch]], vectors ? [complexOf(A.dtype), [n, n, ...batch]] : undefined] }, 'NoConvergence');
    return { eigenvalues: W as Tensor<F>, eigenvectors: V as Tensor<F> };
  }

  async #slogdet(op: string, a: Tensor<F>, options: unknown): Promise<{ sign: Tensor<F>; logabsdet: Tensor<F> }> {
    const o = checkOptions(op, options, ['signal']);
    const A = matrix(op, 'a', a);
    square(op, 'a', A);
    const { lu, pivots } = await this.luFactor(A, o.signal ? { signal: o.signal as AbortSignal } : undefined);
    const n = A.shape[0]!, batch = A.shape.slice(2), nb = count(batch);
    const cplx = isComplex(A.dtype);
    const f = lu.toTypedArray() as Float32Array | Float64Array, p = pivots.toTypedArray() as Int32Array;
    lu.dispose(); pivots.dispose();
    const Real = realOf(A.dtype) === 'f32' ? Float32Array : Float64Array;
    const sign = new Real(nb * (cplx ? 2 : 1)), logabs = new Real(nb);
    for (let b = 0; b < nb; b++) {
      let sr = 1, si = 0, l = 0;
      for (let i = 0; i < n; i++) {
        if (p[b * n + i] !== i + 1) { sr = -sr; si = -si; }
        const at = b * n * n + i + i * n;
        const re = cplx ? f[2 * at]! : f[at]!, im = cplx ? f[2 * at + 1]! : 0;
        const mag = Math.hypot(re, im);
        if (mag === 0) { sr = 0; si = 0; l = -Infinity; break; }
        l += Math.log(mag);
        const ur = re / mag, ui = im / mag;
        [sr, si] = [sr * ur - si * ui, sr * ui + si * ur];
      }
      if (cplx) { sign[2 * b] = sr; sign[2 * b + 1] = si; } else sign[b] = sr;
      logabs[b] = l;
    }
    return { sign: Tensor.from(sign as never, batch, { dtype: A.dtype } as never) as Tensor<F>, logabsdet: Tensor.from(logabs as never, batch) as Tensor<F> };
  }

  /**
   * Run one primitive: one execution (a backend) or one run on the session's entry; the
   * extension's kernel first, the built-in one when absent or declined before writing. The outputs
   * (and the `info` words) are fresh tensors from the session's buffer pool (R108), made inside the
   * session after validation: not zeroed when the kernel that runs overwrites every element (the
   * built-in kernels, and an extension declaring `overwritesOutputs` and `declinesBeforeWriting`),
   * zeroed otherwise (so that a write before a decline shows). Outputs are disposed — their storage
   * goes back to the pool — on every failure; the info words always.
   */
  async #execute(op: string, o: Record<string, unknown>, plan: LinalgPlan, errorCode: 'NotPositiveDefinite' | 'SingularMatrix' | 'NoConvergence' | undefined): Promise<(Tensor | undefined)[]> {
    const signal = o.signal as AbortSignal | undefined;
    const target = this.#target;
    const ext = target instanceof CpuBackend ? target.providerBundle().extension(linalgKernelsKey()) : target.providerExtension(linalgKernelsKey());
    // R55–R59 for the installed kernels before admission (core's validateLinalgCapabilities): every
    // domain a backend reaches, or the domain a session runs on.
    if (ext?.executionCapabilities !== undefined) target.validateLinalgCapabilities(ext.name, ext.executionCapabilities());
    const nb = count(plan.batch);
    const byExtension = ext !== undefined && typeof ext[plan.op] === 'function';
    const zeroed = byExtension && !(ext.overwritesOutputs === true && ext.declinesBeforeWriting === true);
    const body = async (ctx: CpuExecutionContext, pool: SessionBufferPool): Promise<(Tensor | undefined)[]> => {
      const outs: (Tensor | undefined)[] = [];
      let infoWords: Tensor | undefined;
      try {
        for (const spec of plan.outs) outs.push(spec === undefined ? undefined : pool.freshTensor(spec[0], spec[1], { zeroed }));
        infoWords = pool.freshTensor('i32', [nb]);
        // #35 (minimal, until this file is rebuilt on runExtension): outputs as descriptors with offsets.
        const info = new Int32Array(infoWords.buffer, infoWords.offset * 4, nb);
        const out = outs.map((t) => (t === undefined ? undefined : Object.freeze({ buffer: t.buffer, offset: t.offset, dtype: t.dtype as LinalgOutputDType, shape: t.shape })));
        const request: LinalgRequest = Object.freeze({ op: plan.op, dtype: plan.dtype, m: plan.m, n: plan.n, batch: plan.batch, flags: plan.flags, a: plan.a, ...(plan.b === undefined ? {} : { b: plan.b }), out: Object.freeze(out), info });
        const guard = byExtension && ext.declinesBeforeWriting !== true ? outs : undefined;
        await this.#call(op, ctx, ext, request, guard);
        if (errorCode !== undefined) {
          for (let b = 0; b < nb; b++) {
            if (info[b] !== 0) {
              const what = errorCode === 'NotPositiveDefinite' ? `the leading minor of order ${info[b]} is not positive definite` : errorCode === 'SingularMatrix' ? `U(${info[b]}, ${info[b]}) is exactly zero: the matrix is singular` : `the iteration did not converge (info ${info[b]})`;
              throw new TenferroError(errorCode, `${op}: batch ${b} [${batchIndex(plan.batch, b).join(', ')}]: ${what}`, { op, detail: { batchIndex: b, batch: batchIndex(plan.batch, b), info: info[b] } });
            }
          }
        }
        // #35: the output convention, once, after whichever kernel ran (the failed batches are left alone).
        applyOutputConvention(request);
        return outs;
      } catch (e) {
        for (const t of outs) t?.dispose();
        throw e;
      } finally {
        infoWords?.dispose();
      }
    };
    // One admission in the linalg mode of R73 (core's withLinalgPool): Sequential at budget 1, Inner
    // for blas, the engine's preferred mode for faer; inside a session, its entry is reused.
    if (target instanceof CpuBackend) return target.withLinalgPool(body, signal ? { signal } : undefined);
    if (signal?.aborted) throw new TenferroError('AdmissionAborted', `${op}: aborted before it started`, { op, cause: signal.reason });
    return target.withLinalgPool(body);
  }

  async #call(op: string, ctx: CpuExecutionContext, ext: CpuLinalgKernels | undefined, r: LinalgRequest, guard: readonly (Tensor | undefined)[] | undefined): Promise<void> {
    const kernel = ext?.[r.op];
    if (ext !== undefined && typeof kernel === 'function') {
      let outcome;
      try {
        outcome = await kernel.call(ext, ctx, r);
      } catch (e) {
        if (e instanceof TenferroError) throw e;
        throw new TenferroError('ProviderFailed', `${op}: the ${ext.name} ${r.op} kernel failed: ${(e as Error)?.message ?? String(e)}`, { op, cause: e, detail: { provider: ext.name, primitive: r.op } });
      }
      if (outcome.executed) {
        this.#calls.push({ op: r.op, kernel: 'extension' });
        return;
      }
      if (guard !== undefined && !untouched(guard, r.info)) {
        throw new TenferroError('ProviderContractViolation', `${op}: the ${ext.name} ${r.op} kernel wrote its output and then declined (R64)`, { op, detail: { provider: ext.name, primitive: r.op } });
      }
      await BUILTIN_KERNELS[r.op]!(ctx, r);
      const declined = describeDecline(outcome.reason);
      this.#calls.push({ op: r.op, kernel: 'builtin', declined });
      warnFallback(ext.name, r.op, op, declined);
      return;
    }
    await BUILTIN_KERNELS[r.op]!(ctx, r);
    this.#calls.push({ op: r.op, kernel: 'builtin' });
  }
}

export type { DType };
