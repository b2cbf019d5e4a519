// The output convention in one place (#35): applyOutputConvention on raw kernel outputs given as
// descriptors at non-zero offsets (the neighbouring storage untouched, failed batches left alone),
// linalgOutputSpecs against the shapes the public API returns, and an extension returning raw
// results (unordered, unnormalised) whose caller still gets the convention.
import { describe, expect, it } from 'vitest';
import { CpuBackend, EXECUTED, Tensor } from '@tenferro/core';
import { type CpuLinalgKernels, type LinalgDType, type LinalgFlags, type LinalgOp, type LinalgOutput, type LinalgOutputDType, type LinalgRequest, applyOutputConvention, linalg, linalgKernelsKey, linalgOutputSpecs } from '../src/index.js';

const FLAGS: LinalgFlags = Object.freeze({ upper: false, left: false, unitDiagonal: false, full: false, vectors: true, rOnly: false });
const SENTINEL = 1234.5;
const PAD = 3; // elements of padding before and after each output

/** An output of `dtype` and `shape` with `values` (components) at element offset PAD of a sentinel-filled buffer. */
function output(dtype: LinalgOutputDType, shape: number[], values: number[]): LinalgOutput {
  const single = dtype === 'f32' || dtype === 'c64', per = dtype === 'c64' || dtype === 'c128' ? 2 : 1;
  const elements = shape.reduce((p, e) => p * e, 1);
  expect(values.length).toBe(per * elements);
  const bytes = (single ? 4 : 8) * per;
  const buffer = new SharedArrayBuffer((2 * PAD + elements) * bytes);
  const all = single ? new Float32Array(buffer) : new Float64Array(buffer);
  all.fill(SENTINEL);
  all.set(values, PAD * per);
  return Object.freeze({ buffer, offset: PAD, dtype, shape: Object.freeze(shape) });
}

/** The components of `o` (from its offset), and whether its padding is untouched. */
function read(o: LinalgOutput): { values: number[]; padIntact: boolean } {
  const single = o.dtype === 'f32' || o.dtype === 'c64', per = o.dtype === 'c64' || o.dtype === 'c128' ? 2 : 1;
  const all = Array.from(single ? new Float32Array(o.buffer) : new Float64Array(o.buffer));
  const n = per * o.shape.reduce((p, e) => p * e, 1);
  const pad = [...all.slice(0, PAD * per), ...all.slice(PAD * per + n)];
  return { values: all.slice(PAD * per, PAD * per + n), padIntact: pad.every((v) => v === SENTINEL) };
}

function request(op: LinalgOp, dtype: LinalgDType, m: number, n: number, batch: number[], flags: Partial<LinalgFlags>, out: (LinalgOutput | undefined)[], info?: number[]): LinalgRequest {
  const a = { buffer: new SharedArrayBuffer(8), offset: 0, rowStride: 1, colStride: 1, batchStrides: batch.map(() => 0) };
  const count = batch.reduce((p, e) => p * e, 1);
  const words = new Int32Array(new SharedArrayBuffer(4 * (count + 2)), 8, count); // info at a non-zero byte offset too
  if (info !== undefined) words.set(info);
  return { op, dtype, m, n, batch, flags: { ...FLAGS, ...flags }, a, out, info: words };
}

const close = (x: number[], y: number[], tol = 1e-12) => {
  expect(x.length).toBe(y.length);
  for (let i = 0; i < x.length; i++) expect(Math.abs(x[i]! - y[i]!), `component ${i}: ${x[i]} vs ${y[i]}`).toBeLessThanOrEqual(tol);
};

