import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CpuBackend, Tensor } from '@tenferro/core';
import { linalg, status } from '../src/index.js';
import { eye, fro, fromRows, mat, mul, sub, tr } from './helpers.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2, providers: [] });
});
afterAll(async () => {
  await backend.close();
});

const EPS = { f32: 2 ** -23, f64: 2 ** -52 } as const;
const entries = (n: number, m: number) => fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: n * m, maxLength: n * m });
const rowsOf = (d: number[], m: number, n: number): number[][] => Array.from({ length: m }, (_, i) => d.slice(i * n, (i + 1) * n));

describe('@tenferro/linalg built-in kernels', () => {
  it('status() reports the Eigen kernels', () => {
    const s = status();
    expect(s.available).toBe(true);
  });

  it('cholesky: ‖A − L Lᵀ‖ ≤ n·ε·c·‖A‖ for random SPD A (f32, f64)', async () => {
    const la = linalg(backend);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 9 }).chain((n) => fc.tuple(fc.constant(n), entries(n, n))), fc.constantFrom('f32' as const, 'f64' as const), async ([n, d], dtype) => {
        const g = rowsOf(d, n, n);
        const a = mul(g, tr(g)).map((r, i) => r.map((x, j) => x + (i === j ? n : 0)));
        const L = await la.cholesky(fromRows(dtype, a));
        const l = mat(L);
        for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) expect(l[i]![j]).toBe(0);
        expect(fro(sub(a, mul(l, tr(l))))).toBeLessThanOrEqual(n * EPS[dtype] * 64 * fro(a));
        L.dispose();
      }),
      { numRuns: 25 },
    );
  });

  it('cholesky of an indefinite matrix is NotPositiveDefinite with the batch index and info', async () => {
    const la = linalg(backend);
    // Batch of 3 (one trailing axis): the second is indefinite at order 2.
    const data = [4, 0, 0, 9, 1, 2, 2, 1, 1, 0, 0, 1];
    const a = Tensor.fromArray('f64', [2, 2, 3], data);
    await expect(la.cholesky(a)).rejects.toMatchObject({ code: 'NotPositiveDefinite', detail: { batchIndex: 1, info: 2 } });
  });

  it('lu: A = P L U, luFactor pivots are LAPACK 1-based swaps; solve/inv/det agree', async () => {
    const la = linalg(backend);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 1, max: 8 }), entries(n, 8))), async ([m, n, d]) => {
        const a = rowsOf(d, m, 8).map((r) => r.slice(0, n));
        const A = fromRows('f64', a);
        const { p, l, u } = await la.lu(A);
        const plu = mul(mul(mat(p), mat(l)), mat(u));
        expect(fro(sub(a, plu))).toBeLessThanOrEqual(Math.max(m, n) * EPS.f64 * 64 * (fro(a) + 1e-300) + 1e-300);
        const { lu, pivots } = await la.luFactor(A);
        const piv = pivots.toArray() as number[];
        piv.forEach((x, i) => { expect(x).toBeGreaterThanOrEqual(i + 1); expect(x).toBeLessThanOrEqual(m); });
        // Replaying the swaps on A gives P^T A = L U.
        const pa = a.map((r) => r.slice());
        piv.forEach((x, i) => { const t = pa[i]!; pa[i] = pa[x - 1]!; pa[x - 1] = t; });
        const f = mat(lu), k = Math.min(m, n);
        const L = f.map((r, i) => r.slice(0, k).map((x, j) => (i === j ? 1 : i > j ? x : 0)));
        const U = f.slice(0, k).map((r, i) => r.map((x, j) => (j >= i ? x : 0)));
        expect(fro(sub(pa, mul(L, U)))).toBeLessThanOrEqual(Math.max(m, n) * EPS.f64 * 64 * (fro(a) + 1e-300) + 1e-300);
      }),
      { numRuns: 30 },
    );
  });

  it('solve, inv and det on a batch with three trailing batch axes', async () => {
    const la = linalg(backend);
    const n = 4, batch = [2, 1, 3];
    const count = 6;
    const data: number[] = [];
    for (let b = 0; b < count; b++) for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) data.push((i === j ? 5 : 0) + Math.sin(1 + i + 7 * j + 13 * b));
    const A = Tensor.fromArray('f64', [n, n, ...batch], data);
    const B = Tensor.fromArray('f64', [n, 2, ...batch], Array.from({ length: n * 2 * count }, (_, i) => Math.cos(i)));
    const X = await la.solve(A, B);
    const Ainv = await la.inv(A);
    const det = await la.det(A);
    expect(det.shape).toEqual(batch);
    for (let b = 0; b < count; b++) {
      const a = mat(A, b);
      expect(fro(sub(mul(a, mat(X, b)), mat(B, b)))).toBeLessThan(1e-12);
      expect(fro(sub(mul(a, mat(Ainv, b)), eye(n)))).toBeLessThan(1e-12);
    }
    const singular = Tensor.fromArray('f64', [2, 2], [1, 2, 2, 4]);
    await expect(la.solve(singular, Tensor.fromArray('f64', [2, 1], [1, 1]))).rejects.toMatchObject({ code: 'SingularMatrix', detail: { batchIndex: 0, info: 2 } });
    expect((await la.det(singular)).toArray()).toEqual([0]);
  });

  it('qr: QᵀQ = I, A = QR, diag(R) ≥ 0; svd: A = U S Vᵀ, S descending; eigh: A V = V Λ', async () => {
    const la = linalg(backend);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 7 }), entries(7, 7), async (m, n, d) => {
        const a = rowsOf(d, 7, 7).slice(0, m).map((r) => r.slice(0, n));
        const A = fromRows('f64', a);
        const tol = 7 * EPS.f64 * 256 * (fro(a) + 1);
        const { q, r } = await la.qr(A);
        const Q = mat(q!), R = mat(r);
        expect(fro(sub(mul(tr(Q), Q), eye(Q[0]!.length)))).toBeLessThan(tol);
        expect(fro(sub(a, mul(Q, R)))).toBeLessThan(tol);
        R.forEach((row, i) => { if (i < row.length) expect(row[i]).toBeGreaterThanOrEqual(0); });
        const { u, s, vh } = await la.svd(A, { fullMatrices: false });
        const S = s.toArray() as number[];
        for (let i = 1; i < S.length; i++) expect(S[i]).toBeLessThanOrEqual(S[i - 1]!);
        const US = mat(u).map((row) => row.map((x, j) => x * S[j]!));
        expect(fro(sub(a, mul(US, mat(vh))))).toBeLessThan(tol);
        const vals = (await la.svdvals(A)).toArray() as number[];
        vals.forEach((x, i) => expect(Math.abs(x - S[i]!)).toBeLessThan(tol));
        const sym = mul(tr(a), a);
        const { eigenvalues, eigenvectors } = await la.eigh(fromRows('f64', sym));
        const w = eigenvalues.toArray() as number[], V = mat(eigenvectors);
        for (let i = 1; i < w.length; i++) expect(w[i]).toBeGreaterThanOrEqual(w[i - 1]!);
        const VL = V.map((row) => row.map((x, j) => x * w[j]!));
        expect(fro(sub(mul(sym, V), VL))).toBeLessThan(tol * (fro(sym) + 1));
      }),
      { numRuns: 25 },
    );
  });

  it('eig of a rotation gives ±i; solveTriangular left/right; matrixRank and cond', async () => {
    const la = linalg(backend);
    const rot = fromRows('f64', [[0, -1], [1, 0]]);
    const w = (await la.eigvals(rot)).toArray() as number[];
    expect(w.length).toBe(4);
    expect([w[1], w[3]].map((x) => Math.round(x!)).sort()).toEqual([-1, 1]);
    const L = fromRows('f64', [[2, 0], [1, 4]]);
    const B = fromRows('f64', [[2, 4], [5, 6]]);
    const X = await la.solveTriangular(L, B, { upper: false });
    expect(fro(sub(mul(mat(L), mat(X)), mat(B)))).toBeLessThan(1e-14);
    const Y = await la.solveTriangular(L, B, { upper: false, left: false });
    expect(fro(sub(mul(mat(Y), mat(L)), mat(B)))).toBeLessThan(1e-14);
    expect((await la.matrixRank(fromRows('f64', [[1, 2], [2, 4]]))).toArray()).toEqual([1]);
    expect((await la.cond(fromRows('f64', [[2, 0], [0, 1]]))).toArray()[0]).toBeCloseTo(2, 12);
  });

  it('bad input is typed before anything runs; unknown option keys are errors', async () => {
    const la = linalg(backend);
    const before = backend.executionInfo().executorEntries;
    await expect(la.cholesky(Tensor.zeros('f64', [2, 3]))).rejects.toMatchObject({ code: 'ShapeMismatch' });
    await expect(la.cholesky(Tensor.zeros('i32', [2, 2]) as never)).rejects.toMatchObject({ code: 'UnsupportedDType' });
    await expect(la.qr(Tensor.zeros('f64', [2]))).rejects.toMatchObject({ code: 'RankMismatch' });
    await expect(la.svd(Tensor.zeros('f64', [2, 2]), { full: true } as never)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(la.solve(Tensor.zeros('f64', [2, 2]), Tensor.zeros('f32', [2, 1]) as never)).rejects.toMatchObject({ code: 'DTypeMismatch' });
    expect(backend.executionInfo().executorEntries).toEqual(before);
  });

  it('zero-size inputs give zero-size outputs', async () => {
    const la = linalg(backend);
    expect((await la.cholesky(Tensor.zeros('f64', [0, 0]))).shape).toEqual([0, 0]);
    expect((await la.svdvals(Tensor.zeros('f32', [3, 0]))).shape).toEqual([0]);
    expect((await la.solve(Tensor.zeros('f64', [2, 2, 0]), Tensor.zeros('f64', [2, 1, 0]))).shape).toEqual([2, 1, 0]);
  });
});
