// Complex dtypes and structured inputs on the built-in kernels: residuals with complex
// arithmetic (c64, c128), ill-conditioned (condition 10^12), diagonal, rank-deficient and
// batched inputs with three trailing batch axes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CpuBackend, Tensor } from '@tenferro/core';
import { linalg } from '../src/index.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2, providers: [] });
});
afterAll(async () => {
  await backend.close();
});

type C = [number, number];
type CM = C[][];
const cmul = (a: C, b: C): C => [a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]];
const mm = (a: CM, b: CM): CM => a.map((r) => b[0]!.map((_, j) => r.reduce<C>((s, x, k) => { const p = cmul(x, b[k]![j]!); return [s[0] + p[0], s[1] + p[1]]; }, [0, 0])));
const adj = (a: CM): CM => (a.length === 0 ? [] : a[0]!.map((_, j) => a.map((r) => [r[j]![0], -r[j]![1]] as C)));
const diff = (a: CM, b: CM): number => Math.sqrt(a.reduce((s, r, i) => s + r.reduce((t, x, j) => t + (x[0] - b[i]![j]![0]) ** 2 + (x[1] - b[i]![j]![1]) ** 2, 0), 0));
const norm = (a: CM): number => Math.sqrt(a.reduce((s, r) => s + r.reduce((t, x) => t + x[0] ** 2 + x[1] ** 2, 0), 0));
const eyeC = (n: number): CM => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => [i === j ? 1 : 0, 0] as C));

/** Column-major interleaved complex tensor → matrix of batch `b`. */
function cmat(t: Tensor, b = 0): CM {
  const [m, n] = [t.shape[0]!, t.shape[1]!];
  const d = t.toTypedArray() as Float32Array | Float64Array;
  return Array.from({ length: m }, (_, i) => Array.from({ length: n }, (_, j) => [d[2 * (b * m * n + i + j * m)]!, d[2 * (b * m * n + i + j * m) + 1]!] as C));
}
function ctensor(dtype: 'c64' | 'c128', a: CM): Tensor<'c64' | 'c128'> {
  const [m, n] = [a.length, a[0]!.length];
  const d = new (dtype === 'c64' ? Float32Array : Float64Array)(2 * m * n);
  for (let j = 0; j < n; j++) for (let i = 0; i < m; i++) { d[2 * (i + j * m)] = a[i]![j]![0]; d[2 * (i + j * m) + 1] = a[i]![j]![1]; }
  return Tensor.from(d, [m, n], { dtype });
}
const EPS = { c64: 2 ** -23, c128: 2 ** -52 } as const;
// fast-check's doubles in [-1, 1] include subnormal-in-f32 magnitudes and mixes of O(1) with 1e-6
// entries — the inputs on which Eigen's complex<float> SVD used to lose accuracy (docs/linalg.md).
const part = fc.double({ min: -1, max: 1, noNaN: true });
const centries = (k: number) => fc.array(fc.tuple(part, part), { minLength: k, maxLength: k });

