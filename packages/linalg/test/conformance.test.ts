// The conformance kit's linalg section (@tenferro/linalg/testing) run against the built-in kernels
// installed as an extension, and against provider-blas's LAPACK kernels on a blas backend.
//
// The kit compares an extension's results with a backend running the built-in kernels: for the
// built-in kernels as the extension that compares them with themselves (#39). So each of those
// cases also checks the results against an independent oracle — what the factorisation claims,
// computed here in plain float64 arithmetic: reconstruction residuals (‖A − L·Lᴴ‖, ‖P·A − L·U‖,
// ‖A − Q·R‖, ‖A − U·S·Vᴴ‖, ‖A·V − V·Λ‖, ‖A·X − B‖), orthogonality, triangularity, ordering.
import { describe, expect, it } from 'vitest';
import { CpuBackend, type CpuProviderPackage, Tensor } from '@tenferro/core';
import { createBlasProvider, status as blasStatus } from '@tenferro/provider-blas';
import { BUILTIN_KERNELS, type CpuLinalgKernels, type LinalgDType, linalg, linalgKernelsKey } from '../src/index.js';
import { linalgConformanceCases, recordLinalgKernels } from '../src/testing/index.js';

type Prim = 'cholesky' | 'solveTriangular' | 'luFactor' | 'lu' | 'luFullPivot' | 'solve' | 'qr' | 'svd' | 'eigh' | 'eig';

// --- complex matrices in float64, column-major ---------------------------------------------
interface M {
  readonly r: number;
  readonly c: number;
  readonly re: Float64Array;
  readonly im: Float64Array;
}
const zeros = (r: number, c: number): M => ({ r, c, re: new Float64Array(r * c), im: new Float64Array(r * c) });
const at = (a: M, i: number, j: number) => i + j * a.r;
function eye(n: number): M {
  const m = zeros(n, n);
  for (let i = 0; i < n; i++) m.re[at(m, i, i)] = 1;
  return m;
}
function mul(a: M, b: M): M {
  if (a.c !== b.r) throw new Error(`mul: ${a.r}×${a.c} by ${b.r}×${b.c}`);
  const o = zeros(a.r, b.c);
  for (let j = 0; j < b.c; j++)
    for (let k = 0; k < a.c; k++) {
      const br = b.re[at(b, k, j)]!, bi = b.im[at(b, k, j)]!;
      for (let i = 0; i < a.r; i++) {
        const ar = a.re[at(a, i, k)]!, ai = a.im[at(a, i, k)]!;
        o.re[at(o, i, j)] = o.re[at(o, i, j)]! + ar * br - ai * bi;
        o.im[at(o, i, j)] = o.im[at(o, i, j)]! + ar * bi + ai * br;
      }
    }
  return o;
}
function ctrans(a: M): M {
  const o = zeros(a.c, a.r);
  for (let i = 0; i < a.r; i++)
    for (let j = 0; j < a.c; j++) {
      o.re[at(o, j, i)] = a.re[at(a, i, j)]!;
      o.im[at(o, j, i)] = -a.im[at(a, i, j)]!;
    }
  return o;
}
function minus(a: M, b: M): M {
  const o = zeros(a.r, a.c);
  for (let i = 0; i < a.re.length; i++) {
    o.re[i] = a.re[i]! - b.re[i]!;
    o.im[i] = a.im[i]! - b.im[i]!;
  }
  return o;
}
const fro = (a: M) => Math.sqrt(a.re.reduce((s, x, i) => s + x * x + a.im[i]! ** 2, 0));
/** Keep the entries where `keep(i, j)`, zero the others. */
function part(a: M, keep: (i: number, j: number) => boolean, unitDiagonal = false): M {
  const o = zeros(a.r, a.c);
  for (let i = 0; i < a.r; i++)
    for (let j = 0; j < a.c; j++) {
      if (unitDiagonal && i === j) o.re[at(o, i, j)] = 1;
      else if (keep(i, j)) {
        o.re[at(o, i, j)] = a.re[at(a, i, j)]!;
        o.im[at(o, i, j)] = a.im[at(a, i, j)]!;
      }
    }
  return o;
}
const diag = (values: { re: number; im: number }[]): M => {
  const o = zeros(values.length, values.length);
  values.forEach((v, i) => {
    o.re[at(o, i, i)] = v.re;
    o.im[at(o, i, i)] = v.im;
  });
  return o;
};
function swapRows(a: M, i: number, k: number): void {
  for (let j = 0; j < a.c; j++)
    for (const x of [a.re, a.im]) [x[at(a, i, j)], x[at(a, k, j)]] = [x[at(a, k, j)]!, x[at(a, i, j)]!];
}
function swapCols(a: M, j: number, k: number): void {
  for (let i = 0; i < a.r; i++)
    for (const x of [a.re, a.im]) [x[at(a, i, j)], x[at(a, i, k)]] = [x[at(a, i, k)]!, x[at(a, i, j)]!];
}
const copy = (a: M): M => ({ r: a.r, c: a.c, re: a.re.slice(), im: a.im.slice() });

