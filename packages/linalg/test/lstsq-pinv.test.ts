// lstsq (gelsd semantics, torch.linalg.lstsq's fields) and pinv (torch.linalg.pinv's tolerances),
// composites over the svd / eigh primitives: on the built-in kernels and, when the BLAS runtime is
// present, through provider-blas's LAPACK (?gesdd_, ?syevd_/?heevd_) — both give the same results.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CpuBackend, Tensor } from '@tenferro/core';
import { createBlasProvider, status as blasStatus } from '@tenferro/provider-blas';
import { type Linalg, type LinalgDType, linalg } from '../src/index.js';
import { kernelRecorder, prng } from './helpers.js';

const haveBlas = blasStatus().available;
const backends: [string, CpuBackend][] = [];
beforeAll(async () => {
  backends.push(['builtin', await CpuBackend.create({ threads: 1, providers: [] })]);
  if (haveBlas) backends.push(['lapack', await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] })]);
});
afterAll(async () => {
  for (const [, b] of backends) await b.close();
});

const cplx = (d: LinalgDType) => d === 'c64' || d === 'c128';
const single = (d: LinalgDType) => d === 'f32' || d === 'c64';

type C = [number, number];
/** A column-major complex view of batch b of a tensor: get(i, j). */
function view(t: Tensor, b = 0): (i: number, j: number) => C {
  const d = t.toTypedArray() as Float64Array, [m, n] = [t.shape[0]!, t.shape[1]!], c = cplx(t.dtype as LinalgDType) ? 2 : 1;
  return (i, j) => {
    const at = c * (b * m * n + i + j * m);
    return [d[at]!, c === 2 ? d[at + 1]! : 0];
  };
}
function mul(a: (i: number, j: number) => C, b: (i: number, j: number) => C, m: number, k: number, n: number): C[][] {
  return Array.from({ length: m }, (_, i) => Array.from({ length: n }, (_, j) => {
    let re = 0, im = 0;
    for (let l = 0; l < k; l++) { const [ar, ai] = a(i, l), [br, bi] = b(l, j); re += ar * br - ai * bi; im += ar * bi + ai * br; }
    return [re, im] as C;
  }));
}
const get = (x: C[][]) => (i: number, j: number) => x[i]![j]!;
const adj = (f: (i: number, j: number) => C) => (i: number, j: number): C => { const [r, im] = f(j, i); return [r, -im]; };
function maxDiff(x: (i: number, j: number) => C, y: (i: number, j: number) => C, m: number, n: number): number {
  let d = 0;
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) { const [a, b] = x(i, j), [c, e] = y(i, j); d = Math.max(d, Math.hypot(a - c, b - e)); }
  return d;
}


function rand(dtype: LinalgDType, shape: number[], seed: number): Tensor<LinalgDType> {
  const len = shape.reduce((p, e) => p * e, 1) * (cplx(dtype) ? 2 : 1);
  const next = prng(seed);
  const d = Array.from({ length: len }, () => next());
  return Tensor.from((single(dtype) ? Float32Array : Float64Array).from(d) as Float64Array, shape, { dtype } as never) as Tensor<LinalgDType>;
}

/** A rank-r m×n matrix: (m×r)·(r×n). */
async function lowRank(dtype: LinalgDType, m: number, n: number, r: number, seed: number): Promise<Tensor<LinalgDType>> {
  const x = rand(dtype, [m, r], seed), y = rand(dtype, [r, n], seed + 7);
  const p = mul(view(x), view(y), m, r, n), c = cplx(dtype) ? 2 : 1;
  const out = new (single(dtype) ? Float32Array : Float64Array)(c * m * n);
  for (let j = 0; j < n; j++) for (let i = 0; i < m; i++) { out[c * (i + j * m)] = p[i]![j]![0]; if (c === 2) out[c * (i + j * m) + 1] = p[i]![j]![1]; }
  return Tensor.from(out as Float64Array, [m, n], { dtype } as never) as Tensor<LinalgDType>;
}

const DTYPES: readonly LinalgDType[] = ['f32', 'f64', 'c64', 'c128'];

