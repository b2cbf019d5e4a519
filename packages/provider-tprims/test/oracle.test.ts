// Every operation of both slots against core's reference implementation (the oracle), on random
// shapes (rank 0–5), random strided / permuted / broadcast views between guard bands, every dtype
// the operation is defined for, whole and split into parts (a pool of 2 lanes), on every ISA path
// this CPU has: equal within the stated bound (exact for integers, bool and layout; floats within
// a few units of their precision, scaled by the element count for reductions), nothing outside the
// output view touched, inputs unchanged. Kernel tasks run inline (see helpers.inlineContext).
import {
  type CpuProviderOutcome,
  type CpuTensorPrimitivesProvider,
  type DType,
  referenceLayoutProvider,
  referenceTensorPrimitivesProvider,
  type TensorDescriptor,
} from '@tenferro/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTprimsProvider, status } from '../src/index.js';
import { cloneView, compareOutputs, inlineContext, mulberry, outputView, randomView, sameBytes } from './helpers.js';

const NUMERIC: DType[] = ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'];
const FLOAT: DType[] = ['f32', 'f64', 'c64', 'c128'];
const ORDERED: DType[] = ['f32', 'f64', 'i32', 'i64', 'bool'];
const ALL: DType[] = ['f32', 'f64', 'c64', 'c128', 'i32', 'i64', 'bool'];
const BINARY: Record<string, DType[]> = { add: NUMERIC, sub: NUMERIC, mul: NUMERIC, div: NUMERIC, maximum: ORDERED, minimum: ORDERED, pow: FLOAT, eq: ALL, lt: ORDERED, le: ORDERED, gt: ORDERED, ge: ORDERED };
const UNARY: Record<string, DType[]> = { neg: NUMERIC, abs: NUMERIC, exp: FLOAT, log: FLOAT, sqrt: FLOAT, sin: FLOAT, cos: FLOAT, tanh: FLOAT, conj: NUMERIC, real: NUMERIC, imag: NUMERIC, scale: NUMERIC, cast: ALL };
const REDUCE: Record<string, DType[]> = { sum: NUMERIC, mean: FLOAT, max: ORDERED, min: ORDERED, prod: NUMERIC, argmax: ORDERED, argmin: ORDERED, norm: FLOAT };
/** What tprims declines on purpose among the defined operations (the reference then runs): nothing today. */
const DECLINED = new Set<string>([]);

const realOf = (d: DType): DType => (d === 'c64' ? 'f32' : d === 'c128' ? 'f64' : d);
const isFloat = (d: DType) => FLOAT.includes(d);
const eps = (d: DType) => (d === 'f32' || d === 'c64' ? 2 ** -21 : 2 ** -50);
const TRANSCENDENTAL = new Set(['exp', 'log', 'sqrt', 'sin', 'cos', 'tanh', 'pow']);

const s = status();
const paths = s.available ? String(s.details.isaPaths).split(', ') : [];

interface Case {
  readonly run: (p: { tensorPrimitives?: CpuTensorPrimitivesProvider; layout?: typeof referenceLayoutProvider }, ctx: ReturnType<typeof inlineContext>, out: TensorDescriptor) => Promise<CpuProviderOutcome>;
  readonly inputs: TensorDescriptor[];
  readonly out: TensorDescriptor;
  readonly tol: number;
  readonly label: string;
  readonly declined: boolean;
}