describe('complex dtypes (c64, c128)', () => {
  it('lu, qr, svd, cholesky, eigh and solve residuals within n·ε·c', async () => {
    const la = linalg(backend);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.constantFrom('c64' as const, 'c128' as const), centries(36), async (n, dtype, d) => {
        const a: CM = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => d[i * 6 + j]! as C));
        const A = ctensor(dtype, a);
        const tol = n * EPS[dtype] * 256 * (norm(a) + 1);
        const { p, l, u } = await la.lu(A);
        expect(diff(a, mm(mm(cmat(p), cmat(l)), cmat(u)))).toBeLessThan(tol);
        const { q, r } = await la.qr(A);
        expect(diff(mm(adj(cmat(q!)), cmat(q!)), eyeC(n))).toBeLessThan(tol);
        expect(diff(a, mm(cmat(q!), cmat(r)))).toBeLessThan(tol);
        cmat(r).forEach((row, i) => { expect(row[i]![1]).toBe(0); expect(row[i]![0]).toBeGreaterThanOrEqual(0); });
        const { u: U, s, vh } = await la.svd(A);
        const S = Array.from(s.toTypedArray() as Float64Array);
        const US = cmat(U).map((row) => row.map((x, j) => [x[0] * (S[j] ?? 0), x[1] * (S[j] ?? 0)] as C));
        expect(diff(a, mm(US, cmat(vh)))).toBeLessThan(tol);
        // Hermitian positive definite: H = A Aᴴ + n I.
        const h = mm(a, adj(a)).map((row, i) => row.map((x, j) => [x[0] + (i === j ? n : 0), i === j ? 0 : x[1]] as C));
        const H = ctensor(dtype, h);
        const L = cmat(await la.cholesky(H));
        expect(diff(h, mm(L, adj(L)))).toBeLessThan(tol * (norm(h) + 1));
        const { eigenvalues, eigenvectors } = await la.eigh(H);
        const w = Array.from(eigenvalues.toTypedArray() as Float64Array), V = cmat(eigenvectors);
        const VL = V.map((row) => row.map((x, j) => [x[0] * w[j]!, x[1] * w[j]!] as C));
        expect(diff(mm(h, V), VL)).toBeLessThan(tol * (norm(h) + 1));
        const X = cmat(await la.solve(H, ctensor(dtype, eyeC(n))));
        expect(diff(mm(h, X), eyeC(n))).toBeLessThan(tol * (norm(h) + 1) * 10);
      }),
      { numRuns: Number(process.env.LINALG_COMPLEX_RUNS ?? 20) },
    );
  });

  it('svd of complex matrices mixing O(1) with tiny entries: U·S·Vᴴ = A and U, V unitary', async () => {
    const la = linalg(backend);
    const z: C = [0, 0];
    // Found by the property above (CI, and with 400 runs): Eigen's complex Jacobi SVD missed A by
    // 6e-3·‖A‖ (c64) and 2.3e-13·‖A‖ (c128) on these before the built-in factored them in a wider type.
    const c64: CM = [
      [[0.015716538764536384, 0], z, [0.9999845921993256, 0.9999994933605194], z, z, [0, 2.501382255104545e-6]],
      [z, [0, 0.4300007075071335], z, z, z, z],
      [z, z, z, [-2.0204364135250393e-14, 0], [0, 1.7581650695319695e-6], z],
      [[0, 5.965113984984782e-7], [0, -0.999999910593033], z, z, z, z],
      [z, [0, 0.9999980628490448], z, z, z, [0, -0.999999910593033]],
      [z, [0, 0.9999832212924958], z, z, z, z],
    ];
    const c128: CM = [
      [z, z, z, z],
      [z, z, [-1.6687861183482866e-130, 0], [0, -2.817048490449454e-93]],
      [z, [0, 1.9366843039270995e-48], [-2.6283160985539202e-67, 0], z],
      [z, [-0.9799688166633865, 0], z, z],
    ];
    for (const [dtype, a] of [['c64', c64], ['c128', c128]] as const) {
      const n = a.length;
      const { u, s, vh } = await la.svd(ctensor(dtype, a));
      const S = Array.from(s.toTypedArray() as Float64Array);
      const US = cmat(u).map((row) => row.map((x, j) => [x[0] * S[j]!, x[1] * S[j]!] as C));
      const tol = n * EPS[dtype] * 16 * norm(a);
      expect(diff(a, mm(US, cmat(vh)))).toBeLessThan(tol);
      expect(diff(mm(adj(cmat(u)), cmat(u)), eyeC(n))).toBeLessThan(n * EPS[dtype] * 16);
      expect(diff(mm(cmat(vh), adj(cmat(vh))), eyeC(n))).toBeLessThan(n * EPS[dtype] * 16);
    }
  });

  it('tiny pivots: complex LU of a matrix with a 1e-30 pivot has no NaN (LAPACK-style division)', async () => {
    const la = linalg(backend);
    for (const dtype of ['c64', 'c128'] as const) {
      const a: CM = [[[0, -1e-30], [0, 0]], [[0, 0], [1, 0]]];
      const { p, l, u } = await la.lu(ctensor(dtype, a));
      const r = mm(mm(cmat(p), cmat(l)), cmat(u));
      expect(Number.isNaN(diff(a, r))).toBe(false);
      expect(diff(a, r)).toBeLessThan(1e-6);
    }
  });

  it('eig of a real matrix: A V = V Λ in complex arithmetic', async () => {
    const la = linalg(backend);
    const a = [[1, 2, 0], [-2, 1, 0], [0, 0, 3]];
    const { eigenvalues, eigenvectors } = await la.eig(Tensor.fromArray('f64', [3, 3], a.flat(), { order: 'row' }));
    expect(eigenvalues.dtype).toBe('c128');
    const A: CM = a.map((r) => r.map((x) => [x, 0] as C));
    const V = cmat(eigenvectors), w = cmat(eigenvalues.reshape([3, 1])).map((r) => r[0]!);
    const VL = V.map((row) => row.map((x, j) => cmul(x, w[j]!)));
    expect(diff(mm(A, V), VL)).toBeLessThan(1e-12);
  });
});

