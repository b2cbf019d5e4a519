import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { referenceGemm, referenceMaterialize } from '../src/provider/reference/reference-kernels.js';
import { DTYPE_INFO, DTYPES, type DType } from '../src/tensor/dtype.js';
import type { CpuGemmRequest, GemmOperand, Scalar } from '../src/provider/gemm-request.js';
import type { CpuLayoutRequest } from '../src/provider/layout-request.js';

// ---------------------------------------------------------------------------------------------
// Shared helpers: PRNG, layouts, storage, guard bands. Deliberately independent of the kernels.

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const randInt = (rnd: () => number, lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));

interface Layout {
  strides: number[];
  offset: number;
}

/** A non-overlapping layout: axes nested in a random order, each with optional padding. */
function denseLayout(rnd: () => number, extents: readonly number[]): Layout {
  const order = extents.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = randInt(rnd, 0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const strides = new Array<number>(extents.length).fill(0);
  let step = randInt(rnd, 1, 2); // innermost step 1 or 2 (gaps)
  for (const axis of order) {
    strides[axis] = step;
    step = step * Math.max(extents[axis]!, 1) + randInt(rnd, 0, 2); // padded leading dimension
  }
  return { strides, offset: randInt(rnd, 0, 4) };
}

/** An input layout: dense (maybe with broadcast zero strides) or arbitrary, possibly overlapping. */
function inputLayout(rnd: () => number, extents: readonly number[]): Layout {
  if (rnd() < 0.3) return { strides: extents.map(() => randInt(rnd, 0, 5)), offset: randInt(rnd, 0, 4) };
  const l = denseLayout(rnd, extents);
  l.strides = l.strides.map((s) => (rnd() < 0.2 ? 0 : s));
  return l;
}

/** Element indices reachable by a view (empty when any extent is 0). */
function viewElements(extents: readonly number[], layout: Layout): number[] {
  const out: number[] = [];
  for (const idx of multiIndices(extents)) {
    let e = layout.offset;
    idx.forEach((v, t) => (e += v * layout.strides[t]!));
    out.push(e);
  }
  return out;
}

function* multiIndices(extents: readonly number[]): Generator<number[]> {
  if (extents.length === 0) {
    yield [];
    return;
  }
  const [first, ...rest] = extents;
  for (let i = 0; i < first!; i++) for (const tail of multiIndices(rest)) yield [i, ...tail];
}

/** Elements the storage must hold for the view, plus a random tail guard band. */
function storageElements(rnd: () => number, extents: readonly number[], layout: Layout): number {
  let max = layout.offset;
  if (extents.every((e) => e > 0)) extents.forEach((e, t) => (max += (e - 1) * layout.strides[t]!));
  return max + 1 + randInt(rnd, 0, 3);
}

type ComponentArray = Float32Array | Float64Array | Int32Array | BigInt64Array | Uint8Array;

function lanesView(dtype: DType, buffer: SharedArrayBuffer | ArrayBuffer): ComponentArray {
  return new (DTYPE_INFO[dtype].array as new (b: SharedArrayBuffer | ArrayBuffer) => ComponentArray)(buffer);
}

/** Every byte of `buffer` outside the elements `inside` equals `before`. */
function expectGuardsUntouched(buffer: SharedArrayBuffer, before: Uint8Array, inside: Iterable<number>, elemBytes: number) {
  const owned = new Set(inside);
  const now = new Uint8Array(buffer);
  const bad: number[] = [];
  for (let b = 0; b < now.length; b++) if (!owned.has(Math.floor(b / elemBytes)) && now[b] !== before[b]) bad.push(b);
  expect(bad, 'bytes outside the view were modified').toEqual([]);
}

const snapshot = (buffer: SharedArrayBuffer) => new Uint8Array(buffer).slice();

// ---------------------------------------------------------------------------------------------
// GEMM

interface C {
  re: number;
  im: number;
}

const cmul = (a: C, b: C): C => ({ re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re });
const cadd = (a: C, b: C): C => ({ re: a.re + b.re, im: a.im + b.im });
const cabs = (a: C) => Math.hypot(a.re, a.im);
const toC = (s: Scalar): C => (typeof s === 'number' ? { re: s, im: 0 } : { re: s[0], im: s[1] });

/** Read element (i, j, b…) of an operand as a complex number from a lane snapshot. */
function readC(components: ArrayLike<number>, complex: boolean, op: GemmOperand, i: number, j: number, b: readonly number[]): C {
  let e = op.offset + i * op.rowStride + j * op.colStride;
  b.forEach((v, t) => (e += v * op.batchStrides[t]!));
  return complex ? { re: components[2 * e]!, im: components[2 * e + 1]! } : { re: components[e]!, im: 0 };
}

/** Naive model: dense matrices of {re, im}, triple loop, every batch. Returns expected + bound. */
function naiveGemm(req: CpuGemmRequest, lhsLanes: ArrayLike<number>, rhsLanes: ArrayLike<number>, outLanes: ArrayLike<number>) {
  const complex = DTYPE_INFO[req.dtype].complex;
  const alpha = toC(req.alpha);
  const beta = toC(req.beta);
  const betaZero = beta.re === 0 && beta.im === 0;
  const results: { elem: number; want: C; scale: number }[] = [];
  for (const b of multiIndices(req.batch)) {
    const A: C[][] = [];
    for (let i = 0; i < req.m; i++) {
      A.push([]);
      for (let p = 0; p < req.k; p++) {
        const v = readC(lhsLanes, complex, req.lhs, i, p, b);
        A[i]!.push(complex && req.conjLhs ? { re: v.re, im: -v.im } : v);
      }
    }
    const B: C[][] = [];
    for (let p = 0; p < req.k; p++) {
      B.push([]);
      for (let j = 0; j < req.n; j++) {
        const v = readC(rhsLanes, complex, req.rhs, p, j, b);
        B[p]!.push(complex && req.conjRhs ? { re: v.re, im: -v.im } : v);
      }
    }
    for (let i = 0; i < req.m; i++) {
      for (let j = 0; j < req.n; j++) {
        let sum: C = { re: 0, im: 0 };
        let mag = 0;
        for (let p = 0; p < req.k; p++) {
          sum = cadd(sum, cmul(A[i]![p]!, B[p]![j]!));
          mag += cabs(A[i]![p]!) * cabs(B[p]![j]!);
        }
        let e = req.out.offset + i * req.out.rowStride + j * req.out.colStride;
        b.forEach((v, t) => (e += v * req.out.batchStrides[t]!));
        let want = req.k === 0 ? { re: 0, im: 0 } : cmul(alpha, sum);
        let scale = cabs(alpha) * mag;
        if (!betaZero) {
          const o = complex ? { re: outLanes[2 * e]!, im: outLanes[2 * e + 1]! } : { re: outLanes[e]!, im: 0 };
          want = cadd(want, cmul(beta, o));
          scale += cabs(beta) * cabs(o);
        }
        results.push({ elem: e, want, scale });
      }
    }
  }
  return results;
}

const FLOAT_DTYPES = ['f32', 'f64', 'c64', 'c128'] as const;

const scalarArb = fc.oneof(
  fc.constantFrom(0, 1, -1, 0.5),
  fc.double({ min: -2, max: 2, noNaN: true, noDefaultInfinity: true }),
);

const gemmCaseArb = fc.record({
  dtype: fc.constantFrom(...FLOAT_DTYPES),
  m: fc.integer({ min: 0, max: 7 }),
  n: fc.integer({ min: 0, max: 7 }),
  k: fc.integer({ min: 0, max: 7 }),
  batch: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 0, maxLength: 2 }),
  alpha: fc.tuple(scalarArb, scalarArb),
  beta: fc.oneof(fc.constant<[number, number]>([0, 0]), fc.tuple(scalarArb, scalarArb)),
  conjLhs: fc.boolean(),
  conjRhs: fc.boolean(),
  sharedInputs: fc.boolean(),
  nanOut: fc.boolean(),
  seed: fc.integer(),
});