/** Batch `b` of a [r, c, batch] tensor (real or complex) as an M. */
function matrixOf(t: Tensor, b: number): M {
  const [r, c] = [t.shape[0]!, t.shape[1]!];
  const complex = t.dtype === 'c64' || t.dtype === 'c128';
  const v = (t.toArray() as unknown[]).map(Number);
  const o = zeros(r, c);
  for (let e = 0; e < r * c; e++) {
    const k = b * r * c + e;
    o.re[e] = complex ? v[2 * k]! : v[k]!;
    o.im[e] = complex ? v[2 * k + 1]! : 0;
  }
  return o;
}
/** Batch `b` of a [n, batch] tensor as complex numbers. */
function vectorOf(t: Tensor, b: number): { re: number; im: number }[] {
  const n = t.shape[0]!;
  const complex = t.dtype === 'c64' || t.dtype === 'c128';
  const v = (t.toArray() as unknown[]).map(Number);
  return Array.from({ length: n }, (_, i) => {
    const k = b * n + i;
    return complex ? { re: v[2 * k]!, im: v[2 * k + 1]! } : { re: v[k]!, im: 0 };
  });
}

// --- test matrices ---------------------------------------------------------------------------
const isComplex = (d: LinalgDType) => d === 'c64' || d === 'c128';
const eps = (d: LinalgDType) => (d === 'f32' || d === 'c64' ? 2 ** -23 : 2 ** -52);

function tensorOf(dtype: LinalgDType, n: number, cols: number, batch: number, entry: (i: number, j: number, b: number) => [number, number]): Tensor<LinalgDType> {
  const values: number[] = [];
  for (let b = 0; b < batch; b++)
    for (let j = 0; j < cols; j++)
      for (let i = 0; i < n; i++) {
        const [re, im] = entry(i, j, b);
        values.push(re);
        if (isComplex(dtype)) values.push(im);
      }
  return Tensor.fromArray(dtype, [n, cols, batch], values) as Tensor<LinalgDType>;
}
/** Hermitian positive definite (diagonally dominant). */
const hpd = (dtype: LinalgDType, n: number) =>
  tensorOf(dtype, n, n, 2, (i, j, b) => [(i === j ? n + 1 : 0) + 1 / (2 + i + j + b), isComplex(dtype) && i !== j ? ((i < j ? 1 : -1) * 0.1) / (1 + i + j) : 0]);
/** General, non-symmetric, well conditioned. */
const general = (dtype: LinalgDType, n: number, cols = n) =>
  tensorOf(dtype, n, cols, 2, (i, j, b) => [(i === j ? n + 2 : 0) + Math.sin(1 + i + 2 * j + 3 * b), isComplex(dtype) ? 0.5 * Math.cos(2 + 3 * i + j + b) : 0]);

/**
 * Check `prim`'s results on `backend` (the built-in kernels installed as an extension, which must
 * be what ran) against what the factorisation claims. Throws naming the first claim that fails.
 */
