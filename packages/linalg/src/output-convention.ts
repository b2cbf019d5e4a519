/**
 * The output convention of `@tenferro/linalg` (#35), in ONE place: the output shapes of every
 * primitive ({@link linalgOutputSpecs}) and what makes the results of every kernel agree
 * ({@link applyOutputConvention}) — R's diagonal real and ≥ 0, the phase of singular vectors and
 * eigenvectors, eig's eigenvalue order and unit-norm eigenvectors. Kernels (the built-in Eigen
 * ones, provider-blas's LAPACK, a third party's) return raw factorisations; this runs after
 * whichever of them executed, on the main thread, over the outputs in place: O(size of the
 * outputs) time (eig's ordering O(n log n) per matrix), and no allocation beyond a few vectors of
 * one matrix's order.
 */
import type { LinalgDType, LinalgFlags, LinalgOp, LinalgOutput, LinalgOutputDType, LinalgRequest } from './contract/index.js';

type Real = Float32Array | Float64Array;

const realOf = (d: LinalgDType): 'f32' | 'f64' => (d === 'f32' || d === 'c64' ? 'f32' : 'f64');
const complexOf = (d: LinalgDType): 'c64' | 'c128' => (d === 'f32' || d === 'c64' ? 'c64' : 'c128');
const isComplex = (d: LinalgDType): boolean => d === 'c64' || d === 'c128';

/** One output slot's element type and shape (matrix or vector extents, then the batch extents); `undefined`: the op has no output there. */
export type LinalgOutputSpec = readonly [LinalgOutputDType, readonly number[]] | undefined;

/**
 * The outputs of one primitive call, by slot (as `LinalgRequest.out`): each slot's element type and
 * shape — the matrix (or vector) extents, then `batch` — or `undefined` where the op (with these
 * flags) has none. The one table of output shapes (#35): `@tenferro/linalg` makes its fresh outputs
 * from it, and the kernels receive the shapes in the request's output descriptors.
 *
 * @example
 * ```ts
 * import { linalgOutputSpecs } from '@tenferro/linalg';
 *
 * const flags = { upper: false, left: false, unitDiagonal: false, full: false, vectors: true, rOnly: false };
 * console.log(JSON.stringify(linalgOutputSpecs('svd', 'c64', 5, 3, [2], flags))); // prints: [["c64",[5,3,2]],["f32",[3,2]],["c64",[3,3,2]]]
 * ```
 */
export function linalgOutputSpecs(op: LinalgOp, dtype: LinalgDType, m: number, n: number, batch: readonly number[], flags: LinalgFlags): LinalgOutputSpec[] {
  const k = Math.min(m, n);
  const s = (d: LinalgOutputDType, ...extents: number[]): LinalgOutputSpec => [d, [...extents, ...batch]];
  switch (op) {
    case 'cholesky': return [s(dtype, m, m)];
    case 'solveTriangular': case 'solve': return [s(dtype, m, n)];
    case 'luFactor': return [s(dtype, m, n), s('i32', k)];
    case 'lu': return [s(dtype, m, m), s(dtype, m, k), s(dtype, k, n)];
    case 'qr': return [flags.rOnly ? undefined : s(dtype, m, flags.full ? m : k), s(dtype, flags.full ? m : k, n)];
    case 'svd': return flags.vectors ? [s(dtype, m, flags.full ? m : k), s(realOf(dtype), k), s(dtype, flags.full ? n : k, n)] : [undefined, s(realOf(dtype), k), undefined];
    case 'eigh': return [s(realOf(dtype), m), flags.vectors ? s(dtype, m, m) : undefined];
    case 'eig': return [s(complexOf(dtype), m), flags.vectors ? s(complexOf(dtype), m, m) : undefined];
    case 'luFullPivot': return [s(dtype, m, m), s('i32', m), s('i32', m)];
  }
}

