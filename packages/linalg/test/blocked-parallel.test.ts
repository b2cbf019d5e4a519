// The blocked right-looking LU and Cholesky the built-in kernels run over the lanes of a 2-thread
// context's worker pool (src/builtin.ts runBlocked; native/src/ops.h team) for one
// square matrix of order ≥ PARALLEL_MIN_ORDER: the same results as the sequential kernels of a
// 1-thread backend — same pivots (LAPACK's 1-based convention), factors within rounding, small
// residuals —, the same typed errors (NotPositiveDefinite with the order of the minor and the
// batch index), every dtype, strided inputs, orders that are not a multiple of the panel width.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor } from '@tenferro/core';
import { type LinalgDType, linalg } from '../src/index.js';
import { PARALLEL_BLOCK, PARALLEL_MIN_ORDER } from '../src/builtin.js';
import { prng } from './helpers.js';

let one: CpuBackend;
let two: CpuBackend;
beforeAll(async () => {
  one = await CpuBackend.create({ threads: 1, providers: [] });
  two = await CpuBackend.create({ threads: 2, providers: [] });
});
afterAll(async () => {
  await one.close();
  await two.close();
});

const cplx = (d: LinalgDType) => d === 'c64' || d === 'c128';
const single = (d: LinalgDType) => d === 'f32' || d === 'c64';


/** n×n entries in [-1, 1) (interleaved re, im for complex), column-major; `diag` added to the diagonal's real part. */
function entries(dtype: LinalgDType, n: number, seed: number, diag = 0): Float64Array {
  const c = cplx(dtype) ? 2 : 1, next = prng(seed);
  const d = new Float64Array(c * n * n);
  for (let i = 0; i < d.length; i++) d[i] = next();
  for (let i = 0; i < n; i++) d[c * (i + i * n)]! += diag;
  return d;
}

/** A Hermitian positive definite matrix: (G + Gᴴ)/2 + 2n·I (diagonally dominant). */
function hpd(dtype: LinalgDType, n: number, seed: number): Float64Array {
  const c = cplx(dtype) ? 2 : 1, g = entries(dtype, n, seed);
  const d = new Float64Array(c * n * n);
  for (let j = 0; j < n; j++)
    for (let i = 0; i < n; i++) {
      const x = c * (i + j * n), y = c * (j + i * n);
      d[x] = (g[x]! + g[y]!) / 2 + (i === j ? 2 * n : 0);
      if (c === 2) d[x + 1] = i === j ? 0 : (g[x + 1]! - g[y + 1]!) / 2;
    }
  return d;
}

const tensor = (dtype: LinalgDType, d: Float64Array, shape: number[]) =>
  Tensor.from((single(dtype) ? Float32Array.from(d) : d) as Float64Array, shape, { dtype } as never) as Tensor<LinalgDType>;

/** Max |x − y| / (1 + max|y|). */
function diff(x: Tensor, y: Tensor): number {
  const a = x.toTypedArray() as Float64Array, b = y.toTypedArray() as Float64Array;
  expect(a.length).toBe(b.length);
  let m = 0, s = 0;
  for (let i = 0; i < b.length; i++) s = Math.max(s, Math.abs(b[i]!));
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m / (1 + s);
}

/**
 * ‖A v − P L U v‖∞ / (‖A‖∞‖v‖∞) for A column-major n×n (interleaved re, im when `c` = 2), LU packed,
 * 1-based swaps: O(n²), in f64 whatever the dtype.
 */
