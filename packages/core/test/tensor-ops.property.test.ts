// Property tests of ops(backend): random shapes (rank 0–6), random strided, permuted, stepped and
// broadcast views, every dtype an operation is defined for. Results equal a naive per-element
// model (exactly, except the complex transcendental functions: within 1e-12 for c128, 1e-5 for
// c64), inputs are unchanged and nothing outside a caller-owned output view is written.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, DTYPE_INFO, type DType, type Tensor, type TensorOps, ops } from '../src/index.js';
import { randomView, seededRandom } from '../src/testing/index.js';
import { type Value, close, elements, ravel, same, store, unravel } from './support/primitive-model.js';

let backend: CpuBackend;
let o: TensorOps;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2, providers: [] });
  o = ops(backend);
});
afterAll(() => backend.close());

const ALL: DType[] = ['f32', 'f64', 'c64', 'c128', 'i32', 'i64', 'bool'];
const isComplex = (d: DType) => d === 'c64' || d === 'c128';
const tol = (d: DType) => (d === 'c64' || d === 'f32' ? 1e-5 : 1e-12);

const shapeArb = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 0, maxLength: 6 });

/** Every byte of `t`'s buffer, to compare before and after. */
const snapshot = (t: Tensor) => new Uint8Array(t.buffer).slice();

/** The byte offsets an output view covers. */
function coveredBytes(t: Tensor): Set<number> {
  const bytes = DTYPE_INFO[t.dtype].bytes;
  const covered = new Set<number>();
  const size = t.shape.reduce((a, e) => a * e, 1);
  for (let p = 0; p < size; p++) {
    const idx = unravel(p, t.shape);
    const e = t.offset + idx.reduce((a, i, k) => a + i * t.strides[k]!, 0);
    for (let b = 0; b < bytes; b++) covered.add(e * bytes + b);
  }
  return covered;
}

/** A guard-banded caller-owned output: a strided view into a larger base filled with a sentinel. */
function guardedOut(rand: () => number, dtype: DType, shape: readonly number[]): Tensor {
  const sentinel = (_r: () => number, d: DType, n: number) => Array.from({ length: n * DTYPE_INFO[d].components }, () => (d === 'i64' ? 77n : d === 'bool' ? 1 : 77));
  return randomView(rand, dtype, shape, { strided: true, values: sentinel as never });
}

function expectGuardsKept(out: Tensor, before: Uint8Array): void {
  const after = new Uint8Array(out.buffer);
  const covered = coveredBytes(out);
  for (let b = 0; b < before.length; b++) if (!covered.has(b) && after[b] !== before[b]) throw new Error(`byte ${b} outside the output view was written`);
}

// ── models ────────────────────────────────────────────────────────────────────────────────────
const C_POW = (x: number, y: number) => (x === 1 || y === 0 ? 1 : x === -1 && Math.abs(y) === Infinity ? 1 : Math.pow(x, y));

function binaryModel(op: string, dtype: DType, a: Value, b: Value): Value {
  const cmp = (x: number | bigint, y: number | bigint) => ({ eq: x === y, lt: x < y, le: x <= y, gt: x > y, ge: x >= y })[op as 'eq'];
  if (['eq', 'lt', 'le', 'gt', 'ge'].includes(op)) {
    if (Array.isArray(a)) return a[0] === (b as readonly number[])[0] && a[1] === (b as readonly number[])[1] ? 1 : 0;
    return cmp(a as number, b as number) ? 1 : 0;
  }
  if (dtype === 'i64') {
    const x = a as bigint;
    const y = b as bigint;
    return ({ add: x + y, sub: x - y, mul: x * y, div: y === 0n ? 0n : x === -(2n ** 63n) && y === -1n ? x : x / y, maximum: x > y ? x : y, minimum: x < y ? x : y })[op as 'add'];
  }
  if (isComplex(dtype)) {
    const [ar, ai] = a as [number, number];
    const [br, bi] = b as [number, number];
    if (op === 'add') return [ar + br, ai + bi];
    if (op === 'sub') return [ar - br, ai - bi];
    if (op === 'mul') return [ar * br - ai * bi, ar * bi + ai * br];
    // A zero divisor gives (re/0, im/0) (Smith's division with PyTorch's zero guard, e.g. (1+0i)/0 =
    // ∞+NaN·i), not the naive formula's NaN+NaN·i: the values here are multiples of 1/4, so a random
    // divisor is exactly 0 once in 256 elements (seed 112839068 found one).
    if (br === 0 && bi === 0) return [ar / 0, ai / 0];
    const d = br * br + bi * bi;
    return [(ar * br + ai * bi) / d, (ai * br - ar * bi) / d]; // div (checked within tolerance)
  }
  const x = a as number;
  const y = b as number;
  if (dtype === 'bool') return op === 'maximum' ? x | y : x & y;
  if (dtype === 'i32') {
    if (op === 'mul') return Math.imul(x, y);
    if (op === 'div') return y === 0 ? 0 : x === -(2 ** 31) && y === -1 ? x : Math.trunc(x / y);
  }
  return ({ add: x + y, sub: x - y, mul: x * y, div: x / y, maximum: Math.max(x, y), minimum: Math.min(x, y), pow: C_POW(x, y) })[op as 'add'];
}