/** A float view of output `o` from its offset (interleaved re, im for complex), `count` components. */
function view(o: LinalgOutput, components: number): Real {
  const single = o.dtype === 'f32' || o.dtype === 'c64';
  const bytes = single ? 4 : 8, per = o.dtype === 'c64' || o.dtype === 'c128' ? 2 : 1;
  return single ? new Float32Array(o.buffer, o.offset * bytes * per, components) : new Float64Array(o.buffer, o.offset * bytes * per, components);
}

/** Per-batch element count and the matrix extents of output `o` (rows, cols; a vector is rows × 1). */
function extents(o: LinalgOutput, nb: number): [rows: number, cols: number] {
  const lead = o.shape.length - nb;
  return [o.shape[0]!, lead >= 2 ? o.shape[1]! : 1];
}

const batchCount = (batch: readonly number[]): number => batch.reduce((p, e) => p * e, 1);

/**
 * Apply the output convention (see `LinalgRequest` in `@tenferro/linalg/contract`) in place to the
 * outputs of `request` after a kernel executed it: every batch whose `info` is 0; a batch that
 * failed is left as the kernel wrote it (its outputs are disposed unread). Ops without a
 * convention (cholesky, solveTriangular, luFactor, lu, solve, luFullPivot, and svd/eigh/eig
 * without vectors except eig's order) return at once. Call it once per executed primitive, after
 * the kernel's task settled and before the outputs are handed to anyone.
 *
 * @example
 * ```ts
 * import { applyOutputConvention } from '@tenferro/linalg';
 *
 * // eig's raw output (two eigenvalues in a kernel's order, c128) → ordered by real part.
 * const w = new SharedArrayBuffer(32);
 * new Float64Array(w).set([3, 0, 1, 0]);
 * const flags = { upper: false, left: false, unitDiagonal: false, full: false, vectors: false, rOnly: false };
 * const operand = { buffer: new SharedArrayBuffer(32), offset: 0, rowStride: 1, colStride: 2, batchStrides: [] };
 * applyOutputConvention({ op: 'eig', dtype: 'f64', m: 2, n: 2, batch: [], flags, a: operand, out: [{ buffer: w, offset: 0, dtype: 'c128', shape: [2] }], info: new Int32Array(1) });
 * console.log(Array.from(new Float64Array(w))); // prints: [ 1, 0, 3, 0 ]
 * ```
 */
export function applyOutputConvention(request: LinalgRequest): void {
  const r = request;
  switch (r.op) {
    case 'qr': return qrDiagonal(r);
    case 'svd': if (r.flags.vectors) svdPhases(r); return;
    case 'eigh': if (r.flags.vectors) eighPhases(r); return;
    case 'eig': return eigConvention(r);
    default: return;
  }
}

const EPS = { f32: 2 ** -23, f64: 2 ** -52 } as const;

/**
 * Scale column c (c < cols) of the column-major rows×cols matrix at component `base` of `v` (ld =
 * rows) so that its entry of largest magnitude — the first of those within 64ε of it — is real and
 * ≥ 0. `f[2c], f[2c + 1]` receive the factor (re, im) column c was multiplied by (1, 0 when none).
 */