function makeCase(seed: number): Case {
  const rand = mulberry(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const rank = Math.floor(rand() * 6);
  const shape = Array.from({ length: rank }, () => (rand() < 0.05 ? 0 : 1 + Math.floor(rand() * (rank > 3 ? 3 : 6))));
  const count = shape.reduce((p, e) => p * e, 1);
  const kind = pick(['binary', 'unary', 'reduce', 'layout'] as const);
  if (kind === 'binary') {
    const op = pick(Object.keys(BINARY));
    const dtype = pick(BINARY[op]!);
    const lhs = randomView(rand, dtype, shape, true);
    const rhs = randomView(rand, dtype, shape, true);
    const outDtype = ['eq', 'lt', 'le', 'gt', 'ge'].includes(op) ? 'bool' : dtype;
    const out = outputView(rand, outDtype, shape);
    const tol = isFloat(outDtype) ? eps(dtype) * (TRANSCENDENTAL.has(op) ? 1e4 : 8) : 0;
    return { run: (p, ctx, o) => p.tensorPrimitives!.binary(ctx, { op: op as never, lhs, rhs, out: o }), inputs: [lhs, rhs], out, tol, label: `${op} ${dtype} [${shape}]`, declined: false };
  }
  if (kind === 'unary') {
    const op = pick(Object.keys(UNARY));
    const dtype = pick(UNARY[op]!);
    const src = randomView(rand, dtype, shape, true);
    const outDtype = op === 'cast' ? pick(ALL) : ['abs', 'real', 'imag'].includes(op) ? realOf(dtype) : dtype;
    const out = outputView(rand, outDtype, shape);
    const complex = dtype === 'c64' || dtype === 'c128';
    const alpha = op === 'scale' ? (complex ? ([rand() * 4 - 2, rand() * 4 - 2] as const) : dtype === 'i32' || dtype === 'i64' ? 3 : rand() * 4 - 2) : undefined;
    const tol = isFloat(outDtype) ? eps(outDtype) * (TRANSCENDENTAL.has(op) ? 1e4 : 8) : 0;
    return {
      run: (p, ctx, o) => p.tensorPrimitives!.unary(ctx, { op: op as never, src, out: o, ...(alpha === undefined ? {} : { alpha }) }),
      inputs: [src],
      out,
      tol,
      label: `${op} ${dtype}→${outDtype} [${shape}]`,
      declined: DECLINED.has(`${op}:${dtype}`),
    };
  }
  if (kind === 'reduce') {
    const op = pick(Object.keys(REDUCE));
    const dtype = pick(REDUCE[op]!);
    const src = randomView(rand, dtype, shape, true);
    const axes = shape.map((_, i) => i).filter(() => rand() < 0.5);
    if (axes.length === 0 && rank > 0) axes.push(Math.floor(rand() * rank));
    if (rank === 0) return makeCase(seed + 7919);
    const outShape = shape.map((e, i) => (axes.includes(i) ? 1 : e));
    const outDtype = op === 'argmax' || op === 'argmin' ? 'i64' : op === 'norm' ? realOf(dtype) : dtype;
    const out = outputView(rand, outDtype, outShape);
    const reducedCount = axes.reduce((p, a) => p * shape[a]!, 1);
    const tol = isFloat(outDtype) ? eps(outDtype) * 8 * (1 + reducedCount) : 0;
    return { run: (p, ctx, o) => p.tensorPrimitives!.reduce(ctx, { op: op as never, src, axes, out: o }), inputs: [src], out, tol, label: `${op} ${dtype} [${shape}] axes [${axes}]`, declined: false };
  }
  const dtype = pick(ALL);
  const src = randomView(rand, dtype, shape, true);
  const out = outputView(rand, dtype, shape);
  const conjugate = rand() < 0.5;
  void count;
  return { run: (p, ctx, o) => p.layout!.materialize(ctx, { src, dst: o, conjugate }), inputs: [src], out, tol: 0, label: `materialize ${dtype} [${shape}] conj ${conjugate}`, declined: false };
}

async function check(seed: number, isa: 'auto' | 'avx512f' | 'avx2' | 'portable', lanes: number): Promise<'executed' | 'declined' | 'undefined'> {
  const c = makeCase(seed);
  const pkg = createTprimsProvider({ isa, parallelMinElements: 0 });
  const inputs = c.inputs.map(cloneView);
  const want = cloneView(c.out);
  const got = cloneView(c.out);
  const ref = await c.run({ tensorPrimitives: referenceTensorPrimitivesProvider, layout: referenceLayoutProvider }, inlineContext(1), want);
  // The reference declines what is undefined (max/min/argmax/argmin over no elements): the façade rejects those first.
  if (!ref.executed) return 'undefined';
  const ctx = inlineContext(lanes);
  const outcome = await c.run({ tensorPrimitives: pkg.tensorPrimitives!, layout: pkg.layoutTransform! as typeof referenceLayoutProvider }, ctx, got);
  if (c.declined) {
    expect(outcome, c.label).toMatchObject({ executed: false, reason: { kind: 'dtype' } });
    expect(ctx.tasks, 'a decline starts no task').toBe(0);
    expect(sameBytes(got.buffer, c.out.buffer), 'a decline writes nothing').toBe(true);
    return 'declined';
  }
  expect(outcome.executed, c.label).toBe(true);
  expect(ctx.tasks, `${c.label}: the native kernel ran`).toBeGreaterThanOrEqual(1);
  const diff = compareOutputs(got, want, c.tol);
  expect(diff, `${c.label} (seed ${seed}, isa ${isa}, lanes ${lanes})`).toBeUndefined();
  c.inputs.forEach((d, i) => expect(sameBytes(d.buffer, inputs[i]!.buffer), `${c.label}: input ${i} unchanged`).toBe(true));
  return 'executed';
}

describe.runIf(s.available)('tprims equals core reference implementation', () => {
  for (const isa of ['auto', ...(['avx2', 'portable'] as const).filter((p) => paths.includes(p) && paths[0] !== p)] as const) {
    for (const lanes of [1, 2]) {
      it(`random operations, views and dtypes (isa ${isa}, ${lanes} lane${lanes > 1 ? 's' : ''})`, async () => {
        const seen = { executed: 0, declined: 0, undefined: 0 };
        const runs = isa === 'auto' ? 600 : 200;
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), async (seed) => void seen[await check(seed, isa, lanes)]++),
          { numRuns: runs, seed: 20261130 + lanes },
        );
        expect(seen.executed).toBeGreaterThan(runs * 0.8);
      });
    }
  }
});