const BINARY: Record<string, DType[]> = {
  add: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
  sub: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
  mul: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
  div: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
  maximum: ['f32', 'f64', 'i32', 'i64', 'bool'],
  minimum: ['f32', 'f64', 'i32', 'i64', 'bool'],
  pow: ['f32', 'f64'],
  eq: ALL,
  lt: ['f32', 'f64', 'i32', 'i64', 'bool'],
  ge: ['f32', 'f64', 'i32', 'i64', 'bool'],
};

function unaryModel(op: string, dtype: DType, v: Value, alpha: number): Value {
  if (dtype === 'i64') {
    const x = v as bigint;
    return ({ neg: -x, abs: x < 0n ? -x : x, conj: x, real: x, imag: 0n, scale: BigInt(alpha) * x })[op as 'neg'];
  }
  if (isComplex(dtype)) {
    const [a, b] = v as [number, number];
    switch (op) {
      case 'neg':
        return [-a, -b];
      case 'abs':
        return Math.hypot(a, b);
      case 'conj':
        return [a, -b];
      case 'real':
        return a;
      case 'imag':
        return b;
      case 'scale':
        return [alpha * a - 0 * b, alpha * b + 0 * a];
      case 'exp':
        return [Math.exp(a) * Math.cos(b), Math.exp(a) * Math.sin(b)];
      case 'log':
        return [Math.log(Math.hypot(a, b)), Math.atan2(b, a)];
      case 'sin':
        return [Math.sin(a) * Math.cosh(b), Math.cos(a) * Math.sinh(b)];
      default: // cos
        return [Math.cos(a) * Math.cosh(b), -Math.sin(a) * Math.sinh(b)];
    }
  }
  const x = v as number;
  if (dtype === 'i32') return ({ neg: -x | 0, abs: Math.abs(x) | 0, conj: x, real: x, imag: 0, scale: Math.imul(alpha, x) })[op as 'neg'];
  const f: Record<string, (x: number) => number> = { neg: (y) => -y, abs: Math.abs, exp: Math.exp, log: Math.log, sqrt: Math.sqrt, sin: Math.sin, cos: Math.cos, tanh: Math.tanh, conj: (y) => y, real: (y) => y, imag: () => 0, scale: (y) => alpha * y };
  return f[op]!(x);
}

const UNARY: Record<string, DType[]> = {
  neg: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
  abs: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
  exp: ['f32', 'f64', 'c64', 'c128'],
  log: ['f32', 'f64', 'c64', 'c128'],
  sqrt: ['f32', 'f64'],
  sin: ['f32', 'f64', 'c64', 'c128'],
  cos: ['f32', 'f64', 'c128'],
  tanh: ['f32', 'f64'],
  conj: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
  real: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
  imag: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
  scale: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
};
const realOf = (d: DType): DType => (d === 'c64' ? 'f32' : d === 'c128' ? 'f64' : d);