function normalizeColumns(v: Real, base: number, rows: number, cols: number, complex: boolean, single: boolean, f: Float64Array): void {
  const grow = 1 + 64 * (single ? EPS.f32 : EPS.f64);
  for (let c = 0; c < cols; c++) {
    f[2 * c] = 1;
    f[2 * c + 1] = 0;
    if (rows === 0) continue;
    // `limit`: the magnitude an entry must exceed to become the largest (in the real type's rounding).
    let best = 0, limit = single ? Math.fround(-grow) : -grow;
    if (complex) {
      const col = base + 2 * c * rows;
      // |x| = hypot(re, im) only where re² + im² says it may exceed `limit` (hypot is the cost here):
      // below limit²·(1 − 2⁻²⁰) it cannot, whatever the rounding; tiny limits always take hypot.
      let limitSq = -1;
      for (let i = 0; i < rows; i++) {
        const re = v[col + 2 * i]!, im = v[col + 2 * i + 1]!;
        if (!(re * re + im * im > limitSq)) continue;
        const h = Math.hypot(re, im), a = single ? Math.fround(h) : h;
        if (a > limit) {
          best = i;
          limit = single ? Math.fround(a * grow) : a * grow;
          limitSq = limit < 1e-140 ? -1 : limit * limit * (1 - 2 ** -20);
        }
      }
      const re = v[col + 2 * best]!, im = v[col + 2 * best + 1]!;
      const a = Math.hypot(re, im);
      if (a === 0 || im === 0 && re > 0) continue; // phase 1: nothing changes
      // cp = conj(x / |x|)
      const pr = re / a, pi = -im / a;
      f[2 * c] = pr;
      f[2 * c + 1] = pi;
      for (let i = 0; i < rows; i++) {
        const at = col + 2 * i, xr = v[at]!, xi = v[at + 1]!;
        v[at] = xr * pr - xi * pi;
        v[at + 1] = xr * pi + xi * pr;
      }
      v[col + 2 * best + 1] = 0; // exactly real (x·conj(x)/|x| = |x|)
    } else {
      const col = base + c * rows;
      for (let i = 0; i < rows; i++) {
        const a = Math.abs(v[col + i]!);
        if (a > limit) {
          best = i;
          limit = single ? Math.fround(a * grow) : a * grow;
        }
      }
      if (!(v[col + best]! < 0)) continue;
      f[2 * c] = -1;
      for (let i = 0; i < rows; i++) v[col + i] = -v[col + i]!;
    }
  }
}

/** A factor buffer of 2·cols components, reused across the batches of one call. */
function factors(cols: number): Float64Array {
  return new Float64Array(2 * Math.max(1, cols));
}

/** qr: R's diagonal real and ≥ 0 — row i of R times conj(p), column i of Q times p, p = phase(Rᵢᵢ). */
function qrDiagonal(r: LinalgRequest): void {
  const R = r.out[1], Q = r.out[0];
  if (R === undefined) return;
  const nb = r.batch.length, count = batchCount(r.batch), complex = isComplex(r.dtype), c = complex ? 2 : 1;
  const [rr, rc] = extents(R, nb);
  const [qm, qc] = Q === undefined ? [0, 0] : extents(Q, nb);
  const k = Math.min(rr, rc, Q === undefined ? rr : qc);
  if (k === 0 || count === 0) return;
  const rv = view(R, c * rr * rc * count), qv = Q === undefined ? undefined : view(Q, c * qm * qc * count);
  const p = new Float64Array(2 * k); // phase(Rᵢᵢ) per row
  for (let b = 0; b < count; b++) {
    if (r.info[b] !== 0) continue;
    const rb = c * b * rr * rc, qb = c * b * qm * qc;
    let any = false;
    for (let i = 0; i < k; i++) {
      const at = rb + c * (i + i * rr);
      if (complex) {
        const re = rv[at]!, im = rv[at + 1]!, a = Math.hypot(re, im);
        const one = a === 0 || (im === 0 && re > 0);
        p[2 * i] = one ? 1 : re / a;
        p[2 * i + 1] = one ? 0 : im / a;
        any ||= !one;
      } else {
        p[2 * i] = rv[at]! < 0 ? -1 : 1;
        any ||= p[2 * i] === -1;
      }
    }
    if (!any) continue;
    // R column by column (contiguous): rows i ≤ min(col, k − 1) times conj(pᵢ).
    for (let col = 0; col < rc; col++) {
      const last = Math.min(col + 1, k);
      for (let i = 0; i < last; i++) {
        const at = rb + c * (i + col * rr);
        if (complex) {
          const pr = p[2 * i]!, pi = p[2 * i + 1]!;
          if (pr === 1 && pi === 0) continue;
          const xr = rv[at]!, xi = rv[at + 1]!;
          rv[at] = xr * pr + xi * pi;
          rv[at + 1] = xi * pr - xr * pi;
        } else if (p[2 * i] === -1) rv[at] = -rv[at]!;
      }
    }
    if (complex) for (let i = 0; i < k; i++) rv[rb + 2 * (i + i * rr) + 1] = 0;
    if (qv === undefined) continue;
    for (let i = 0; i < k; i++) {
      const pr = p[2 * i]!, pi = complex ? p[2 * i + 1]! : 0;
      if (pr === 1 && pi === 0) continue;
      const col = qb + c * i * qm;
      if (complex) {
        for (let x = 0; x < qm; x++) {
          const at = col + 2 * x, xr = qv[at]!, xi = qv[at + 1]!;
          qv[at] = xr * pr - xi * pi;
          qv[at + 1] = xr * pi + xi * pr;
        }
      } else for (let x = 0; x < qm; x++) qv[col + x] = -qv[col + x]!;
    }
  }
}