type GemmCase = typeof gemmCaseArb extends fc.Arbitrary<infer T> ? T : never;

function buildGemm(c: GemmCase) {
  const rnd = prng(c.seed);
  const info = DTYPE_INFO[c.dtype];
  const components = info.components;
  const lhsExt = [c.m, c.k, ...c.batch];
  const rhsExt = [c.k, c.n, ...c.batch];
  const outExt = [c.m, c.n, ...c.batch];
  const lhsL = inputLayout(rnd, lhsExt);
  const rhsL = inputLayout(rnd, rhsExt);
  const outL = denseLayout(rnd, outExt);
  const lhsN = storageElements(rnd, lhsExt, lhsL);
  const rhsN = storageElements(rnd, rhsExt, rhsL);
  const outN = storageElements(rnd, outExt, outL);
  const lhsBuf = new SharedArrayBuffer((c.sharedInputs ? Math.max(lhsN, rhsN) : lhsN) * info.bytes);
  const rhsBuf = c.sharedInputs ? lhsBuf : new SharedArrayBuffer(rhsN * info.bytes);
  const outBuf = new SharedArrayBuffer(outN * info.bytes);
  for (const buf of new Set([lhsBuf, rhsBuf])) {
    const v = lanesView(c.dtype, buf) as Float32Array | Float64Array;
    for (let i = 0; i < v.length; i++) v[i] = rnd() * 4 - 2;
  }
  const outElems = viewElements(outExt, outL);
  const ov = lanesView(c.dtype, outBuf) as Float32Array | Float64Array;
  ov.fill(-7777.25); // sentinel in guard bands and gaps
  const betaZero = c.beta[0] === 0 && c.beta[1] === 0;
  for (const e of outElems) for (let l = 0; l < components; l++) ov[e * components + l] = betaZero && c.nanOut ? NaN : rnd() * 4 - 2;
  const op = (buffer: SharedArrayBuffer, l: Layout): GemmOperand => ({
    buffer,
    offset: l.offset,
    rowStride: l.strides[0]!,
    colStride: l.strides[1]!,
    batchStrides: l.strides.slice(2),
  });
  const req: CpuGemmRequest = {
    dtype: c.dtype,
    m: c.m,
    n: c.n,
    k: c.k,
    batch: c.batch,
    lhs: op(lhsBuf, lhsL),
    rhs: op(rhsBuf, rhsL),
    out: op(outBuf, outL),
    alpha: info.complex ? c.alpha : c.alpha[0],
    beta: info.complex ? c.beta : c.beta[0],
    conjLhs: c.conjLhs,
    conjRhs: c.conjRhs,
  };
  return { req, outElems };
}

