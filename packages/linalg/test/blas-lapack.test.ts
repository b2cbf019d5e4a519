// Both paths agree: provider-blas's LAPACK CpuLinalgKernels (every primitive, f32/f64/c64/c128,
// through the loaded runtime's ?potrf_/?trsm_/?getrf_/?gesv_/?geqrf_/?orgqr_ (?ungqr_)/?gesdd_/
// ?syevd_ (?heevd_)/?geev_/?getc2_) against the built-in Eigen kernels of a faer backend, on the
// same inputs — same shapes, conventions and signs (L lower with zeros above, LAPACK 1-based
// pivots, R's diagonal real ≥ 0, singular values descending and vectors normalised, eigh ascending,
// eig ordered by real then imaginary part) and the same typed errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CpuBackend, Tensor } from '@tenferro/core';
import { createBlasProvider, status as blasStatus } from '@tenferro/provider-blas';
import { type Linalg, type LinalgDType, linalg, linalgKernelsKey } from '../src/index.js';
import { kernelRecorder, prng } from './helpers.js';

const haveBlas = blasStatus().available;
let blas: CpuBackend;
let faer: CpuBackend;

beforeAll(async () => {
  faer = await CpuBackend.create({ threads: 1, providers: [] });
  if (haveBlas) blas = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
});
afterAll(async () => {
  await faer.close();
  await blas?.close();
});

const DTYPES: readonly LinalgDType[] = ['f32', 'f64', 'c64', 'c128'];
const cplx = (d: LinalgDType) => d === 'c64' || d === 'c128';
const single = (d: LinalgDType) => d === 'f32' || d === 'c64';


/** A deterministic pseudo-random matrix stack (interleaved for complex). */
function rand(dtype: LinalgDType, shape: number[], seed: number): Tensor<LinalgDType> {
  const len = shape.reduce((p, e) => p * e, 1) * (cplx(dtype) ? 2 : 1);
  const next = prng(seed);
  const d = Array.from({ length: len }, () => next());
  return Tensor.from((single(dtype) ? Float32Array : Float64Array).from(d) as Float64Array, shape, { dtype } as never) as Tensor<LinalgDType>;
}

/** Max |x − y| / (1 + max|y|) over two results. */
function diff(x: Tensor, y: Tensor): number {
  expect(x.dtype).toBe(y.dtype);
  expect(x.shape).toEqual(y.shape);
  const a = x.toTypedArray() as Float64Array, b = y.toTypedArray() as Float64Array;
  let m = 0, s = 0;
  for (let i = 0; i < b.length; i++) s = Math.max(s, Math.abs(b[i]!));
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m / (1 + s);
}

function agree(x: Tensor, y: Tensor, tol: number, what: string): void {
  const d = diff(x, y);
  if (!(d <= tol)) throw new Error(`${what}: the paths differ by ${d} (tolerance ${tol})`);
}

/** Both paths, one call each; every blas call must have run LAPACK. */
async function both<R>(fn: (la: Linalg) => Promise<R>): Promise<[R, R]> {
  const lb = linalg(blas), lf = linalg(faer);
  const rec = kernelRecorder();
  let x: R;
  try {
    x = await fn(lb);
    for (const r of rec.take()) expect(r, `${r.op} ran LAPACK`).toMatchObject({ kernel: 'extension' });
  } finally {
    rec.stop();
  }
  const y = await fn(lf);
  return [x, y];
}

/** A Hermitian matrix with eigenvalues 1..n (well separated): Q diag Qᴴ with Q from qr. */
async function hermitian(la: Linalg, dtype: LinalgDType, n: number, nb: number, seed: number): Promise<Tensor<LinalgDType>> {
  const { q } = await la.qr(rand(dtype, [n, n, nb], seed));
  const Q = q!.toTypedArray() as Float64Array, c = cplx(dtype) ? 2 : 1;
  const out = new (single(dtype) ? Float32Array : Float64Array)(c * n * n * nb);
  for (let b = 0; b < nb; b++)
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        let re = 0, im = 0;
        for (let k = 0; k < n; k++) {
          const qi = c * (b * n * n + i + k * n), qj = c * (b * n * n + j + k * n);
          const ar = Q[qi]!, ai = c === 2 ? Q[qi + 1]! : 0, br = Q[qj]!, bi = c === 2 ? -Q[qj + 1]! : 0;
          re += (k + 1) * (ar * br - ai * bi);
          im += (k + 1) * (ar * bi + ai * br);
        }
        out[c * (b * n * n + i + j * n)] = re;
        if (c === 2) out[c * (b * n * n + i + j * n) + 1] = i === j ? 0 : im;
      }
  return Tensor.from(out as Float64Array, [n, n, nb], { dtype } as never) as Tensor<LinalgDType>;
}