describe('pinv: the four Penrose conditions; lstsq: minimum-norm least squares', () => {
  for (const dtype of DTYPES) {
    const eps = single(dtype) ? 2 ** -23 : 2 ** -52;
    it(`${dtype}: pinv satisfies A X A = A, X A X = X, (A X)ᴴ = A X, (X A)ᴴ = X A (full and deficient rank), on every path`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 1000 }), async (m, n, r0, seed) => {
          const r = Math.min(r0, m, n);
          const a = r === 0 ? rand(dtype, [m, n], seed) : await lowRank(dtype, m, n, r, seed);
          // κ over the singular values pinv keeps (above max(m, n)·ε·σ₁), ‖A‖ = σ₁, ‖X‖ = 1/σ_kept.
          const s = (await linalg(backends[0]![1]).svdvals(a)).toArray() as number[];
          const kept = s.filter((v) => v > Math.max(m, n) * eps * s[0]!);
          const kappa = kept.length > 0 ? s[0]! / kept[kept.length - 1]! : 1;
          const normA = s[0] ?? 0, normX = kept.length > 0 ? 1 / kept[kept.length - 1]! : 0;
          const nEps = Math.max(m, n) * eps;
          const results: Tensor[] = [];
          for (const [, b] of backends) {
            const la = linalg(b);
            const x = await la.pinv(a);
            expect(x.shape).toEqual([n, m]);
            const A = view(a), X = view(x);
            const tol = 2000 * nEps;
            // A backward-stable pinv is the exact pseudo-inverse of A + E, ‖E‖ ≲ n·ε·‖A‖ (E also takes
            // the singular values cut). Then A X A − A = E − E X A − A X E + E X E ≲ 3‖E‖·κ,
            // X A X − X = −X E X ≲ ‖E‖·‖X‖² = n·ε·κ·‖X‖, and (A X)ᴴ − A X, (X A)ᴴ − X A ≲ 2‖E‖·‖X‖ =
            // 2·n·ε·κ: the fixed bounds hold for well-conditioned A, the κ-scaled ones for the rest (a
            // random 4×4 f32 product has κ = 4.9e4: X A X − X was 11.5 against the fixed 0.95; seeds
            // -1359888387 [4,4,4,938] and, f64, 1379663728 [6,6,6,183]). Observed err/(n·ε·κ·scale)
            // ≤ 6.8 over 43,000 sampled cases of every dtype, both paths: 100 leaves a margin.
            const AX = mul(A, X, m, n, m), XA = mul(X, A, n, m, n);
            expect(maxDiff(get(mul(get(AX), A, m, m, n)), A, m, n)).toBeLessThanOrEqual(Math.max(tol * 10, 100 * nEps * kappa * normA));
            expect(maxDiff(get(mul(get(XA), X, n, n, m)), X, n, m)).toBeLessThanOrEqual(Math.max(tol * 1e3, 100 * nEps * kappa * normX));
            expect(maxDiff(get(AX), adj(get(AX)), m, m)).toBeLessThanOrEqual(Math.max(tol * 10, 100 * nEps * kappa));
            expect(maxDiff(get(XA), adj(get(XA)), n, n)).toBeLessThanOrEqual(Math.max(tol * 10, 100 * nEps * kappa));
            results.push(x);
          }
          if (results.length === 2) {
            // Two backward-stable paths agree to κ·ε·‖X‖ (perturbation of the pseudo-inverse), κ over the
            // singular values both keep: a random product can be ill-conditioned, so a fixed bound flakes.
            const bound = Math.max(1e5 * nEps, 100 * nEps * kappa * normX);
            expect(maxDiff(view(results[0]!), view(results[1]!), n, m)).toBeLessThanOrEqual(bound);
          }
        }),
        { numRuns: 15 },
      );
    });

    it(`${dtype}: lstsq — overdetermined full rank (residuals), rank-deficient (minimum norm = pinv·b), underdetermined (exact)`, async () => {
      for (const [name, b] of backends) {
        const la: Linalg = linalg(b);
        const rec = kernelRecorder();
        const tol = 1e4 * eps;
        // Overdetermined, full rank: the normal equations hold; residuals = ‖A x − b‖².
        const a = rand(dtype, [7, 3], 3), rhs = rand(dtype, [7, 2], 4);
        const r = await la.lstsq(a, rhs);
        expect(r.solution.shape).toEqual([3, 2]);
        expect(r.rank.toArray()).toEqual([3]);
        expect(r.singularValues.shape).toEqual([3]);
        const A = view(a), X = view(r.solution), B = view(rhs);
        const AX = mul(A, X, 7, 3, 2);
        const res = get(AX.map((row, i) => row.map(([re, im], j) => [re - B(i, j)[0], im - B(i, j)[1]] as C)));
        const normal = mul(adj(A), res, 3, 7, 2);
        expect(maxDiff(get(normal), () => [0, 0], 3, 2), `${name}: Aᴴ(Ax − b) = 0`).toBeLessThanOrEqual(tol * 10);
        const rs = r.residuals.toArray() as number[];
        expect(r.residuals.shape).toEqual([2]);
        for (let j = 0; j < 2; j++) {
          let s = 0;
          for (let i = 0; i < 7; i++) s += res(i, j)[0] ** 2 + res(i, j)[1] ** 2;
          expect(Math.abs(rs[j]! - s)).toBeLessThanOrEqual(tol * (1 + s));
        }
        // Rank-deficient: the minimum-norm solution is pinv(A)·b; no residuals.
        const d = await lowRank(dtype, 6, 4, 2, 9);
        const b6 = rand(dtype, [6, 2], 5);
        const rd = await la.lstsq(d, b6);
        expect(rd.rank.toArray()).toEqual([2]);
        expect(rd.residuals.shape).toEqual([0]);
        const p = await la.pinv(d);
        const viaPinv = mul(view(p), view(b6), 4, 6, 2);
        expect(maxDiff(view(rd.solution), get(viaPinv), 4, 2)).toBeLessThanOrEqual(tol * 100);
        // Underdetermined: A x = b exactly, and x is in the row space (minimum norm).
        const u = rand(dtype, [2, 5], 11), ub = rand(dtype, [2, 1], 12);
        const ru = await la.lstsq(u, ub);
        expect(ru.residuals.shape).toEqual([0]);
        expect(maxDiff(get(mul(view(u), view(ru.solution), 2, 5, 1)), view(ub), 2, 1)).toBeLessThanOrEqual(tol * 10);
        const calls = rec.take();
        rec.stop();
        expect(calls.length).toBeGreaterThan(0);
        expect(calls.every((c) => c.kernel === (name === 'lapack' ? 'extension' : 'builtin'))).toBe(true);
      }
    });
  }

  it('batched lstsq: per-batch rank, residuals only when every matrix has full column rank', async () => {
    const la = linalg(backends[0]![1]);
    const data = Array.from({ length: 4 * 2 * 3 }, (_, i) => Math.sin(i + 1));
    // Batch 1 rank-deficient: its second column equals its first.
    for (let i = 0; i < 4; i++) data[8 + 4 + i] = data[8 + i]!;
    const a = Tensor.fromArray('f64', [4, 2, 3], data);
    const b = Tensor.fromArray('f64', [4, 1, 3], Array.from({ length: 12 }, (_, i) => Math.cos(i)));
    const r = await la.lstsq(a, b);
    expect(r.rank.toArray()).toEqual([2, 1, 2]);
    expect(r.residuals.shape).toEqual([0]);
    expect(r.solution.shape).toEqual([2, 1, 3]);
    const full = await la.lstsq(Tensor.fromArray('f64', [3, 1, 2], [1, 2, 3, 4, 5, 6]), Tensor.fromArray('f64', [3, 1, 2], [1, 1, 1, 2, 2, 2]));
    expect(full.residuals.shape).toEqual([1, 2]);
  });

  it('pinv tolerances as torch: atol and rtol cut singular values; hermitian agrees with the SVD path', async () => {
    const la = linalg(backends[0]![1]);
    const a = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1e-3]);
    const near = (t: Tensor, want: number[]) => (t.toArray() as number[]).forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 9));
    near(await la.pinv(a), [1, 0, 0, 1000]);
    near(await la.pinv(a, { atol: 1e-2 }), [1, 0, 0, 0]);
    near(await la.pinv(a, { rtol: 1e-2 }), [1, 0, 0, 0]);
    near(await la.pinv(a, { atol: 1e-4, rtol: 0.5 }), [1, 0, 0, 0]);
    const h = Tensor.fromArray('c128', [2, 2], [2, 0, 1, -1, 1, 1, -3, 0] as never);
    const x = await la.pinv(h), y = await la.pinv(h, { hermitian: true });
    const dx = x.toTypedArray(), dy = y.toTypedArray();
    for (let i = 0; i < dx.length; i++) expect(Math.abs(dx[i]! - dy[i]!)).toBeLessThan(1e-13);
  });

  it('bad options are InvalidArgument before anything runs; shapes are checked', async () => {
    const la = linalg(backends[0]![1]);
    const rec = kernelRecorder();
    const a = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);
    await expect(la.pinv(a, { atol: -1 })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(la.pinv(a, { rcond: 1 } as never)).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(la.lstsq(a, a, { rcond: Number.NaN })).rejects.toMatchObject({ code: 'InvalidArgument' });
    await expect(la.lstsq(a, Tensor.fromArray('f64', [3, 1], [1, 2, 3]))).rejects.toMatchObject({ code: 'ShapeMismatch' });
    await expect(la.lstsq(a, Tensor.fromArray('f32', [2, 1], [1, 2]) as never)).rejects.toMatchObject({ code: 'DTypeMismatch' });
    await expect(la.pinv(Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]), { hermitian: true })).rejects.toMatchObject({ code: 'ShapeMismatch' });
    expect(rec.take()).toEqual([]);
    rec.stop();
  });
});