/** svd: U's columns normalised; Vᴴ's row c (c < min(U's columns, Vᴴ's rows)) times conj of U's column c's factor. */
function svdPhases(r: LinalgRequest): void {
  const U = r.out[0], Vh = r.out[2];
  if (U === undefined || Vh === undefined) return;
  const nb = r.batch.length, count = batchCount(r.batch), complex = isComplex(r.dtype), c = complex ? 2 : 1, single = realOf(r.dtype) === 'f32';
  const [um, uc] = extents(U, nb), [vr, vn] = extents(Vh, nb);
  if (count === 0 || um === 0) return;
  const uv = view(U, c * um * uc * count), vv = view(Vh, c * vr * vn * count);
  const f = factors(uc), rows = Math.min(uc, vr);
  for (let b = 0; b < count; b++) {
    if (r.info[b] !== 0) continue;
    normalizeColumns(uv, c * b * um * uc, um, uc, complex, single, f);
    const vb = c * b * vr * vn;
    // Vᴴ is column-major: a column at a time (contiguous), row j times conj(f[j]).
    for (let x = 0; x < vn; x++) {
      for (let j = 0; j < rows; j++) {
        const fr = f[2 * j]!, fi = f[2 * j + 1]!;
        if (fr === 1 && fi === 0) continue;
        const at = vb + c * (j + x * vr);
        if (complex) {
          const xr = vv[at]!, xi = vv[at + 1]!;
          vv[at] = xr * fr + xi * fi;
          vv[at + 1] = xi * fr - xr * fi;
        } else vv[at] = -vv[at]!;
      }
    }
  }
}

/** eigh: each eigenvector normalised. */
function eighPhases(r: LinalgRequest): void {
  const V = r.out[1];
  if (V === undefined) return;
  const count = batchCount(r.batch), complex = isComplex(r.dtype), c = complex ? 2 : 1, single = realOf(r.dtype) === 'f32';
  const [m, cols] = extents(V, r.batch.length);
  if (count === 0 || m === 0) return;
  const vv = view(V, c * m * cols * count), f = factors(cols);
  for (let b = 0; b < count; b++) if (r.info[b] === 0) normalizeColumns(vv, c * b * m * cols, m, cols, complex, single, f);
}

/**
 * The order of eig's eigenvalues (re, im interleaved at `w[base…]`, n of them) into `order`
 * (`order[i]`: the index of the i-th eigenvalue in that order): by real
 * part; a run of real parts within δ = √ε·max|λ| of its first (a conjugate pair, or equal real parts
 * that rounding made differ) by imaginary part. NaN sorts last; both sorts are stable. In the real
 * type's arithmetic (f32: every step rounded to single, as the native kernels computed it).
 */