describe('structured inputs', () => {
  it('ill-conditioned (condition 1e12): backward error of solve stays at n·ε', async () => {
    const la = linalg(backend);
    const n = 8;
    // A = Q diag(1, …, 1e-12) Qᵀ with Q a Householder reflector: condition exactly 1e12.
    const v = Array.from({ length: n }, (_, i) => Math.sin(i + 1));
    const vv = v.reduce((s, x) => s + x * x, 0);
    const Q = v.map((vi, i) => v.map((vj, j) => (i === j ? 1 : 0) - (2 * vi * vj) / vv));
    const sig = Array.from({ length: n }, (_, i) => 10 ** (-12 * (i / (n - 1))));
    const a = Q.map((r, i) => Q.map((c, j) => r.reduce((s, x, k) => s + x * sig[k]! * Q[j]![k]!, 0)));
    const A = Tensor.fromArray('f64', [n, n], a.flat(), { order: 'row' });
    const b = Array.from({ length: n }, (_, i) => Math.cos(i));
    const x = (await la.solve(A, Tensor.fromArray('f64', [n, 1], b))).toArray() as number[];
    const r = a.map((row, i) => row.reduce((s, aij, j) => s + aij * x[j]!, 0) - b[i]!);
    const normA = Math.sqrt(a.flat().reduce((s, t) => s + t * t, 0)), normX = Math.sqrt(x.reduce((s, t) => s + t * t, 0));
    expect(Math.sqrt(r.reduce((s, t) => s + t * t, 0)) / (normA * normX)).toBeLessThan(n * 2 ** -52 * 64);
    const c = (await la.cond(A)).toArray()[0] as number;
    expect(Math.abs(Math.log10(c) - 12)).toBeLessThan(0.01);
    expect((await la.matrixRank(A)).toArray()).toEqual([8]);
  });

  it('diagonal, rank-deficient and 1×1 inputs; three trailing batch axes with eigh and svd', async () => {
    const la = linalg(backend);
    const s = (await la.svdvals(Tensor.fromArray('f64', [3, 3], [3, 0, 0, 0, -5, 0, 0, 0, 1]))).toArray();
    expect(s).toEqual([5, 3, 1]);
    expect((await la.matrixRank(Tensor.fromArray('f64', [3, 2], [1, 2, 3, 2, 4, 6]))).toArray()).toEqual([1]);
    expect((await la.det(Tensor.fromArray('f64', [1, 1], [-7]))).toArray()).toEqual([-7]);
    const { sign, logabsdet } = await la.slogdet(Tensor.fromArray('f64', [2, 2], [0, 1, 1, 0]));
    expect(sign.toArray()).toEqual([-1]);
    expect(logabsdet.toArray()).toEqual([0]);
    const batch = [2, 3, 2];
    const n = 3, count = 12;
    const data: number[] = [];
    for (let b = 0; b < count; b++) for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) data.push(i === j ? b + 1 + i : 0.5);
    const A = Tensor.fromArray('f64', [n, n, ...batch], data);
    const w = await la.eigvalsh(A);
    expect(w.shape).toEqual([n, ...batch]);
    const sv = await la.svdvals(A);
    const wa = w.toArray() as number[], sa = sv.toArray() as number[];
    for (let b = 0; b < count; b++) {
      const ws = wa.slice(b * n, (b + 1) * n).map(Math.abs).sort((x, y) => y - x);
      ws.forEach((x, i) => expect(Math.abs(x - sa[b * n + i]!)).toBeLessThan(1e-12));
    }
  });
});