function checkGemm(req: CpuGemmRequest, outElems: number[]) {
  const info = DTYPE_INFO[req.dtype];
  const lhsBefore = snapshot(req.lhs.buffer);
  const rhsBefore = snapshot(req.rhs.buffer);
  const outBefore = snapshot(req.out.buffer);
  const copy = (bytes: Uint8Array) => lanesView(req.dtype, bytes.slice().buffer) as ArrayLike<number>;
  const expected = naiveGemm(req, copy(lhsBefore), copy(rhsBefore), copy(outBefore));

  referenceGemm(req);

  const single = req.dtype === 'f32' || req.dtype === 'c64';
  // Relative tolerance against Σ|terms|, plus an absolute floor at the dtype's smallest normal
  // (tiny alpha/beta underflow into subnormals, where only absolute error is meaningful).
  const tol = single ? 1e-5 : 1e-12;
  const floor = single ? 2 ** -126 : 2 ** -1022;
  const got = lanesView(req.dtype, req.out.buffer) as Float32Array | Float64Array;
  for (const { elem, want, scale } of expected) {
    const g = info.complex ? { re: got[2 * elem]!, im: got[2 * elem + 1]! } : { re: got[elem]!, im: 0 };
    const bound = tol * Math.max(scale, Math.abs(want.re), Math.abs(want.im)) + floor;
    const ok = Number.isFinite(g.re) && Number.isFinite(g.im) && Math.abs(g.re - want.re) <= bound && Math.abs(g.im - want.im) <= bound;
    if (!ok) expect({ elem, got: g }).toEqual({ elem, got: want });
  }
  expect(expected.length).toBe(outElems.length);
  expectGuardsUntouched(req.out.buffer, outBefore, outElems, info.bytes);
  expect(snapshot(req.lhs.buffer)).toEqual(lhsBefore);
  expect(snapshot(req.rhs.buffer)).toEqual(rhsBefore);
}