export function eigenvalueOrder(w: Real, base: number, n: number, single: boolean, order: number[]): void {
  const round = single ? Math.fround : (x: number) => x;
  let big = 0;
  order.length = n;
  for (let i = 0; i < n; i++) {
    order[i] = i;
    const a = round(Math.hypot(w[base + 2 * i]!, w[base + 2 * i + 1]!));
    if (a > big) big = a;
  }
  const delta = round(round(Math.sqrt(single ? EPS.f32 : EPS.f64)) * big);
  const cmp = (x: number, y: number): number => {
    const xn = Number.isNaN(x), yn = Number.isNaN(y);
    if (xn || yn) return xn === yn ? 0 : xn ? 1 : -1;
    return x < y ? -1 : y < x ? 1 : 0;
  };
  order.sort((x, y) => cmp(w[base + 2 * x]!, w[base + 2 * y]!));
  for (let i = 0; i < n;) {
    let j = i + 1;
    const first = w[base + 2 * order[i]!]!;
    while (j < n && round(w[base + 2 * order[j]!]! - first) <= delta) j++;
    if (j - i > 1) {
      const run = order.slice(i, j).sort((x, y) => cmp(w[base + 2 * x + 1]!, w[base + 2 * y + 1]!));
      for (let t = 0; t < run.length; t++) order[i + t] = run[t]!;
    }
    i = j;
  }
}

/** eig: eigenvalues in {@link eigenvalueOrder}'s order, vectors following, each of unit 2-norm, then normalised as eigh's. */
function eigConvention(r: LinalgRequest): void {
  const W = r.out[0], V = r.flags.vectors ? r.out[1] : undefined;
  if (W === undefined) return;
  const count = batchCount(r.batch), single = realOf(r.dtype) === 'f32';
  const n = extents(W, r.batch.length)[0];
  if (count === 0 || n === 0) return;
  const wv = view(W, 2 * n * count), vv = V === undefined ? undefined : view(V, 2 * n * n * count);
  const order: number[] = [];
  const tmp = new Float64Array(2 * n), f = factors(n);
  const done = new Uint8Array(n);
  for (let b = 0; b < count; b++) {
    if (r.info[b] !== 0) continue;
    const wb = 2 * b * n;
    eigenvalueOrder(wv, wb, n, single, order);
    let moved = false;
    for (let i = 0; i < n; i++) moved ||= order[i] !== i;
    if (moved) {
      tmp.set(wv.subarray(wb, wb + 2 * n));
      for (let i = 0; i < n; i++) {
        wv[wb + 2 * i] = tmp[2 * order[i]!]!;
        wv[wb + 2 * i + 1] = tmp[2 * order[i]! + 1]!;
      }
    }
    if (vv === undefined) continue;
    const vb = 2 * b * n * n;
    // Columns permuted in place, cycle by cycle (column c takes column order[c]), one column of scratch.
    if (moved) {
      done.fill(0);
      for (let s = 0; s < n; s++) {
        if (done[s] !== 0 || order[s] === s) continue;
        tmp.set(vv.subarray(vb + 2 * s * n, vb + 2 * (s + 1) * n));
        let c = s;
        for (;;) {
          done[c] = 1;
          const next = order[c]!;
          if (next === s) {
            vv.set(tmp, vb + 2 * c * n);
            break;
          }
          vv.copyWithin(vb + 2 * c * n, vb + 2 * next * n, vb + 2 * (next + 1) * n);
          c = next;
        }
      }
    }
    // Unit 2-norm.
    for (let c = 0; c < n; c++) {
      const col = vb + 2 * c * n;
      let s = 0;
      for (let i = 0; i < 2 * n; i++) s += vv[col + i]! * vv[col + i]!;
      const nr = Math.sqrt(s);
      if (nr > 0 && nr !== 1) for (let i = 0; i < 2 * n; i++) vv[col + i] = vv[col + i]! / nr;
    }
    normalizeColumns(vv, vb, n, n, true, single, f);
  }
}
