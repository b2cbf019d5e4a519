// Child of isa-dispatch.test.ts: runs with TENFERRO_LINALG_ISA set (or not) and prints one JSON
// line — the instruction set status() reports and, for f64 and c128 matrices large enough that every
// blocked path runs (n = 150: the recursive LU splits, Eigen's GEMM and blocked Cholesky/QR engage),
// the relative residuals of luFactor, solve, cholesky, qr, eigh and svd and their leading outputs.
import { CpuBackend, Tensor } from '@tenferro/core';
import { linalg, status } from '../dist/index.js';

const n = 150;
// Deterministic matrices: G (general), S = G Gᴴ / n + I (Hermitian positive definite).
function gen(cplx) {
  const re = new Float64Array(n * n), im = new Float64Array(n * n);
  for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) {
    re[i + j * n] = Math.sin(1 + i * 7.3 + j * 3.1) + (i === j ? 0.5 : 0);
    im[i + j * n] = cplx ? Math.cos(2 + i * 1.7 + j * 5.9) : 0;
  }
  return { re, im };
}
function hpd(g) {
  const re = new Float64Array(n * n), im = new Float64Array(n * n);
  for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) {
    let sr = 0, si = 0;
    for (let k = 0; k < n; k++) {
      const ar = g.re[i + k * n], ai = g.im[i + k * n], br = g.re[j + k * n], bi = -g.im[j + k * n];
      sr += ar * br - ai * bi; si += ar * bi + ai * br;
    }
    re[i + j * n] = sr / n + (i === j ? 1 : 0); im[i + j * n] = i === j ? 0 : si / n;
  }
  return { re, im };
}
const tensor = (m, cplx, rows = n, cols = n) => {
  if (!cplx) return Tensor.from(Float64Array.from(m.re.subarray(0, rows * cols)), [rows, cols]);
  const d = new Float64Array(2 * rows * cols);
  for (let x = 0; x < rows * cols; x++) { d[2 * x] = m.re[x]; d[2 * x + 1] = m.im[x]; }
  return Tensor.from(d, [rows, cols], { dtype: 'c128' });
};
const split = (t) => {
  const d = t.toArray(), cplx = t.dtype === 'c128', size = t.shape[0] * t.shape[1];
  const re = new Float64Array(size), im = new Float64Array(size);
  for (let x = 0; x < size; x++) { re[x] = cplx ? d[2 * x] : d[x]; im[x] = cplx ? d[2 * x + 1] : 0; }
  return { re, im, rows: t.shape[0], cols: t.shape[1] };
};
// ‖X Y − Z‖_F / ‖Z‖_F for column-major complex (re, im) matrices.
function relres(x, y, z) {
  let num = 0, den = 0;
  for (let j = 0; j < y.cols; j++) for (let i = 0; i < x.rows; i++) {
    let sr = 0, si = 0;
    for (let k = 0; k < x.cols; k++) {
      const ar = x.re[i + k * x.rows], ai = x.im[i + k * x.rows], br = y.re[k + j * y.rows], bi = y.im[k + j * y.rows];
      sr += ar * br - ai * bi; si += ar * bi + ai * br;
    }
    const zr = z.re[i + j * z.rows], zi = z.im[i + j * z.rows];
    num += (sr - zr) ** 2 + (si - zi) ** 2; den += zr * zr + zi * zi;
  }
  return Math.sqrt(num / den);
}
const adj = (x) => {
  const re = new Float64Array(x.re.length), im = new Float64Array(x.im.length);
  for (let j = 0; j < x.cols; j++) for (let i = 0; i < x.rows; i++) { re[j + i * x.cols] = x.re[i + j * x.rows]; im[j + i * x.cols] = -x.im[i + j * x.rows]; }
  return { re, im, rows: x.cols, cols: x.rows };
};
const diagTimes = (s, v) => { // diag(s) · v
  const re = Float64Array.from(v.re), im = Float64Array.from(v.im);
  for (let j = 0; j < v.cols; j++) for (let i = 0; i < v.rows; i++) { re[i + j * v.rows] *= s[i]; im[i + j * v.rows] *= s[i]; }
  return { re, im, rows: v.rows, cols: v.cols };
};
const head = (t, k = 6) => Array.from(t.toArray()).slice(0, k);

const backend = await CpuBackend.create({ threads: 1, providers: [] });
const out = { isa: status().details?.isa };
try {
  const la = linalg(backend);
  for (const cplx of [false, true]) {
    const key = cplx ? 'c128' : 'f64';
    const g = gen(cplx), s = hpd(g);
    const G = tensor(g, cplx), S = tensor(s, cplx), W = tensor(g, cplx, n, 40);
    const r = {};
    const { p, l, u } = await la.lu(G);
    r.lu = relres(split(p), mulc(split(l), split(u)), split(G));
    const lf = await la.luFactor(G);
    r.luFactorHead = head(lf.lu);
    r.pivots = Array.from(lf.pivots.toArray());
    const x = await la.solve(G, W);
    r.solve = relres(split(G), split(x), split(W));
    const c = await la.cholesky(S);
    r.cholesky = relres(split(c), adj(split(c)), split(S));
    const q = await la.qr(G);
    r.qr = relres(split(q.q), split(q.r), split(G));
    r.qrHead = head(q.r);
    const e = await la.eigh(S);
    const V = split(e.eigenvectors), lam = Array.from(e.eigenvalues.toArray());
    r.eigh = relres(split(S), V, mulc(V, diagTimes(lam, eyec(n))));
    r.eigenvalues = lam.slice(0, 4);
    const d = await la.svd(G);
    r.svd = relres(mulc(split(d.u), diagTimes(Array.from(d.s.toArray()), split(d.vh))), eyec(n), split(G));
    r.singularValues = Array.from(d.s.toArray()).slice(0, 4);
    out[key] = r;
  }
} finally {
  await backend.close();
}
console.log(JSON.stringify(out));

function mulc(x, y) {
  const re = new Float64Array(x.rows * y.cols), im = new Float64Array(x.rows * y.cols);
  for (let j = 0; j < y.cols; j++) for (let k = 0; k < x.cols; k++) {
    const br = y.re[k + j * y.rows], bi = y.im[k + j * y.rows];
    for (let i = 0; i < x.rows; i++) {
      const ar = x.re[i + k * x.rows], ai = x.im[i + k * x.rows];
      re[i + j * x.rows] += ar * br - ai * bi; im[i + j * x.rows] += ar * bi + ai * br;
    }
  }
  return { re, im, rows: x.rows, cols: y.cols };
}
function eyec(k) {
  const re = new Float64Array(k * k);
  for (let i = 0; i < k; i++) re[i + i * k] = 1;
  return { re, im: new Float64Array(k * k), rows: k, cols: k };
}