// The random views above give complex elements no special values, so they never divide by a complex
// zero nor by a divisor whose |b|² leaves the double range: Smith's division (docs/operations.md)
// must give the reference's result there too: infinities and NaNs exactly, finite parts within a few
// ULPs (the AVX paths differ from the reference in the last bit for the subnormal divisor).
describe.runIf(s.available)('complex division on the edge cases equals the reference', () => {
  const divisors: [number, number, number, number][] = [
    [1, 0, 0, 0], [-1.5, 1.75, 0, 0], [0, 0, 0, 0], [2, -3, -0, 0], [Number.NaN, 1, 0, 0], [1, 2, 0, -0], // zero divisors: (re/0, im/0)
    [1, 1, 1e200, 1e200], [3, -2, -4e300, 1e299], [1e300, 1e300, 1e300, 2e300], // c128: |b|² overflows
    [1, 1, 1e-200, 3e-200], [2e-300, 1e-300, 1e-310, -3e-310], // c128: |b|² underflows
    [3e38, 1e38, 1e-38, 2e-38], [1, 0.5, -2.5, 0.75], [0, 1, 1, 0], [1, 0, Number.POSITIVE_INFINITY, 1],
  ];
  for (const isa of ['auto', ...paths] as ('auto' | 'avx512f' | 'avx2' | 'portable')[]) {
    it(`c64 and c128 (isa ${isa}): zero, overflowing and underflowing divisors`, async () => {
      const pkg = createTprimsProvider({ isa, parallelMinElements: 0 });
      for (const dtype of ['c64', 'c128'] as const) {
        const view = (k: number): TensorDescriptor => {
          const buffer = new SharedArrayBuffer(2 * divisors.length * (dtype === 'c64' ? 4 : 8));
          const a = dtype === 'c64' ? new Float32Array(buffer) : new Float64Array(buffer);
          divisors.forEach((d, i) => a.set([d[k]!, d[k + 1]!], 2 * i));
          return { dtype, shape: [divisors.length], strides: [1], offset: 0, buffer };
        };
        const [lhs, rhs] = [view(0), view(2)];
        const want = view(0), got = view(0);
        await referenceTensorPrimitivesProvider.binary(inlineContext(1), { op: 'div', lhs, rhs, out: want });
        expect((await pkg.tensorPrimitives!.binary(inlineContext(1), { op: 'div', lhs, rhs, out: got })).executed).toBe(true);
        expect(compareOutputs(got, want, eps(dtype)), `${dtype} div`).toBeUndefined();
      }
    });
  }
});