async function checkAgainstOracle(backend: CpuBackend, prim: Prim, dtype: LinalgDType, n: number): Promise<void> {
  const la = linalg(backend);
  const tol = 200 * n * eps(dtype);
  const claims: [string, number][] = [];
  const rel = (name: string, residual: M, scale: number) => claims.push([name, fro(residual) / Math.max(scale, 1e-300)]);
  const { calls } = await recordLinalgKernels(async () => {
    switch (prim) {
      case 'cholesky': {
        const a = hpd(dtype, n);
        const l = await la.cholesky(a);
        for (let b = 0; b < 2; b++) {
          const A = matrixOf(a, b), L = matrixOf(l, b);
          rel('‖A − L·Lᴴ‖/‖A‖', minus(A, mul(L, ctrans(L))), fro(A));
          rel('strict upper triangle of L', part(L, (i, j) => j > i), fro(L));
        }
        break;
      }
      case 'solveTriangular': {
        const a = general(dtype, n), rhs = general(dtype, n, 3);
        const x = await la.solveTriangular(a, rhs, { upper: true });
        for (let b = 0; b < 2; b++) {
          const U = part(matrixOf(a, b), (i, j) => j >= i), X = matrixOf(x, b), B = matrixOf(rhs, b);
          rel('‖triu(A)·X − B‖/(‖A‖‖X‖)', minus(mul(U, X), B), fro(U) * fro(X));
        }
        break;
      }
      case 'luFactor': {
        const a = general(dtype, n);
        const { lu, pivots } = await la.luFactor(a);
        for (let b = 0; b < 2; b++) {
          const PA = copy(matrixOf(a, b)), LU = matrixOf(lu, b), piv = vectorOf(pivots, b).map((p) => p.re);
          piv.forEach((p, i) => {
            if (!(p >= i + 1 && p <= n)) claims.push([`pivot ${i} = ${p} in [${i + 1}, ${n}]`, Infinity]);
            else swapRows(PA, i, p - 1);
          });
          const L = part(LU, (i, j) => i > j, true), U = part(LU, (i, j) => j >= i);
          rel('‖P·A − L·U‖/‖A‖', minus(PA, mul(L, U)), fro(PA));
        }
        break;
      }
      case 'lu': {
        const a = general(dtype, n);
        const { p, l, u } = await la.lu(a);
        for (let b = 0; b < 2; b++) {
          const A = matrixOf(a, b), P = matrixOf(p, b), L = matrixOf(l, b), U = matrixOf(u, b);
          rel('‖A − P·L·U‖/‖A‖', minus(A, mul(P, mul(L, U))), fro(A));
          rel('‖Pᴴ·P − I‖', minus(mul(ctrans(P), P), eye(n)), 1);
          rel('L unit lower', minus(L, part(L, (i, j) => i > j, true)), 1);
          rel('U upper', part(U, (i, j) => i > j), fro(U));
        }
        break;
      }
      case 'luFullPivot': {
        const a = general(dtype, n);
        const { lu, pivots, colPivots } = await la.luFullPivot(a);
        for (let b = 0; b < 2; b++) {
          const PAQ = copy(matrixOf(a, b)), LU = matrixOf(lu, b);
          const rows = vectorOf(pivots, b).map((x) => x.re), cols = vectorOf(colPivots, b).map((x) => x.re);
          for (let i = 0; i < n; i++) {
            if (!(rows[i]! >= i + 1 && rows[i]! <= n && cols[i]! >= i + 1 && cols[i]! <= n)) claims.push([`pivots ${i}: ${rows[i]}, ${cols[i]}`, Infinity]);
            else {
              swapRows(PAQ, i, rows[i]! - 1);
              swapCols(PAQ, i, cols[i]! - 1);
            }
          }
          rel('‖P·A·Q − L·U‖/‖A‖', minus(PAQ, mul(part(LU, (i, j) => i > j, true), part(LU, (i, j) => j >= i))), fro(PAQ));
        }
        break;
      }
      case 'solve': {
        const a = general(dtype, n), rhs = general(dtype, n, 3);
        const x = await la.solve(a, rhs);
        for (let b = 0; b < 2; b++) {
          const A = matrixOf(a, b), X = matrixOf(x, b), B = matrixOf(rhs, b);
          rel('‖A·X − B‖/(‖A‖‖X‖)', minus(mul(A, X), B), fro(A) * fro(X));
        }
        break;
      }
      case 'qr': {
        const a = general(dtype, n);
        const { q, r } = await la.qr(a);
        for (let b = 0; b < 2; b++) {
          const A = matrixOf(a, b), Q = matrixOf(q!, b), R = matrixOf(r, b);
          rel('‖A − Q·R‖/‖A‖', minus(A, mul(Q, R)), fro(A));
          rel('‖Qᴴ·Q − I‖', minus(mul(ctrans(Q), Q), eye(n)), 1);
          rel('R upper', part(R, (i, j) => i > j), fro(R));
          for (let i = 0; i < n; i++) if (!(R.re[at(R, i, i)]! >= 0 && R.im[at(R, i, i)] === 0)) claims.push([`R(${i}, ${i}) real ≥ 0`, Infinity]);
        }
        break;
      }
      case 'svd': {
        const a = general(dtype, n);
        const { u, s, vh } = await la.svd(a);
        for (let b = 0; b < 2; b++) {
          const A = matrixOf(a, b), U = matrixOf(u, b), V = matrixOf(vh, b), S = vectorOf(s, b);
          rel('‖A − U·S·Vᴴ‖/‖A‖', minus(A, mul(U, mul(diag(S), V))), fro(A));
          rel('‖Uᴴ·U − I‖', minus(mul(ctrans(U), U), eye(n)), 1);
          rel('‖Vᴴ·V − I‖', minus(mul(V, ctrans(V)), eye(n)), 1);
          S.forEach((x, i) => {
            if (!(x.re >= 0 && (i === 0 || x.re <= S[i - 1]!.re))) claims.push([`s[${i}] = ${x.re} ≥ 0 and descending`, Infinity]);
          });
        }
        break;
      }
      case 'eigh': {
        const a = hpd(dtype, n);
        const { eigenvalues, eigenvectors } = await la.eigh(a);
        for (let b = 0; b < 2; b++) {
          const A = matrixOf(a, b), V = matrixOf(eigenvectors, b), w = vectorOf(eigenvalues, b);
          rel('‖A·V − V·Λ‖/‖A‖', minus(mul(A, V), mul(V, diag(w))), fro(A));
          rel('‖Vᴴ·V − I‖', minus(mul(ctrans(V), V), eye(n)), 1);
          w.forEach((x, i) => {
            if (i > 0 && !(x.re >= w[i - 1]!.re)) claims.push([`eigenvalue ${i} ascending`, Infinity]);
          });
        }
        break;
      }
      case 'eig': {
        const a = general(dtype, n);
        const { eigenvalues, eigenvectors } = await la.eig(a);
        for (let b = 0; b < 2; b++) {
          const A = matrixOf(a, b), V = matrixOf(eigenvectors, b), w = vectorOf(eigenvalues, b);
          rel('‖A·V − V·Λ‖/‖A‖', minus(mul(A, V), mul(V, diag(w))), fro(A));
          for (let j = 0; j < n; j++) {
            let norm = 0;
            for (let i = 0; i < n; i++) norm += V.re[at(V, i, j)]! ** 2 + V.im[at(V, i, j)]! ** 2;
            claims.push([`‖v${j}‖ = 1`, Math.abs(Math.sqrt(norm) - 1)]);
          }
        }
        break;
      }
    }
  });
  // The built-in kernels ran as the extension (no decline to the same built-in behind it).
  expect(calls.length, `${prim} ${dtype} n=${n}: kernel calls`).toBeGreaterThan(0);
  for (const call of calls) expect(call, `${prim} ${dtype} n=${n}`).toMatchObject({ kernel: 'extension' });
  expect(claims.length).toBeGreaterThan(0);
  for (const [claim, value] of claims) expect(value, `${prim} ${dtype} n=${n}: ${claim} (tolerance ${tol})`).toBeLessThanOrEqual(tol);
}