function castModel(from: DType, to: DType, v: Value): Value {
  const re = Array.isArray(v) ? v[0] : typeof v === 'bigint' ? Number(v) : (v as number);
  const im = Array.isArray(v) ? v[1] : 0;
  switch (to) {
    case 'bool':
      return re !== 0 || im !== 0 ? 1 : 0;
    case 'i32':
      return Number.isNaN(re) ? 0 : Math.max(-(2 ** 31), Math.min(2 ** 31 - 1, Math.trunc(re)));
    case 'i64':
      return typeof v === 'bigint' ? v : BigInt(Number.isNaN(re) ? 0 : Math.trunc(re));
    case 'c64':
    case 'c128':
      return [re, im];
    default:
      return from === 'bool' ? (re === 0 ? 0 : 1) : re;
  }
}

describe('ops(backend) against a per-element model', () => {
  it('binary operations with broadcasting, fresh and guard-banded outputs', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom(...Object.keys(BINARY)), fc.nat(), fc.integer(), async (shape, op, pick, seed) => {
        const dtypes = BINARY[op]!;
        const dtype = dtypes[pick % dtypes.length]!;
        const rand = seededRandom(seed);
        // Operands: any axis may be 1 (broadcast), trailing axes may be missing (leading alignment).
        const operandShape = () => shape.slice(0, Math.floor(rand() * (shape.length + 1))).map((e) => (rand() < 0.3 ? 1 : e));
        const ls = rand() < 0.5 ? [...shape] : operandShape();
        const rs = [...shape];
        const lhs = randomView(rand, dtype, ls, { broadcast: true });
        const rhs = randomView(rand, dtype, rs, { broadcast: true });
        const outShape = [...shape];
        const outDType = ['eq', 'lt', 'le', 'gt', 'ge'].includes(op) ? 'bool' : dtype;
        const before = [snapshot(lhs), snapshot(rhs)];
        const out = rand() < 0.5 ? guardedOut(rand, outDType, outShape) : undefined;
        const guard = out === undefined ? undefined : snapshot(out);
        const got = await (o as unknown as Record<string, (a: Tensor, b: Tensor, opt?: object) => Promise<Tensor>>)[op]!(lhs, rhs, out === undefined ? undefined : { out });
        if (out !== undefined) expect(got).toBe(out);
        expect(got.shape).toEqual(outShape);
        expect(got.dtype).toBe(outDType);
        const L = elements(lhs);
        const R = elements(rhs);
        const G = elements(got);
        const size = outShape.reduce((a, e) => a * e, 1);
        for (let p = 0; p < size; p++) {
          const idx = unravel(p, outShape);
          const a = L[ravel(idx.map((i, t) => (ls[t] === 1 ? 0 : i)).slice(0, ls.length), ls)]!;
          const b = R[ravel(idx, rs)]!;
          const want = store(outDType, binaryModel(op, dtype, a, b));
          const ok = isComplex(dtype) && op === 'div' ? close(G[p]!, want, tol(dtype)) : same(G[p]!, want);
          if (!ok) throw new Error(`${op} ${dtype} at ${idx}: ${String(a)} ${String(b)} → ${String(G[p])}, want ${String(want)}`);
        }
        expect(snapshot(lhs)).toEqual(before[0]);
        expect(snapshot(rhs)).toEqual(before[1]);
        if (out !== undefined) expectGuardsKept(out, guard!);
      }),
      { numRuns: 150 },
    );
  });

  it('unary operations and cast, fresh and guard-banded outputs', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom(...Object.keys(UNARY), 'cast'), fc.nat(), fc.constantFrom(...ALL), fc.integer(), async (shape, op, pick, target, seed) => {
        const dtypes = op === 'cast' ? ALL : UNARY[op]!;
        const dtype = dtypes[pick % dtypes.length]!;
        const rand = seededRandom(seed);
        const src = randomView(rand, dtype, shape, { broadcast: true });
        const alpha = dtype === 'bool' ? 1 : Math.floor(rand() * 7) - 3;
        const outDType = op === 'cast' ? target : ['abs', 'real', 'imag'].includes(op) ? realOf(dtype) : dtype;
        const before = snapshot(src);
        const out = rand() < 0.5 ? guardedOut(rand, outDType, shape) : undefined;
        const guard = out === undefined ? undefined : snapshot(out);
        const opt = out === undefined ? undefined : { out };
        const t = src as Tensor<DType>;
        const got = op === 'cast' ? await o.cast(t, target, opt as never) : op === 'scale' ? await o.scale(t, alpha, opt as never) : await (o as unknown as Record<string, (a: Tensor, opt?: object) => Promise<Tensor>>)[op]!(src, opt);
        expect(got.shape).toEqual(shape);
        expect(got.dtype).toBe(outDType);
        const S = elements(src);
        const G = elements(got);
        const exact = !isComplex(dtype) || ['neg', 'abs', 'conj', 'real', 'imag', 'scale'].includes(op) || op === 'cast';
        S.forEach((v, p) => {
          const want = store(outDType, op === 'cast' ? castModel(dtype, target, v) : unaryModel(op, dtype, v, alpha));
          if (!(exact ? same(G[p]!, want) : close(G[p]!, want, tol(dtype)))) throw new Error(`${op} ${dtype}→${outDType}: ${String(v)} → ${String(G[p])}, want ${String(want)}`);
        });
        expect(snapshot(src)).toEqual(before);
        if (out !== undefined) expectGuardsKept(out, guard!);
      }),
      { numRuns: 150 },
    );
  });

  it('reductions over random axes, keepDims, fresh and guard-banded outputs', async () => {
    const REDUCE: Record<string, DType[]> = {
      sum: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
      mean: ['f32', 'f64', 'c64', 'c128'],
      max: ['f32', 'f64', 'i32', 'i64', 'bool'],
      min: ['f32', 'f64', 'i32', 'i64', 'bool'],
      prod: ['f32', 'f64', 'c128', 'i32', 'i64'],
      argmax: ['f32', 'f64', 'i32', 'i64', 'bool'],
      argmin: ['f32', 'f64', 'i32', 'i64', 'bool'],
      norm: ['f32', 'f64', 'c64', 'c128'],
    };
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom(...Object.keys(REDUCE)), fc.nat(), fc.boolean(), fc.integer(), async (shape0, op, pick, keepDims, seed) => {
        const dtypes = REDUCE[op]!;
        const dtype = dtypes[pick % dtypes.length]!;
        const rand = seededRandom(seed);
        const picksElement = ['max', 'min', 'argmax', 'argmin'].includes(op);
        const shape = picksElement ? shape0.map((e) => Math.max(e, 1)) : shape0;
        const all = rand() < 0.2;
        const axes = all ? undefined : shape.map((_, t) => t).filter(() => rand() < 0.5).sort(() => rand() - 0.5);
        const reduced = axes ?? shape.map((_, t) => t);
        const src = randomView(rand, dtype, shape, { broadcast: true });
        const outDType: DType = op.startsWith('arg') ? 'i64' : op === 'norm' ? realOf(dtype) : dtype;
        const kept = shape.map((e, t) => (reduced.includes(t) ? 1 : e));
        const resultShape = keepDims ? kept : shape.filter((_, t) => !reduced.includes(t));
        const before = snapshot(src);
        const out = rand() < 0.4 ? guardedOut(rand, outDType, resultShape) : undefined;
        const guard = out === undefined ? undefined : snapshot(out);
        const options = { ...(axes === undefined ? {} : { axes }), keepDims, ...(out === undefined ? {} : { out }) };
        const got = await (o as unknown as Record<string, (a: Tensor, opt?: object) => Promise<Tensor>>)[op]!(src, options);
        expect(got.shape).toEqual(resultShape);
        expect(got.dtype).toBe(outDType);
        const S = elements(src);
        const G = elements(got);
        const sortedAxes = [...reduced].sort((a, b) => a - b);
        const inner = sortedAxes.map((a) => shape[a]!);
        const innerSize = inner.reduce((a, e) => a * e, 1);
        const outSize = kept.reduce((a, e) => a * e, 1);
        for (let q = 0; q < outSize; q++) {
          const base = unravel(q, kept);
          const vals: Value[] = [];
          for (let r = 0; r < innerSize; r++) {
            const ri = unravel(r, inner);
            const idx = [...base];
            sortedAxes.forEach((a, k) => (idx[a] = ri[k]!));
            vals.push(S[ravel(idx, shape)]!);
          }
          const want = store(outDType, reduceModel(op, dtype, vals));
          const ok = op === 'norm' || (op === 'mean' && isComplex(dtype)) ? close(G[q]!, want, tol(dtype)) : same(G[q]!, want);
          if (!ok) throw new Error(`${op} ${dtype} over [${sortedAxes}] of [${shape}] at ${base}: ${String(G[q])}, want ${String(want)}`);
        }
        expect(snapshot(src)).toEqual(before);
        if (out !== undefined) expectGuardsKept(out, guard!);
      }),
      { numRuns: 150 },
    );
  });

  it('layout: contiguous (both orders, conjugated) and copyInto a guard-banded view equal the source element by element', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom(...ALL), fc.constantFrom<'col' | 'row'>('col', 'row'), fc.boolean(), fc.integer(), async (shape, dtype, order, conjugate, seed) => {
        const rand = seededRandom(seed);
        const src = randomView(rand, dtype, shape, { broadcast: true });
        const before = snapshot(src);
        const dense = await o.contiguous(src, { order, conjugate });
        expect(dense.isDense(order)).toBe(true);
        const S = elements(src);
        const conj = (v: Value): Value => (conjugate && Array.isArray(v) ? [v[0], -v[1]] : v);
        elements(dense).forEach((v, p) => expect(same(v, conj(S[p]!))).toBe(true));
        const out = guardedOut(rand, dtype, shape);
        const guard = snapshot(out);
        await o.copyInto(out, src, { conjugate });
        elements(out).forEach((v, p) => expect(same(v, conj(S[p]!))).toBe(true));
        expectGuardsKept(out, guard);
        expect(snapshot(src)).toEqual(before);
      }),
      { numRuns: 100 },
    );
  });
});