describe('referenceGemm', () => {
  it('matches the naive model on random shapes, strides, batches, dtypes and scalars', () => {
    fc.assert(
      fc.property(gemmCaseArb, (c) => {
        const { req, outElems } = buildGemm(c);
        checkGemm(req, outElems);
      }),
      { numRuns: 1500 },
    );
  });

  it('computes a known f64 product (row-major lhs, column-major rhs, padded out)', () => {
    const lhs = new SharedArrayBuffer(6 * 8);
    new Float64Array(lhs).set([1, 2, 3, 4, 5, 6]); // 2×3 row-major
    const rhs = new SharedArrayBuffer(6 * 8);
    new Float64Array(rhs).set([1, 0, -1, 2, 1, 0]); // 3×2 column-major: cols [1,0,-1], [2,1,0]
    const out = new SharedArrayBuffer(8 * 8);
    new Float64Array(out).fill(10);
    referenceGemm({
      dtype: 'f64', m: 2, n: 2, k: 3, batch: [],
      lhs: { buffer: lhs, offset: 0, rowStride: 3, colStride: 1, batchStrides: [] },
      rhs: { buffer: rhs, offset: 0, rowStride: 1, colStride: 3, batchStrides: [] },
      out: { buffer: out, offset: 1, rowStride: 4, colStride: 1, batchStrides: [] },
      alpha: 2, beta: 0.5, conjLhs: true, conjRhs: true, // conj ignored for real dtypes
    });
    // lhs·rhs = [[-2, 4], [-2, 13]]
    expect(Array.from(new Float64Array(out))).toEqual([10, 1, 13, 10, 10, 1, 31, 10]);
  });

  it('applies conjugation flags to complex operands', () => {
    const mk = (vals: number[]) => {
      const b = new SharedArrayBuffer(vals.length * 8);
      new Float64Array(b).set(vals);
      return b;
    };
    for (const [conjLhs, conjRhs, want] of [
      [false, false, [-5, 10]], // (1+2i)(3+4i)
      [true, false, [11, -2]], // (1-2i)(3+4i)
      [false, true, [11, 2]], // (1+2i)(3-4i)
      [true, true, [-5, -10]],
    ] as const) {
      const out = mk([NaN, NaN]);
      referenceGemm({
        dtype: 'c128', m: 1, n: 1, k: 1, batch: [],
        lhs: { buffer: mk([1, 2]), offset: 0, rowStride: 1, colStride: 1, batchStrides: [] },
        rhs: { buffer: mk([3, 4]), offset: 0, rowStride: 1, colStride: 1, batchStrides: [] },
        out: { buffer: out, offset: 0, rowStride: 1, colStride: 1, batchStrides: [] },
        alpha: [1, 0], beta: [0, 0], conjLhs, conjRhs,
      });
      expect(Array.from(new Float64Array(out))).toEqual(want);
    }
  });

  it('handles k = 0: zeros with beta = 0 (even over NaN), beta·out otherwise', () => {
    for (const dtype of FLOAT_DTYPES) {
      const info = DTYPE_INFO[dtype];
      const empty = new SharedArrayBuffer(0);
      const emptyOp = { buffer: empty, offset: 0, rowStride: 0, colStride: 0, batchStrides: [] };
      const out = new SharedArrayBuffer(4 * info.bytes);
      const v = lanesView(dtype, out) as Float32Array | Float64Array;
      v.fill(NaN);
      const outOp = { buffer: out, offset: 0, rowStride: 2, colStride: 1, batchStrides: [] };
      const scalar = (x: number): Scalar => (info.complex ? [x, 0] : x);
      referenceGemm({ dtype, m: 2, n: 2, k: 0, batch: [], lhs: emptyOp, rhs: emptyOp, out: outOp, alpha: scalar(Infinity), beta: scalar(0), conjLhs: false, conjRhs: false });
      expect(Array.from(v)).toEqual(new Array(v.length).fill(0));
      v.set(v.map((_, i) => i + 1));
      referenceGemm({ dtype, m: 2, n: 2, k: 0, batch: [], lhs: emptyOp, rhs: emptyOp, out: outOp, alpha: scalar(3), beta: scalar(-2), conjLhs: false, conjRhs: false });
      expect(Array.from(v)).toEqual(Array.from(v, (_, i) => -2 * (i + 1)));
    }
  });

  it('accumulates f32 in a JS number and rounds once per output element', () => {
    const lhs = new SharedArrayBuffer(3 * 4);
    new Float32Array(lhs).set([1, 2 ** -24, 2 ** -24]);
    const rhs = new SharedArrayBuffer(3 * 4);
    new Float32Array(rhs).set([1, 1, 1]);
    const out = new SharedArrayBuffer(4);
    referenceGemm({
      dtype: 'f32', m: 1, n: 1, k: 3, batch: [],
      lhs: { buffer: lhs, offset: 0, rowStride: 3, colStride: 1, batchStrides: [] },
      rhs: { buffer: rhs, offset: 0, rowStride: 1, colStride: 1, batchStrides: [] },
      out: { buffer: out, offset: 0, rowStride: 1, colStride: 1, batchStrides: [] },
      alpha: 1, beta: 0, conjLhs: false, conjRhs: false,
    });
    // Stepwise f32 accumulation would give exactly 1 (two ties to even); one rounding gives 1 + 2^-23.
    expect(new Float32Array(out)[0]).toBe(1 + 2 ** -23);
  });

  it('writes nothing when m, n or a batch extent is 0', () => {
    for (const [m, n, batch] of [[0, 3, []], [3, 0, []], [2, 2, [2, 0]]] as const) {
      const out = new SharedArrayBuffer(64 * 8);
      new Float64Array(out).fill(NaN);
      const before = snapshot(out);
      const src = new SharedArrayBuffer(64 * 8);
      const op = (buffer: SharedArrayBuffer) => ({ buffer, offset: 0, rowStride: 8, colStride: 1, batchStrides: batch.map(() => 16) });
      referenceGemm({ dtype: 'f64', m, n, k: 2, batch, lhs: op(src), rhs: op(src), out: op(out), alpha: 1, beta: 0, conjLhs: false, conjRhs: false });
      expect(snapshot(out)).toEqual(before);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Materialize

const matCaseArb = fc.record({
  dtype: fc.constantFrom(...DTYPES),
  shape: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 0, maxLength: 4 }),
  conjugate: fc.boolean(),
  sameBuffer: fc.boolean(),
  seed: fc.integer(),
});

type MatCase = typeof matCaseArb extends fc.Arbitrary<infer T> ? T : never;

const SPECIAL = [0, -0, 1.5, -2.25, Infinity, -Infinity, NaN, 1e-30, 3.4e38];

function fillRandom(dtype: DType, buffer: SharedArrayBuffer, from: number, to: number, rnd: () => number) {
  const components = DTYPE_INFO[dtype].components;
  const v = lanesView(dtype, buffer);
  for (let i = from * components; i < to * components; i++) {
    if (v instanceof BigInt64Array) v[i] = BigInt.asIntN(64, (BigInt(randInt(rnd, 0, 2 ** 32 - 1)) << 32n) | BigInt(randInt(rnd, 0, 2 ** 32 - 1)));
    else if (dtype === 'bool') v[i] = rnd() < 0.5 ? 1 : 0;
    else if (dtype === 'i32') v[i] = randInt(rnd, -(2 ** 31), 2 ** 31 - 1);
    else v[i] = rnd() < 0.1 ? SPECIAL[randInt(rnd, 0, SPECIAL.length - 1)]! : rnd() * 200 - 100;
  }
}

function buildMaterialize(c: MatCase): { req: CpuLayoutRequest; dstElems: number[] } {
  const rnd = prng(c.seed);
  const info = DTYPE_INFO[c.dtype];
  const srcL = inputLayout(rnd, c.shape);
  const dstL = denseLayout(rnd, c.shape);
  const srcN = storageElements(rnd, c.shape, srcL);
  const dstN = storageElements(rnd, c.shape, dstL);
  let srcBuf: SharedArrayBuffer;
  let dstBuf: SharedArrayBuffer;
  if (c.sameBuffer) {
    // One storage: src region first, dst region after it (disjoint).
    srcBuf = dstBuf = new SharedArrayBuffer((srcN + dstN) * info.bytes);
    dstL.offset += srcN;
  } else {
    srcBuf = new SharedArrayBuffer(srcN * info.bytes);
    dstBuf = new SharedArrayBuffer(dstN * info.bytes);
  }
  fillRandom(c.dtype, srcBuf, 0, srcN, rnd);
  new Uint8Array(dstBuf, c.sameBuffer ? srcN * info.bytes : 0).fill(0xa5); // sentinel
  const desc = (buffer: SharedArrayBuffer, l: Layout) => ({ dtype: c.dtype, shape: c.shape, strides: l.strides, offset: l.offset, buffer });
  return {
    req: { src: desc(srcBuf, srcL), dst: desc(dstBuf, dstL), conjugate: c.conjugate },
    dstElems: viewElements(c.shape, dstL),
  };
}

function checkMaterialize(req: CpuLayoutRequest, dstElems: number[]) {
  const { dtype, shape } = req.src;
  const info = DTYPE_INFO[dtype];
  const components = info.components;
  const srcBefore = snapshot(req.src.buffer);
  const dstBefore = snapshot(req.dst.buffer);
  const srcCopy = lanesView(dtype, srcBefore.slice().buffer);
  const srcElems = viewElements(shape, { strides: [...req.src.strides], offset: req.src.offset });

  referenceMaterialize(req);

  const got = lanesView(dtype, req.dst.buffer);
  expect(srcElems.length).toBe(dstElems.length);
  srcElems.forEach((se, n) => {
    const de = dstElems[n]!;
    for (let l = 0; l < components; l++) {
      let want: number | bigint = srcCopy[se * components + l]!;
      if (info.complex && req.conjugate && l === 1) want = -(want as number);
      const g = got[de * components + l]!;
      if (!Object.is(g, want)) expect({ index: n, lane: l, got: g }).toEqual({ index: n, lane: l, got: want });
    }
  });
  if (req.src.buffer !== req.dst.buffer) expect(snapshot(req.src.buffer)).toEqual(srcBefore);
  // In the shared case this also checks the src region was left alone.
  expectGuardsUntouched(req.dst.buffer, dstBefore, dstElems, info.bytes);
}

describe('referenceMaterialize', () => {
  it('copies (and conjugates) any layout of every dtype, leaving everything else untouched', () => {
    fc.assert(
      fc.property(matCaseArb, (c) => {
        const { req, dstElems } = buildMaterialize(c);
        checkMaterialize(req, dstElems);
      }),
      { numRuns: 1500 },
    );
  });

  it.each(DTYPES)('copies a rank-0 %s tensor', (dtype) => {
    const info = DTYPE_INFO[dtype];
    const src = new SharedArrayBuffer(3 * info.bytes);
    fillRandom(dtype, src, 0, 3, prng(7));
    const dst = new SharedArrayBuffer(3 * info.bytes);
    new Uint8Array(dst).fill(0x5a);
    const before = snapshot(dst);
    const desc = (buffer: SharedArrayBuffer, offset: number) => ({ dtype, shape: [], strides: [], offset, buffer });
    referenceMaterialize({ src: desc(src, 2), dst: desc(dst, 1), conjugate: true });
    const s = lanesView(dtype, src);
    const d = lanesView(dtype, dst);
    const l = info.components;
    expect(d[l]).toBe(s[2 * l]);
    if (info.complex) expect(Object.is(d[l + 1], -(s[2 * l + 1] as number))).toBe(true);
    expectGuardsUntouched(dst, before, [1], info.bytes);
  });

  it('does nothing for zero-size shapes', () => {
    for (const dtype of DTYPES) {
      const dst = new SharedArrayBuffer(16 * DTYPE_INFO[dtype].bytes);
      new Uint8Array(dst).fill(0x33);
      const before = snapshot(dst);
      const src = new SharedArrayBuffer(16 * DTYPE_INFO[dtype].bytes);
      const desc = (buffer: SharedArrayBuffer) => ({ dtype, shape: [3, 0, 2], strides: [4, 1, 2], offset: 1, buffer });
      referenceMaterialize({ src: desc(src), dst: desc(dst), conjugate: true });
      expect(snapshot(dst)).toEqual(before);
    }
  });

  it('transposes a c64 matrix with conjugation', () => {
    const src = new SharedArrayBuffer(6 * 8);
    new Float32Array(src).set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]); // 2×3 row-major complex
    const dst = new SharedArrayBuffer(6 * 8);
    referenceMaterialize({
      src: { dtype: 'c64', shape: [3, 2], strides: [1, 3], offset: 0, buffer: src }, // transposed view
      dst: { dtype: 'c64', shape: [3, 2], strides: [2, 1], offset: 0, buffer: dst },
      conjugate: true,
    });
    expect(Array.from(new Float32Array(dst))).toEqual([1, -2, 7, -8, 3, -4, 9, -10, 5, -6, 11, -12]);
  });
});