function luResidual(a: Float64Array, lu: Float64Array, piv: Int32Array, n: number, c: 1 | 2 = 1): number {
  const re = (m: Float64Array, i: number, k: number) => m[c * (i + k * n)]!;
  const im = (m: Float64Array, i: number, k: number) => (c === 2 ? m[c * (i + k * n) + 1]! : 0);
  const vr = Array.from({ length: n }, (_, i) => Math.sin(i + 1)), vi = Array.from({ length: n }, (_, i) => (c === 2 ? Math.cos(i + 1) : 0));
  const yr = new Float64Array(n), yi = new Float64Array(n), zr = new Float64Array(n), zi = new Float64Array(n);
  for (let i = 0; i < n; i++)
    for (let k = i; k < n; k++) {
      yr[i]! += re(lu, i, k) * vr[k]! - im(lu, i, k) * vi[k]!;
      yi[i]! += re(lu, i, k) * vi[k]! + im(lu, i, k) * vr[k]!;
    }
  for (let i = 0; i < n; i++) {
    zr[i] = yr[i]!;
    zi[i] = yi[i]!;
    for (let k = 0; k < i; k++) {
      zr[i]! += re(lu, i, k) * yr[k]! - im(lu, i, k) * yi[k]!;
      zi[i]! += re(lu, i, k) * yi[k]! + im(lu, i, k) * yr[k]!;
    }
  }
  // P L U = A with the swaps undone from the last: P z.
  for (let i = n - 1; i >= 0; i--) {
    const p = piv[i]! - 1;
    [zr[i], zr[p]] = [zr[p]!, zr[i]!];
    [zi[i], zi[p]] = [zi[p]!, zi[i]!];
  }
  let norm = 0, err = 0;
  for (let i = 0; i < n; i++) {
    let row = 0, ar = 0, ai = 0;
    for (let k = 0; k < n; k++) {
      ar += re(a, i, k) * vr[k]! - im(a, i, k) * vi[k]!;
      ai += re(a, i, k) * vi[k]! + im(a, i, k) * vr[k]!;
      row += Math.hypot(re(a, i, k), im(a, i, k));
    }
    norm = Math.max(norm, row);
    err = Math.max(err, Math.hypot(ar - zr[i]!, ai - zi[i]!));
  }
  return err / norm;
}