function reduceModel(op: string, dtype: DType, vals: Value[]): Value {
  const n = vals.length;
  if (op === 'argmax' || op === 'argmin') {
    let at = -1;
    let best: number | bigint = 0;
    for (let i = 0; i < n; i++) {
      const x = vals[i] as number | bigint;
      if (typeof x === 'number' && Number.isNaN(x)) return BigInt(i);
      if (at < 0 || (op === 'argmax' ? x > best : x < best)) {
        best = x;
        at = i;
      }
    }
    return BigInt(Math.max(at, 0));
  }
  if (dtype === 'i64') {
    const xs = vals as bigint[];
    if (op === 'sum') return xs.reduce((a, x) => a + x, 0n);
    if (op === 'prod') return xs.reduce((a, x) => BigInt.asIntN(64, a * x), 1n);
    return xs.reduce((a, x) => (op === 'max' ? (x > a ? x : a) : x < a ? x : a));
  }
  if (isComplex(dtype)) {
    const xs = vals as [number, number][];
    if (op === 'norm') return Math.sqrt(xs.reduce((a, [r, i]) => a + r * r + i * i, 0));
    if (op === 'prod') return xs.reduce<[number, number]>(([ar, ai], [br, bi]) => [ar * br - ai * bi, ar * bi + ai * br], [1, 0]);
    const s = xs.reduce<[number, number]>(([ar, ai], [br, bi]) => [ar + br, ai + bi], [0, 0]);
    return op === 'mean' ? [s[0] / n, s[1] / n] : s;
  }
  const xs = vals as number[];
  switch (op) {
    case 'sum':
      return dtype === 'i32' ? xs.reduce((a, x) => (a + x) | 0, 0) : xs.reduce((a, x) => a + x, 0);
    case 'mean':
      return xs.reduce((a, x) => a + x, 0) / n;
    case 'prod':
      return dtype === 'i32' ? xs.reduce((a, x) => Math.imul(a, x), 1) : xs.reduce((a, x) => a * x, 1);
    case 'norm':
      return Math.sqrt(xs.reduce((a, x) => a + x * x, 0));
    case 'max':
      return xs.reduce((a, x) => Math.max(a, x));
    default:
      return xs.reduce((a, x) => Math.min(a, x));
  }
}