const SIZES = [1, 6];

describe('linalg conformance: built-in kernels as an extension, against an independent oracle', () => {
  for (const c of linalgConformanceCases(() => BUILTIN_KERNELS, { sizes: SIZES })) {
    const [prim, dtype] = c.name.split(/[ :]/) as [Prim, LinalgDType];
    it(`${c.name}; residuals and structure of the factorisation within 200·n·ε`, async () => {
      await c.run();
      const pkg: CpuProviderPackage = { kind: 'faer', name: 'built-in as an extension', extensions: [[linalgKernelsKey(), BUILTIN_KERNELS]] };
      const backend = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [pkg] } as never);
      try {
        for (const n of SIZES) await checkAgainstOracle(backend, prim, dtype, n);
      } finally {
        await backend.close();
      }
    });
  }
});

describe.skipIf(!blasStatus().available)('linalg conformance: provider-blas LAPACK', () => {
  const blas = createBlasProvider();
  const kernels = blas.extensions![0]![1] as CpuLinalgKernels;
  for (const c of linalgConformanceCases(() => kernels, { kind: 'blas', providers: [blas], sizes: [1, 6], dtypes: ['f32', 'f64', 'c128'] })) {
    // A case returns quietly for a primitive the kernels do not implement: say so as a skip.
    const prim = c.name.split(' ')[0] as keyof CpuLinalgKernels;
    if (typeof kernels[prim] !== 'function') it.skip(`${c.name} (skipped: provider-blas has no ${prim} kernel)`, () => {});
    // The kit reports a mismatch by throwing: the case passes when its run resolves.
    else it(c.name, async () => expect(c.run()).resolves.toBeUndefined());
  }
});
