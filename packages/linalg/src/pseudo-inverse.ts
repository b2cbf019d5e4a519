/**
 * The arithmetic of `lstsq` and `pinv` on the factors of an SVD (or of `eigh`): dense,
 * column-major, batch-contiguous arrays as the primitives return them (`toTypedArray()`), complex
 * interleaved. Plain loops in double precision (results rounded once to the dtype); the O(n³) work
 * is the SVD itself, done by the primitive (the bundle's LAPACK or the built-in kernel).
 */

type Arr = Float32Array | Float64Array;

/** The factors of one batch of a (thin) SVD: A = U diag(s) Vᴴ, U m×k, Vᴴ k×n (or eigh's V with Vh = Vᴴ). */
export interface SvdFactors {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly complex: boolean;
  readonly u: Arr;
  readonly s: ArrayLike<number>;
  readonly vh: Arr;
}

/** The reciprocals of the singular values above `tol`, 0 for the others; and how many were kept. */
export function invertAbove(s: ArrayLike<number>, at: number, k: number, tol: number): { inv: Float64Array; rank: number } {
  const inv = new Float64Array(k);
  let rank = 0;
  for (let l = 0; l < k; l++) {
    const v = s[at + l]!;
    if (Math.abs(v) > tol) {
      inv[l] = 1 / v;
      rank++;
    }
  }
  return { inv, rank };
}

/**
 * X = V diag(inv) Uᴴ B for batch `b` (B m×r at `bAt` in `bData`), written at `xAt` of `x` (n×r).
 * Through C = Uᴴ B (k×r) first: O((m + n)·k·r).
 */
export function applyPseudoInverse(f: SvdFactors, b: number, inv: Float64Array, bData: Arr, bAt: number, r: number, x: Arr, xAt: number): void {
  const { m, n, k, complex } = f;
  const c = complex ? 2 : 1;
  const uAt = b * m * k, vAt = b * k * n;
  const cr = new Float64Array(k * r), ci = new Float64Array(k * r);
  for (let j = 0; j < r; j++)
    for (let l = 0; l < k; l++) {
      if (inv[l] === 0) continue;
      let sr = 0, si = 0;
      for (let i = 0; i < m; i++) {
        const ui = c * (uAt + i + l * m), bi = c * (bAt + i + j * m);
        const ur = f.u[ui]!, uim = complex ? f.u[ui + 1]! : 0, br = bData[bi]!, bim = complex ? bData[bi + 1]! : 0;
        // conj(u) · b
        sr += ur * br + uim * bim;
        si += ur * bim - uim * br;
      }
      cr[l + j * k] = sr * inv[l]!;
      ci[l + j * k] = si * inv[l]!;
    }
  for (let j = 0; j < r; j++)
    for (let i = 0; i < n; i++) {
      let sr = 0, si = 0;
      for (let l = 0; l < k; l++) {
        if (inv[l] === 0) continue;
        const vi = c * (vAt + l + i * k);
        // V(i, l) = conj(Vᴴ(l, i))
        const vr = f.vh[vi]!, vim = complex ? -f.vh[vi + 1]! : 0;
        const xr = cr[l + j * k]!, xi = ci[l + j * k]!;
        sr += vr * xr - vim * xi;
        si += vr * xi + vim * xr;
      }
      const at = c * (xAt + i + j * n);
      x[at] = sr;
      if (complex) x[at + 1] = si;
    }
}

/** Σ |(A X − B)(:, j)|² per column j of batch `b` (A m×n, X n×r, B m×r, all dense), added to out[outAt + j]. */
export function squaredResiduals(m: number, n: number, r: number, complex: boolean, a: Arr, aAt: number, x: Arr, xAt: number, bData: Arr, bAt: number, out: Arr, outAt: number): void {
  const c = complex ? 2 : 1;
  for (let j = 0; j < r; j++) {
    let sum = 0;
    for (let i = 0; i < m; i++) {
      const bi = c * (bAt + i + j * m);
      let sr = -bData[bi]!, si = complex ? -bData[bi + 1]! : 0;
      for (let l = 0; l < n; l++) {
        const ai = c * (aAt + i + l * m), xi = c * (xAt + l + j * n);
        const ar = a[ai]!, aim = complex ? a[ai + 1]! : 0, xr = x[xi]!, xim = complex ? x[xi + 1]! : 0;
        sr += ar * xr - aim * xim;
        si += ar * xim + aim * xr;
      }
      sum += sr * sr + si * si;
    }
    out[outAt + j] = sum;
  }
}