describe('blocked parallel LU and Cholesky over the pool lanes (2 threads) vs the sequential kernels (1 thread)', () => {
  it('the orders tested reach the blocked path', () => {
    expect(PARALLEL_MIN_ORDER).toBeLessThanOrEqual(520);
    expect(520 % PARALLEL_BLOCK).not.toBe(0);
  });

  for (const dtype of ['f64', 'f32', 'c128', 'c64'] as const) {
    const tol = single(dtype) ? 1e-4 : 1e-11;

    it(`${dtype}: luFactor — identical pivots, the same factors within rounding, a small residual (n = 520 and 768)`, async () => {
      for (const [n, seed] of [[520, 1], [768, 2]] as const) {
        const a = tensor(dtype, entries(dtype, n, seed), [n, n]);
        const x = await linalg(two).luFactor(a), y = await linalg(one).luFactor(a);
        const px = Array.from(x.pivots.toTypedArray() as Int32Array), py = Array.from(y.pivots.toTypedArray() as Int32Array);
        const c = cplx(dtype) ? 2 : 1;
        const residual = (f: { lu: Tensor; pivots: Tensor }) =>
          luResidual(Float64Array.from(a.toTypedArray() as Float64Array), Float64Array.from(f.lu.toTypedArray() as Float64Array), f.pivots.toTypedArray() as Int32Array, n, c);
        // The blocked and sequential trailing updates round differently: in double precision the
        // pivots agree exactly; in single precision two candidates of a late column can tie within
        // rounding (c64, n = 768 on an AVX2 build flipped 2 of 768), so there each factorisation
        // must reproduce A, and the factors agree wherever the pivots do.
        if (!single(dtype) || px.every((p, i) => p === py[i])) {
          expect(px).toEqual(py);
          expect(diff(x.lu, y.lu)).toBeLessThanOrEqual(tol * 100);
        }
        const bound = single(dtype) ? 1e-4 : 1e-12;
        expect(residual(x)).toBeLessThan(bound);
        expect(residual(y)).toBeLessThan(bound);
        for (const t of [a, x.lu, x.pivots, y.lu, y.pivots]) t.dispose();
      }
    });

    it(`${dtype}: cholesky (lower and upper) — the same factor within rounding; L Lᴴ = A`, async () => {
      const n = 520;
      const a = tensor(dtype, hpd(dtype, n, 3), [n, n]);
      for (const upper of [false, true]) {
        const x = await linalg(two).cholesky(a, { upper }), y = await linalg(one).cholesky(a, { upper });
        expect(diff(x, y)).toBeLessThanOrEqual(tol);
        // Zeros on the other side of the diagonal, exactly.
        const c = cplx(dtype) ? 2 : 1, d = x.toTypedArray() as Float64Array;
        let off = 0;
        for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) if (upper ? i > j : i < j) off = Math.max(off, Math.abs(d[c * (i + j * n)]!), c === 2 ? Math.abs(d[c * (i + j * n) + 1]!) : 0);
        expect(off).toBe(0);
        x.dispose();
        y.dispose();
      }
      if (dtype === 'f64') {
        // L Lᵀ v = A v for a vector v (O(n²)).
        const L = await linalg(two).cholesky(a);
        const l = L.toTypedArray() as Float64Array, ad = a.toTypedArray() as Float64Array;
        const v = Array.from({ length: n }, (_, i) => Math.cos(i));
        const t = new Float64Array(n), r = new Float64Array(n), av = new Float64Array(n);
        for (let k = 0; k < n; k++) for (let i = k; i < n; i++) t[k]! += l[i + k * n]! * v[i]!;
        for (let i = 0; i < n; i++) for (let k = 0; k <= i; k++) r[i]! += l[i + k * n]! * t[k]!;
        let err = 0, scale = 0;
        for (let i = 0; i < n; i++) { for (let k = 0; k < n; k++) av[i]! += ad[i + k * n]! * v[k]!; err = Math.max(err, Math.abs(av[i]! - r[i]!)); scale = Math.max(scale, Math.abs(av[i]!)); }
        expect(err / scale).toBeLessThan(1e-13);
        L.dispose();
      }
      a.dispose();
    });
  }

  it('a strided input (a transposed view) and a batch axis of extent 1: the same as the sequential kernels', async () => {
    const n = 600;
    const a = tensor('f64', entries('f64', n, 4), [n, n, 1]);
    const at = a.permute([1, 0, 2]);
    const x = await linalg(two).luFactor(at), y = await linalg(one).luFactor(at);
    expect(Array.from(x.pivots.toTypedArray() as Int32Array)).toEqual(Array.from(y.pivots.toTypedArray() as Int32Array));
    expect(diff(x.lu, y.lu)).toBeLessThanOrEqual(1e-9);
    const s = tensor('f64', hpd('f64', n, 5), [n, n, 1]).permute([1, 0, 2]);
    const cx = await linalg(two).cholesky(s), cy = await linalg(one).cholesky(s);
    expect(diff(cx, cy)).toBeLessThanOrEqual(1e-11);
  });

  it('NotPositiveDefinite in a later panel: the same order of the minor and batch index as the sequential path', async () => {
    const n = 700;
    for (const at of [0, 129, 401, 699]) {
      const d = hpd('f64', n, 6);
      d[at + at * n] = -1;
      const a = tensor('f64', d, [n, n, 1]);
      const errors = await Promise.all([two, one].map((b) => linalg(b).cholesky(a).then(() => undefined, (e: unknown) => e)));
      for (const e of errors) expect(e).toMatchObject({ code: 'NotPositiveDefinite', detail: { batchIndex: 0, batch: [0], info: at + 1 } });
    }
  });

  it('a singular matrix (a zero column in a later panel): the same pivots and a zero determinant on both paths', async () => {
    const n = 640;
    const d = entries('f64', n, 7);
    for (let i = 0; i < n; i++) d[i + 300 * n] = 0;
    const a = tensor('f64', d, [n, n]);
    const x = await linalg(two).luFactor(a), y = await linalg(one).luFactor(a);
    expect(Array.from(x.pivots.toTypedArray() as Int32Array)).toEqual(Array.from(y.pivots.toTypedArray() as Int32Array));
    expect(diff(x.lu, y.lu)).toBeLessThanOrEqual(1e-9);
    expect(Math.abs((await linalg(two).det(a)).toArray()[0] as number)).toBe(0);
  });
});