const shapeArb = fc.record({ m: fc.integer({ min: 1, max: 6 }), n: fc.integer({ min: 1, max: 6 }), nb: fc.integer({ min: 1, max: 2 }), seed: fc.integer({ min: 0, max: 10_000 }) });

describe.skipIf(!haveBlas)('LAPACK through provider-blas vs the built-in kernels: every primitive, every dtype', () => {
  for (const dtype of DTYPES) {
    const tol = single(dtype) ? 2e-4 : 1e-10;

    it(`${dtype}: cholesky (both triangles), luFactor, lu, solve, luFullPivot agree (same pivots)`, async () => {
      await fc.assert(
        fc.asyncProperty(shapeArb, async ({ m, n, nb, seed }) => {
          const spd = await hermitian(linalg(faer), dtype, m, nb, seed);
          const [cl, cf] = await both((la) => la.cholesky(spd));
          agree(cl, cf, tol, 'cholesky');
          const [ul, uf] = await both((la) => la.cholesky(spd, { upper: true }));
          agree(ul, uf, tol, 'cholesky upper');
          const g = rand(dtype, [m, n, nb], seed);
          const [fl, ff] = await both((la) => la.luFactor(g));
          expect(fl.pivots.toArray()).toEqual(ff.pivots.toArray());
          agree(fl.lu, ff.lu, tol * 100, 'luFactor');
          const [pl, pf] = await both((la) => la.lu(g));
          agree(pl.p, pf.p, 0, 'lu P');
          agree(pl.l, pf.l, tol * 100, 'lu L');
          agree(pl.u, pf.u, tol * 100, 'lu U');
          const rhs = rand(dtype, [m, 2, nb], seed + 1);
          const [xl, xf] = await both((la) => la.solve(spd, rhs));
          agree(xl, xf, tol * 10, 'solve');
          const sq = rand(dtype, [m, m, nb], seed + 2);
          const [zl, zf] = await both((la) => la.luFullPivot(sq));
          expect(zl.pivots.toArray()).toEqual(zf.pivots.toArray());
          expect(zl.colPivots.toArray()).toEqual(zf.colPivots.toArray());
          agree(zl.lu, zf.lu, tol * 100, 'luFullPivot');
        }),
        { numRuns: 12 },
      );
    });

    it(`${dtype}: solveTriangular (left/right, upper/lower, unit) agrees`, async () => {
      await fc.assert(
        fc.asyncProperty(shapeArb, fc.boolean(), fc.boolean(), fc.boolean(), async ({ m, n, nb, seed }, left, upper, unitDiagonal) => {
          const na = left ? m : n;
          // Diagonally dominant: well conditioned.
          const t = rand(dtype, [na, na, nb], seed).toTypedArray() as Float64Array, c = cplx(dtype) ? 2 : 1;
          for (let b = 0; b < nb; b++) for (let i = 0; i < na; i++) t[c * (b * na * na + i + i * na)] = 3 + i;
          const a = Tensor.from(t, [na, na, nb], { dtype } as never) as Tensor<LinalgDType>;
          const rhs = rand(dtype, [m, n, nb], seed + 1);
          const [x, y] = await both((la) => la.solveTriangular(a, rhs, { upper, left, unitDiagonal }));
          agree(x, y, tol * 10, 'solveTriangular');
        }),
        { numRuns: 12 },
      );
    });

    it(`${dtype}: qr (reduced, complete, r) agrees — R's diagonal real and ≥ 0 on both`, async () => {
      await fc.assert(
        fc.asyncProperty(shapeArb, async ({ m, n, nb, seed }) => {
          const k = Math.min(m, n);
          // Well conditioned (Q's columns are then fixed by R's sign convention): dominant diagonal.
          const t = rand(dtype, [m, n, nb], seed).toTypedArray() as Float64Array, c0 = cplx(dtype) ? 2 : 1;
          for (let b = 0; b < nb; b++) for (let i = 0; i < k; i++) t[c0 * (b * m * n + i + i * m)] = t[c0 * (b * m * n + i + i * m)]! + 3;
          const a = Tensor.from(t, [m, n, nb], { dtype } as never) as Tensor<LinalgDType>;
          for (const mode of ['reduced', 'complete', 'r'] as const) {
            const [x, y] = await both((la) => la.qr(a, { mode }));
            agree(x.r, y.r, tol * 100, `qr ${mode} R`);
            if (mode === 'reduced') agree(x.q!, y.q!, tol * 100, 'qr Q');
            if (mode === 'complete') {
              // Q's first k columns are fixed by the convention; the others span the complement.
              const qx = x.q!.toTypedArray(), qy = y.q!.toTypedArray(), c = cplx(dtype) ? 2 : 1;
              for (let b = 0; b < nb; b++)
                for (let i = 0; i < c * m * k; i++) expect(Math.abs(qx[c * b * m * m + i]! - qy[c * b * m * m + i]!)).toBeLessThanOrEqual(tol * 100);
            }
            const r = x.r.toTypedArray(), rr = mode === 'complete' ? m : k, c = cplx(dtype) ? 2 : 1;
            for (let b = 0; b < nb; b++)
              for (let i = 0; i < k; i++) {
                const at = c * (b * rr * n + i + i * rr);
                expect(r[at]!).toBeGreaterThanOrEqual(0);
                if (c === 2) expect(r[at + 1]).toBe(0);
              }
          }
        }),
        { numRuns: 10 },
      );
    });

    it(`${dtype}: svd (thin, full, values) agrees — same singular vectors after normalisation`, async () => {
      await fc.assert(
        fc.asyncProperty(shapeArb, async ({ m, n, nb, seed }) => {
          const a = rand(dtype, [m, n, nb], seed);
          const [sl, sf] = await both((la) => la.svdvals(a));
          agree(sl, sf, tol * 10, 'svdvals');
          const s = sf.toTypedArray(), k = Math.min(m, n);
          // Vectors are unique (up to the normalised phase) only for well-separated singular values.
          let gap = Infinity;
          for (let b = 0; b < nb; b++) for (let i = 0; i + 1 < k; i++) gap = Math.min(gap, s[b * k + i]! - s[b * k + i + 1]!);
          if (k > 0 && s[k - 1]! < 1e-3) gap = 0;
          gap = Math.min(gap, 1);
          const [x, y] = await both((la) => la.svd(a, { fullMatrices: false }));
          agree(x.s, y.s, tol * 10, 'svd S');
          if (gap > 0.05) {
            agree(x.u, y.u, (tol * 100) / gap, 'svd U');
            agree(x.vh, y.vh, (tol * 100) / gap, 'svd Vh');
          }
          const [fx, fy] = await both((la) => la.svd(a, { fullMatrices: true }));
          expect(fx.u.shape).toEqual(fy.u.shape);
          expect(fx.vh.shape).toEqual(fy.vh.shape);
          agree(fx.s, fy.s, tol * 10, 'svd full S');
        }),
        { numRuns: 10 },
      );
    });

    it(`${dtype}: eigh and eigvalsh (both triangles) agree — ascending values, normalised vectors`, async () => {
      await fc.assert(
        fc.asyncProperty(shapeArb, fc.constantFrom('L' as const, 'U' as const), async ({ m, nb, seed }, uplo) => {
          const a = await hermitian(linalg(faer), dtype, m, nb, seed);
          const [x, y] = await both((la) => la.eigh(a, { uplo }));
          agree(x.eigenvalues, y.eigenvalues, tol * 10 * m, 'eigh values');
          agree(x.eigenvectors, y.eigenvectors, tol * 100 * m, 'eigh vectors');
          const [vx, vy] = await both((la) => la.eigvalsh(a, { uplo }));
          agree(vx, vy, tol * 10 * m, 'eigvalsh');
        }),
        { numRuns: 10 },
      );
    });

    it(`${dtype}: eig and eigvals agree — same order (real part, then imaginary part), unit normalised vectors`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 2 }), fc.integer({ min: 0, max: 10_000 }), async (n, nb, seed) => {
          // A = X D X⁻¹: D block diagonal with well-separated eigenvalues (conjugate pairs from 2×2
          // rotation blocks), X = I + small: well conditioned.
          const c = cplx(dtype) ? 2 : 1;
          const d = new Float64Array(c * n * n * nb), xs = rand(dtype, [n, n, nb], seed).toTypedArray() as Float64Array;
          for (let b = 0; b < nb; b++) {
            for (let i = 0; i < n; i++) {
              const at = (r: number, col: number) => c * (b * n * n + r + col * n);
              if (i + 1 < n && i % 3 === 0) {
                d[at(i, i)] = i; d[at(i + 1, i + 1)] = i; d[at(i, i + 1)] = 1 + i; d[at(i + 1, i)] = -(1 + i);
                i++;
              } else {
                d[at(i, i)] = 2 * i + 0.5;
                if (c === 2) d[at(i, i) + 1] = 0.25 * i;
              }
            }
            for (let i = 0; i < n * n; i++) { xs[c * (b * n * n + i)] = xs[c * (b * n * n + i)]! * 0.2; if (c === 2) xs[c * (b * n * n + i) + 1] = xs[c * (b * n * n + i) + 1]! * 0.2; }
            for (let i = 0; i < n; i++) xs[c * (b * n * n + i + i * n)] = xs[c * (b * n * n + i + i * n)]! + 1;
          }
          const D = Tensor.from(d, [n, n, nb], { dtype: cplx(dtype) ? 'c128' : 'f64' } as never);
          const X = Tensor.from(xs, [n, n, nb], { dtype } as never) as Tensor<LinalgDType>;
          const lf = linalg(faer);
          const Xi = await lf.inv(X);
          // A = X·D·X⁻¹ in f64/c128 arithmetic (JS), then to the dtype.
          const mulC = (p: Float64Array, q: Float64Array) => {
            const o = new Float64Array(c * n * n * nb);
            for (let b = 0; b < nb; b++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
              let re = 0, im = 0;
              for (let k = 0; k < n; k++) {
                const pi = c * (b * n * n + i + k * n), qi = c * (b * n * n + k + j * n);
                const pr = p[pi]!, pim = c === 2 ? p[pi + 1]! : 0, qr = q[qi]!, qim = c === 2 ? q[qi + 1]! : 0;
                re += pr * qr - pim * qim; im += pr * qim + pim * qr;
              }
              o[c * (b * n * n + i + j * n)] = re;
              if (c === 2) o[c * (b * n * n + i + j * n) + 1] = im;
            }
            return o;
          };
          const ad = mulC(mulC(Float64Array.from(xs), D.toTypedArray() as Float64Array), Float64Array.from(Xi.toTypedArray() as Float64Array));
          const A = Tensor.from((single(dtype) ? Float32Array : Float64Array).from(ad) as Float64Array, [n, n, nb], { dtype } as never) as Tensor<LinalgDType>;
          const [x, y] = await both((la) => la.eig(A));
          agree(x.eigenvalues, y.eigenvalues, tol * 100 * n, 'eig values');
          agree(x.eigenvectors, y.eigenvectors, tol * 1000 * n, 'eig vectors');
          const [vx, vy] = await both((la) => la.eigvals(A));
          agree(vx, vy, tol * 100 * n, 'eigvals');
          // Ordered by real part; real parts equal within δ = √ε·max|λ| (the pairs here) by imaginary part.
          const w = vx.toTypedArray();
          for (let b = 0; b < nb; b++) {
            let big = 0;
            for (let i = 0; i < n; i++) big = Math.max(big, Math.hypot(w[2 * (b * n + i)]!, w[2 * (b * n + i) + 1]!));
            const delta = Math.sqrt(single(dtype) ? 2 ** -23 : 2 ** -52) * big;
            for (let i = 0; i + 1 < n; i++) {
              const [r0, i0, r1, i1] = [w[2 * (b * n + i)]!, w[2 * (b * n + i) + 1]!, w[2 * (b * n + i + 1)]!, w[2 * (b * n + i + 1) + 1]!];
              expect(r1 - r0 > delta || (Math.abs(r1 - r0) <= delta && i0 <= i1)).toBe(true);
            }
          }
        }),
        { numRuns: 10 },
      );
    });

    it(`${dtype}: the same typed errors — NotPositiveDefinite and SingularMatrix with batch index and info`, async () => {
      const lb = linalg(blas);
      const rec = kernelRecorder();
      const c = cplx(dtype);
      const v = (xs: number[]) => (c ? xs.flatMap((x) => [x, 0]) : xs);
      const a = Tensor.from((single(dtype) ? Float32Array : Float64Array).from(v([4, 0, 0, 9, 1, 2, 2, 1, 1, 0, 0, 1])) as Float64Array, [2, 2, 3], { dtype } as never);
      await expect(lb.cholesky(a as Tensor<LinalgDType>)).rejects.toMatchObject({ code: 'NotPositiveDefinite', detail: { batchIndex: 1, info: 2 } });
      const s = Tensor.from((single(dtype) ? Float32Array : Float64Array).from(v([1, 2, 2, 4])) as Float64Array, [2, 2], { dtype } as never) as Tensor<LinalgDType>;
      const r = Tensor.from((single(dtype) ? Float32Array : Float64Array).from(v([1, 1])) as Float64Array, [2, 1], { dtype } as never) as Tensor<LinalgDType>;
      await expect(lb.solve(s, r)).rejects.toMatchObject({ code: 'SingularMatrix', detail: { batchIndex: 0, info: 2 } });
      await expect(lb.inv(s)).rejects.toMatchObject({ code: 'SingularMatrix' });
      expect(rec.take().map((x) => x.kernel)).toEqual(['extension', 'extension', 'extension']);
      rec.stop();
    });
  }

  it('a batch of small solves (one ?gesv_ loop in one native call): two batch axes, a permuted view, a singular matrix named by its batch index; 1 and 2 threads', async () => {
    const blas2 = await CpuBackend.create({ kind: 'blas', threads: 2, providers: [createBlasProvider()] });
    try {
      for (const dtype of DTYPES) {
        const tol = single(dtype) ? 2e-4 : 1e-10;
        // 35 diagonally dominant 8×8 matrices over batch axes [5, 7], and a view of them with the
        // batch axes swapped (strides not in batch order: the native odometer steps both axes).
        const c = cplx(dtype) ? 2 : 1, m = 8;
        const base = rand(dtype, [m, m, 5, 7], 11);
        const d = base.toTypedArray() as Float64Array;
        for (let b = 0; b < 35; b++) for (let i = 0; i < m; i++) d[c * (b * m * m + i + i * m)] = 9 + i;
        const a = Tensor.from(d, [m, m, 5, 7], { dtype } as never) as Tensor<LinalgDType>;
        const rhs = rand(dtype, [m, 3, 5, 7], 12);
        const [x, y] = await both((la) => la.solve(a, rhs));
        agree(x, y, tol * 10, 'batched solve');
        const at = a.permute([0, 1, 3, 2]), rt = rhs.permute([0, 1, 3, 2]);
        const [xt, yt] = await both((la) => la.solve(at, rt));
        agree(xt, yt, tol * 10, 'batched solve (permuted batch axes)');
        const x2 = await linalg(blas2).solve(a, rhs);
        agree(x2, y, tol * 10, 'batched solve, 2 threads');
        // Batch 23 = [3, 4] made singular (column 3 zero): U(3, 3) is exactly zero on both paths
        // (the elimination leaves a zero column zero), and the error names batch 23 and info 3.
        const s = new (single(dtype) ? Float32Array : Float64Array)(d);
        for (let j = 0; j < m; j++) for (let k = 0; k < c; k++) s[c * (23 * m * m + j + 2 * m) + k] = 0;
        const sing = Tensor.from(s as Float64Array, [m, m, 5, 7], { dtype } as never) as Tensor<LinalgDType>;
        const errors = await Promise.all([linalg(blas), linalg(faer), linalg(blas2)].map((la) => la.solve(sing, rhs).then(() => undefined, (e: unknown) => e)));
        for (const e of errors) expect(e).toMatchObject({ code: 'SingularMatrix', detail: { batchIndex: 23, batch: [3, 4], info: 3 } });
      }
    } finally {
      await blas2.close();
    }
  });

  it('zero-size and 1×1 inputs: same shapes and identities on both paths', async () => {
    for (const dtype of DTYPES) {
      for (const [m, n] of [[0, 3], [3, 0], [0, 0], [1, 1]] as const) {
        const a = rand(dtype, [m, n, 2], 1);
        const [qx, qy] = await both((la) => la.qr(a, { mode: 'complete' }));
        agree(qx.q!, qy.q!, 1e-6, 'qr complete Q');
        const [sx, sy] = await both((la) => la.svd(a));
        agree(sx.u, sy.u, 1e-6, 'svd U');
        agree(sx.vh, sy.vh, 1e-6, 'svd Vh');
        const [lx, ly] = await both((la) => la.lu(a));
        agree(lx.p, ly.p, 0, 'lu P');
        if (m === n) {
          const [ex, ey] = await both((la) => la.eig(a));
          agree(ex.eigenvalues, ey.eigenvalues, 1e-6, 'eig');
          const [zx, zy] = await both((la) => la.luFullPivot(a));
          agree(zx.lu, zy.lu, 1e-6, 'luFullPivot');
        }
      }
    }
  });

  it('a singular matrix: luFullPivot perturbs the same pivot to smin on both paths (getc2)', async () => {
    const a = Tensor.fromArray('f64', [3, 3], [1, 2, 3, 2, 4, 6, 1, 0, 1]);
    const [x, y] = await both((la) => la.luFullPivot(a));
    expect(x.pivots.toArray()).toEqual(y.pivots.toArray());
    expect(x.colPivots.toArray()).toEqual(y.colPivots.toArray());
    agree(x.lu, y.lu, 1e-14, 'luFullPivot singular');
    const u = x.lu.toArray() as number[];
    // smin = max(ε·max|A|, smallest normal/ε) = 6·2⁻⁵²
    expect(u[8]).toBe(6 * 2 ** -52);
  });

  it('a workspace past 64 MiB (svd of 1500×1500 f64: 69 MiB) kept for the next equal call and released before another kind: the same results each time', async () => {
    const n = 1500;
    const a = rand('f64', [n, n], 7) as Tensor<'f64'>;
    const small = rand('f64', [4, 4], 8) as Tensor<'f64'>;
    const la = linalg(blas);
    // The index of the first element whose bits differ, -1 when none.
    const firstDiff = (x: Tensor, y: Tensor): number => {
      const p = new BigUint64Array((x.toTypedArray() as Float64Array).slice().buffer), q = new BigUint64Array((y.toTypedArray() as Float64Array).slice().buffer);
      if (p.length !== q.length) return 0;
      for (let i = 0; i < p.length; i++) if (p[i] !== q[i]) return i;
      return -1;
    };
    const rec = kernelRecorder();
    const first = await la.svd(a); // grows the worker's workspace past 64 MiB: kept for an equal call
    const again = await la.svd(a); // reuses it
    const lu = await la.luFactor(small); // another kind: released first
    const third = await la.svd(a); // grown again
    for (const r of rec.take()) expect(r).toMatchObject({ kernel: 'extension' });
    rec.stop();
    for (const x of [again, third]) {
      expect(firstDiff(x.s, first.s)).toBe(-1);
      expect(firstDiff(x.u, first.u)).toBe(-1);
      expect(firstDiff(x.vh, first.vh)).toBe(-1);
    }
    const ref = await linalg(faer).luFactor(small);
    expect(lu.pivots.toArray()).toEqual(ref.pivots.toArray());
    agree(lu.lu, ref.lu, 1e-12, 'luFactor after a kept workspace');
    for (const t of [first.u, first.s, first.vh, again.u, again.s, again.vh, third.u, third.s, third.vh, lu.lu, lu.pivots, ref.lu, ref.pivots, a, small]) t.dispose();
  }, 120_000);

  it('counts: every call executed, none declined (the runtime exports every routine)', async () => {
    const ext = blas.providerBundle().extension(linalgKernelsKey()) as unknown as { callCounts(): { executed: Record<string, number>; declined: Record<string, number> } };
    const before = ext.callCounts();
    await linalg(blas).qr(rand('c64', [3, 2], 1));
    const after = ext.callCounts();
    expect(after.executed.qr).toBe((before.executed.qr ?? 0) + 1);
    expect(after.declined).toEqual({});
  });
});