describe('applyOutputConvention (#35): after any kernel, on descriptors with offsets', () => {
  it('eig: eigenvalues ordered by real part, a conjugate pair by imaginary part, NaN last; vectors follow, unit norm, largest entry real ≥ 0', () => {
    // 3 eigenvalues in a kernel's order: 2, NaN, 1 + i·-0 … and a pair 1 ± 1i → order: 1−i, 1+i, 2, NaN.
    const w = output('c128', [4], [2, 0, NaN, 0, 1, 1, 1, -1]);
    // Column j = some scaled vector for eigenvalue j (4×4, complex): column 0 = (0, 0, −2, 0) …
    const v = output('c128', [4, 4], [
      0, 0, 0, 0, -2, 0, 0, 0, // col 0 (λ = 2): → (0, 0, 1, 0)
      1, 0, 0, 0, 0, 0, 0, 0, // col 1 (λ = NaN): → (1, 0, 0, 0)
      0, 0, 0, 3, 0, 0, 0, 0, // col 2 (λ = 1 + i): 3i at row 1 → (0, 1, 0, 0)
      0, 0, 0, 0, 0, 0, 0, -4, // col 3 (λ = 1 − i): −4i at row 3 → (0, 0, 0, 1)
    ]);
    applyOutputConvention(request('eig', 'f64', 4, 4, [], {}, [w, v]));
    const W = read(w), V = read(v);
    expect(W.padIntact && V.padIntact).toBe(true);
    expect(W.values).toEqual([1, -1, 1, 1, 2, 0, NaN, 0]);
    close(V.values, [0, 0, 0, 0, 0, 0, 1, 0, /**/ 0, 0, 1, 0, 0, 0, 0, 0, /**/ 0, 0, 0, 0, 1, 0, 0, 0, /**/ 1, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('eig in c64: the order is decided in single precision (a run within √ε·max|λ| sorts by imaginary part)', () => {
    // Real parts 1 and 1 + 2⁻¹³ (within √ε₃₂ = 2^-11.5 of each other): one run, ordered by imaginary part.
    const w = output('c64', [2], [1 + 2 ** -13, -1, 1, 1]);
    applyOutputConvention(request('eig', 'f32', 2, 2, [], { vectors: false }, [w, undefined]));
    expect(read(w).values).toEqual([1 + 2 ** -13, -1, 1, 1]);
    const far = output('c64', [2], [1 + 2 ** -8, -1, 1, 1]); // not within: by real part
    applyOutputConvention(request('eig', 'f32', 2, 2, [], { vectors: false }, [far, undefined]));
    expect(read(far).values).toEqual([1, 1, 1 + 2 ** -8, -1]);
  });

  it('a batch whose info is non-zero is left as the kernel wrote it; the others get the convention', () => {
    const w = output('c128', [2, 2], [3, 0, 1, 0, /**/ 3, 0, 1, 0]);
    applyOutputConvention(request('eig', 'f64', 2, 2, [2], { vectors: false }, [w, undefined], [0, 1]));
    expect(read(w).values).toEqual([1, 0, 3, 0, /**/ 3, 0, 1, 0]);
  });

  it("qr: R's diagonal real ≥ 0 — R's row i times conj(p), Q's column i times p (real and complex)", () => {
    // Real 2×2: R = [[-2, 1], [0, 3]], Q = I → row 0 and column 0 flip.
    const q = output('f64', [2, 2], [1, 0, 0, 1]), r = output('f64', [2, 2], [-2, 0, 1, 3]);
    applyOutputConvention(request('qr', 'f64', 2, 2, [], {}, [q, r]));
    expect(read(q).values).toEqual([-1, -0, 0, 1]);
    expect(read(r).values).toEqual([2, 0, -1, 3]);
    expect(read(q).padIntact && read(r).padIntact).toBe(true);
    // Complex 1×1 (c128): R = 2i → |2| = 2, Q = 1 → i.
    const qc = output('c128', [1, 1], [1, 0]), rc = output('c128', [1, 1], [0, 2]);
    applyOutputConvention(request('qr', 'c128', 1, 1, [], {}, [qc, rc]));
    close(read(rc).values, [2, 0]);
    expect(read(rc).values[1]).toBe(0);
    close(read(qc).values, [0, 1]);
    // R only ('r' mode): R's diagonal alone.
    const ro = output('f32', [1, 2], [-3, 4]);
    applyOutputConvention(request('qr', 'f32', 1, 2, [], { rOnly: true }, [undefined, ro]));
    expect(read(ro).values).toEqual([3, -4]);
  });

  it("svd: each column of U with its largest entry real ≥ 0, Vᴴ's matching row taking the conjugate factor (U·S·Vᴴ unchanged)", () => {
    // U = [[0, -1], [-1, 0]] (columns (0, −1) and (−1, 0)), Vᴴ = [[1, 2], [3, 4]].
    const u = output('f64', [2, 2], [0, -1, -1, 0]), s = output('f64', [2], [2, 1]), vh = output('f64', [2, 2], [1, 3, 2, 4]);
    applyOutputConvention(request('svd', 'f64', 2, 2, [], { vectors: true }, [u, s, vh]));
    expect(read(u).values).toEqual([-0, 1, 1, -0]);
    expect(read(vh).values).toEqual([-1, -3, -2, -4]);
    expect(read(s).values).toEqual([2, 1]);
    // Complex: U's column (i) → (1), Vᴴ's row times conj(−i) = i.
    const uc = output('c64', [1, 1], [0, 1]), sc = output('f32', [1], [5]), vc = output('c64', [1, 1], [1, 0]);
    applyOutputConvention(request('svd', 'c64', 1, 1, [], { vectors: true }, [uc, sc, vc]));
    close(read(uc).values, [1, 0], 1e-7);
    close(read(vc).values, [0, 1], 1e-7);
  });

  it('eigh: each eigenvector with its largest entry (the first of equal ones) real ≥ 0; the eigenvalues unchanged', () => {
    const w = output('f64', [2], [1, 3]), v = output('f64', [2, 2], [-0.6, -0.8, 0.8, -0.6]);
    applyOutputConvention(request('eigh', 'f64', 2, 2, [], { vectors: true }, [w, v]));
    expect(read(v).values).toEqual([0.6, 0.8, 0.8, -0.6]);
    expect(read(w).values).toEqual([1, 3]);
    const tie = output('f64', [2, 2], [-1, 1, 1, 1]); // column 0: equal magnitudes, the first decides
    applyOutputConvention(request('eigh', 'f64', 2, 2, [], { vectors: true }, [output('f64', [2], [0, 0]), tie]));
    expect(read(tie).values).toEqual([1, -1, 1, 1]);
  });

  it('ops without a convention leave their outputs alone', () => {
    const l = output('f64', [2, 2], [-1, -2, -3, -4]);
    applyOutputConvention(request('cholesky', 'f64', 2, 2, [], {}, [l]));
    expect(read(l).values).toEqual([-1, -2, -3, -4]);
  });
});

describe('linalgOutputSpecs: the one table of output shapes', () => {
  it('matches the shapes and dtypes the public API returns', async () => {
    const backend = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      const la = linalg(backend);
      const a = Tensor.from(Float32Array.from({ length: 24 }, (_, i) => (i % 7) + (i % 3 === 0 ? 3 : 0)) as never, [3, 2, 2], { dtype: 'c64' } as never) as Tensor<'c64'>;
      const spec = (op: LinalgOp, flags: Partial<LinalgFlags>) => linalgOutputSpecs(op, 'c64', 3, 2, [2], { ...FLAGS, ...flags });
      const svd = await la.svd(a, { fullMatrices: false });
      expect(spec('svd', { vectors: true }).map((s) => s && [s[0], [...s[1]]])).toEqual([svd.u, svd.s, svd.vh].map((t) => [t.dtype, t.shape]));
      const qr = await la.qr(a, { mode: 'complete' });
      expect(spec('qr', { full: true }).map((s) => s && [s[0], [...s[1]]])).toEqual([qr.q!, qr.r].map((t) => [t.dtype, t.shape]));
      const lu = await la.lu(a);
      expect(spec('lu', {}).map((s) => s && [s[0], [...s[1]]])).toEqual([lu.p, lu.l, lu.u].map((t) => [t.dtype, t.shape]));
      const f = await la.luFactor(a);
      expect(spec('luFactor', {}).map((s) => s && [s[0], [...s[1]]])).toEqual([f.lu, f.pivots].map((t) => [t.dtype, t.shape]));
      expect(linalgOutputSpecs('svd', 'f64', 3, 2, [], { ...FLAGS, vectors: false })).toEqual([undefined, ['f64', [2]], undefined]);
      expect(linalgOutputSpecs('eig', 'f32', 2, 2, [5], FLAGS)).toEqual([['c64', [2, 5]], ['c64', [2, 2, 5]]]);
    } finally {
      await backend.close();
    }
  });
});

describe('the convention is applied after an extension too (#35)', () => {
  it("an eig extension returning geev's raw order and unnormalised vectors: the caller gets them ordered, unit-norm, phase-fixed", async () => {
    const kernels: CpuLinalgKernels = {
      name: 'raw eig',
      // Declared (#35: an extension that declares nothing is refused on a faer backend).
      executionCapabilities: () => ({ threadCount: 'perCallUpperBound', placement: 'engineWorkers', workerLocalSequential: true, acceptsSequential: true, acceptsOuter: false, acceptsInner: true }),
      overwritesOutputs: true,
      declinesBeforeWriting: true,
      eig: (_ctx, r) => {
        // diag(3, 1) with vectors scaled by −2 and 5, in the solver's order (3 first).
        const w = r.out[0]!, v = r.out[1]!;
        new Float64Array(w.buffer, w.offset * 16, 4).set([3, 0, 1, 0]);
        new Float64Array(v.buffer, v.offset * 16, 8).set([-2, 0, 0, 0, 0, 0, 5, 0]);
        return EXECUTED;
      },
    };
    const backend = await CpuBackend.create({ threads: 1, providers: [{ kind: 'faer', name: 'raw', extensions: [[linalgKernelsKey(), kernels]] }] });
    try {
      const { eigenvalues, eigenvectors } = await linalg(backend).eig(Tensor.fromArray('f64', [2, 2], [3, 0, 0, 1]));
      expect(Array.from(eigenvalues.toTypedArray() as Float64Array)).toEqual([1, 0, 3, 0]);
      close(Array.from(eigenvectors.toTypedArray() as Float64Array), [0, 0, 1, 0, 1, 0, 0, 0]);
    } finally {
      await backend.close();
    }
  });
});
