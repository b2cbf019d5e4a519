// Shapes large enough for the paths small random cases never reach: whole micro tiles and
// several macro tiles of the transposing copy, the non-temporal path (outputs ≥ 8 MiB), more than
// one 1024-output chunk of a reduction with a kept innermost axis, long pairwise sums, splits over
// 2 lanes — each equal to core's reference (exact for copies, within the stated bound for sums).
import { type DType, referenceLayoutProvider, referenceTensorPrimitivesProvider, type TensorDescriptor } from '@tenferro/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTprimsProvider, status } from '../src/index.js';
import { cloneView, compareOutputs, fill, inlineContext, mulberry } from './helpers.js';

function dense(dtype: DType, shape: number[], strides: number[], seed: number, offset = 2): TensorDescriptor {
  let last = offset;
  for (let i = 0; i < shape.length; i++) last += (shape[i]! - 1) * strides[i]!;
  const bytes = { f32: 4, f64: 8, c64: 8, c128: 16, i32: 4, i64: 8, bool: 1 }[dtype];
  const buffer = new SharedArrayBuffer((last + 3) * bytes);
  fill(mulberry(seed), dtype, buffer);
  return Object.freeze({ dtype, shape, strides, offset, buffer });
}

describe.runIf(status().available)('large views against the reference', () => {
  const cases: [DType, number, number][] = [
    ['f64', 64, 64],
    ['f64', 131, 77],
    ['f32', 257, 65],
    ['c128', 70, 90],
    ['c64', 33, 129],
    ['bool', 100, 70],
    ['i64', 1100, 1100], // 9.7 MB output: non-temporal stores
  ];
  for (const [dtype, m, n] of cases) {
    for (const lanes of [1, 2]) {
      it(`transposing copy ${dtype} ${m}×${n}, conjugated when complex (${lanes} lane${lanes > 1 ? 's' : ''})`, async () => {
        const src = dense(dtype, [m, n], [n, 1], m * n); // row-major source
        const dst = dense(dtype, [m, n], [1, m + 1], 7); // column-major output with a gap
        const want = cloneView(dst);
        const got = cloneView(dst);
        const conjugate = dtype === 'c64' || dtype === 'c128';
        await referenceLayoutProvider.materialize(inlineContext(1), { src, dst: want, conjugate });
        const pkg = createTprimsProvider({ parallelMinElements: 0 });
        const outcome = await pkg.layoutTransform!.materialize(inlineContext(lanes), { src, dst: got, conjugate });
        expect(outcome.executed).toBe(true);
        expect(compareOutputs(got, want, 0)).toBeUndefined();
      });
    }
  }

  for (const lanes of [1, 2]) {
    it(`transposing copy f64 1024×1024 into an aligned dense output (8 MiB: 8x8 register blocks, whole-line non-temporal stores; ${lanes} lane${lanes > 1 ? 's' : ''})`, async () => {
      const src = dense('f64', [1024, 1024], [1024, 1], 3);
      const dst = dense('f64', [1024, 1024], [1, 1024], 4, 0);
      const want = cloneView(dst);
      const got = cloneView(dst);
      await referenceLayoutProvider.materialize(inlineContext(1), { src, dst: want, conjugate: false });
      const pkg = createTprimsProvider({ parallelMinElements: 0 });
      expect((await pkg.layoutTransform!.materialize(inlineContext(lanes), { src, dst: got, conjugate: false })).executed).toBe(true);
      expect(compareOutputs(got, want, 0)).toBeUndefined();
    });

    // Long contiguous element-wise rows (8 MiB and more) at unaligned offsets (3 and 5 elements), split over the lanes.
    it(`add of f32 and neg of f64 over 2^21 + 7 contiguous elements at unaligned offsets (${lanes} lane${lanes > 1 ? 's' : ''})`, async () => {
      const n = 2 ** 21 + 7;
      const pkg = createTprimsProvider({ parallelMinElements: 0 });
      const lhs = dense('f32', [n], [1], 21, 3);
      const rhs = dense('f32', [n], [1], 22, 5);
      const out = dense('f32', [n], [1], 23, 3);
      const want = cloneView(out);
      const got = cloneView(out);
      await referenceTensorPrimitivesProvider.binary(inlineContext(1), { op: 'add', lhs, rhs, out: want });
      expect((await pkg.tensorPrimitives!.binary(inlineContext(lanes), { op: 'add', lhs, rhs, out: got })).executed).toBe(true);
      expect(compareOutputs(got, want, 0)).toBeUndefined();
      const src = dense('f64', [n], [1], 24, 5);
      const o64 = dense('f64', [n], [1], 25, 3);
      const want64 = cloneView(o64);
      const got64 = cloneView(o64);
      await referenceTensorPrimitivesProvider.unary(inlineContext(1), { op: 'neg', src, out: want64 });
      expect((await pkg.tensorPrimitives!.unary(inlineContext(lanes), { op: 'neg', src, out: got64 })).executed).toBe(true);
      expect(compareOutputs(got64, want64, 0)).toBeUndefined();
    });
  }

  // Contiguous element-wise rows whose output is ≥ 8 MiB are computed a 256-byte chunk at a time and
  // streamed out in whole lines with non-temporal stores (512-bit on avx512f, 256-bit on avx2, SSE2
  // on portable): on
  // every ISA path, every output width (1-byte bool to 16-byte c128), at line-unaligned offsets
  // so that the head before the first line and a ragged tail are exercised too.
  const binaryStatus = status();
  const binaryPaths = binaryStatus.available ? String(binaryStatus.details.isaPaths).split(', ') : [];
  for (const isa of binaryPaths as ('avx512f' | 'avx2' | 'portable')[]) {
    it(`non-temporal rows: add f32, mul c128, lt f64 → bool, neg c64, a bool copy over ≥ 8 MiB outputs (isa ${isa})`, async () => {
      const pkg = createTprimsProvider({ isa, parallelMinElements: 0 });
      const cases: [DType, 'add' | 'mul' | 'lt', DType, number][] = [
        ['f32', 'add', 'f32', 2 ** 21 + 13],
        ['c128', 'mul', 'c128', 2 ** 19 + 5],
        ['f64', 'lt', 'bool', 2 ** 23 + 61],
      ];
      for (const [din, op, dout, n] of cases) {
        const lhs = dense(din, [n], [1], 31, 1);
        const rhs = dense(din, [n], [1], 32, 2);
        const out = dense(dout, [n], [1], 33, 3);
        const want = cloneView(out);
        const got = cloneView(out);
        await referenceTensorPrimitivesProvider.binary(inlineContext(1), { op, lhs, rhs, out: want });
        expect((await pkg.tensorPrimitives!.binary(inlineContext(1), { op, lhs, rhs, out: got })).executed).toBe(true);
        // Exact, except the complex product: the FMA paths round a·b − c·d once where the
        // reference rounds twice (the oracle's stated bound, 8 ε relative).
        expect(compareOutputs(got, want, op === 'mul' ? 8 * 2 ** -50 : 0), `${op} ${din}`).toBeUndefined();
      }
      // Unary rows and contiguous copies take the same path.
      const src = dense('c64', [2 ** 20 + 9], [1], 34, 1);
      const neg = dense('c64', [2 ** 20 + 9], [1], 35, 6);
      const wantNeg = cloneView(neg);
      const gotNeg = cloneView(neg);
      await referenceTensorPrimitivesProvider.unary(inlineContext(1), { op: 'neg', src, out: wantNeg });
      expect((await pkg.tensorPrimitives!.unary(inlineContext(1), { op: 'neg', src, out: gotNeg })).executed).toBe(true);
      expect(compareOutputs(gotNeg, wantNeg, 0), 'neg c64').toBeUndefined();
      const bits = dense('bool', [2 ** 23 + 3], [1], 36, 5);
      const copy = dense('bool', [2 ** 23 + 3], [1], 37, 2);
      const wantCopy = cloneView(copy);
      const gotCopy = cloneView(copy);
      await referenceLayoutProvider.materialize(inlineContext(1), { src: bits, dst: wantCopy, conjugate: false });
      expect((await pkg.layoutTransform!.materialize(inlineContext(1), { src: bits, dst: gotCopy, conjugate: false })).executed).toBe(true);
      expect(compareOutputs(gotCopy, wantCopy, 0), 'copy bool').toBeUndefined();
    });
  }

  // Transposing copies whose row strides are whole 64-byte lines, at every kind of offset: the
  // block grid starts where the lines start (leading rows and columns peeled off), so every
  // offset of either operand, and slices of a batch axis that start at different offsets within
  // a line, give different peels; on every ISA path, whole and split.
  const st = status();
  const paths = st.available ? String(st.details.isaPaths).split(', ') : [];
  for (const isa of paths as ('avx512f' | 'avx2' | 'portable')[]) {
    for (const dtype of ['f64', 'f32', 'c128', 'c64', 'i64', 'bool'] as DType[]) {
      it(`line-aligned transposing copy of ${dtype} at every offset, with a batch axis (isa ${isa})`, async () => {
        const bytes = { f32: 4, f64: 8, c64: 8, c128: 16, i32: 4, i64: 8, bool: 1 }[dtype];
        const line = 64 / bytes;
        const [m, n, batch] = dtype === 'bool' ? [140, 131, 2] : [37 + 2 * line, 29 + 3 * line, 3];
        const rs = Math.ceil(n / line) * line + line; // source row stride: whole lines
        const cs = Math.ceil(m / line) * line; // output column stride: whole lines
        const pkg = createTprimsProvider({ isa, parallelMinElements: 0 });
        for (const [os, od] of [[0, 0], [1, 3], [line - 1, 2], [3, line - 2], [line >> 1, 0]] as [number, number][]) {
          // The batch axis' strides are not whole lines: each slice starts elsewhere in its line.
          const src = dense(dtype, [m, n, batch], [rs, 1, m * rs + 3], os + 1, os);
          const dst = dense(dtype, [m, n, batch], [1, cs, n * cs + 5], od + 2, od);
          const conjugate = dtype === 'c64' || dtype === 'c128';
          const want = cloneView(dst);
          await referenceLayoutProvider.materialize(inlineContext(1), { src, dst: want, conjugate });
          for (const lanes of [1, 2]) {
            const got = cloneView(dst);
            expect((await pkg.layoutTransform!.materialize(inlineContext(lanes), { src, dst: got, conjugate })).executed).toBe(true);
            expect(compareOutputs(got, want, 0), `offsets ${os}/${od}, ${lanes} lane(s)`).toBeUndefined();
          }
        }
      });
    }
    it(`line-aligned transposing copy of f64 1040×1040 at offsets 1 and 3 (8.6 MB: non-temporal stores from the aligned grid; isa ${isa})`, async () => {
      const src = dense('f64', [1040, 1040], [1040, 1], 31, 1);
      const dst = dense('f64', [1040, 1040], [1, 1040], 32, 3);
      const want = cloneView(dst);
      await referenceLayoutProvider.materialize(inlineContext(1), { src, dst: want, conjugate: false });
      const pkg = createTprimsProvider({ isa, parallelMinElements: 0 });
      for (const lanes of [1, 2]) {
        const got = cloneView(dst);
        expect((await pkg.layoutTransform!.materialize(inlineContext(lanes), { src, dst: got, conjugate: false })).executed).toBe(true);
        expect(compareOutputs(got, want, 0)).toBeUndefined();
      }
    });
  }

  // Random transposing copies around the line-aligned grid: random extents (some below one line),
  // row strides with random gaps (some whole lines, some not), random offsets and an optional
  // batch axis, every dtype; exact, nothing outside the output touched, on every ISA path.
  for (const isa of paths as ('avx512f' | 'avx2' | 'portable')[]) {
    it(`random transposing copies around the line-aligned block grid (isa ${isa})`, async () => {
      const pkg = createTprimsProvider({ isa, parallelMinElements: 0 });
      const ALL: DType[] = ['f32', 'f64', 'c64', 'c128', 'i32', 'i64', 'bool'];
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), async (seed) => {
          const rand = mulberry(seed);
          const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
          const dtype = ALL[int(0, ALL.length - 1)]!;
          const bytes = { f32: 4, f64: 8, c64: 8, c128: 16, i32: 4, i64: 8, bool: 1 }[dtype];
          const line = 64 / bytes;
          const m = int(1, 3 * line + 5);
          const n = int(1, 3 * line + 5);
          const batch = rand() < 0.3 ? int(2, 3) : 1;
          const rs = n + (rand() < 0.5 ? (line - (n % line)) % line : int(0, 2 * line)); // source row stride
          const cs = m + (rand() < 0.5 ? (line - (m % line)) % line : int(0, 2 * line)); // output column stride
          const src = dense(dtype, [m, n, batch], [rs, 1, m * rs + int(0, line)], seed, int(0, line));
          const dst = dense(dtype, [m, n, batch], [1, cs, n * cs + int(0, line)], seed + 1, int(0, line));
          const conjugate = rand() < 0.5;
          const want = cloneView(dst);
          await referenceLayoutProvider.materialize(inlineContext(1), { src, dst: want, conjugate });
          const lanes = int(1, 2);
          const got = cloneView(dst);
          expect((await pkg.layoutTransform!.materialize(inlineContext(lanes), { src, dst: got, conjugate })).executed).toBe(true);
          expect(compareOutputs(got, want, 0), `seed ${seed}: ${dtype} [${m}, ${n}, ${batch}] strides ${rs}/${cs}, ${lanes} lane(s)`).toBeUndefined();
        }),
        { numRuns: 60, seed: 20261201 },
      );
    });
  }

  // Reductions with a kept unit-stride innermost axis whose reduced rows come in whole leaves of
  // 8 (the unrolled leaf: 8 rows folded in registers per output), wider than one 4096-output
  // chunk too, rows at a gapped stride and an offset; every operation and dtype, every ISA path.
  const REDUCE: Record<string, DType[]> = {
    sum: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
    mean: ['f32', 'f64', 'c64', 'c128'],
    max: ['f32', 'f64', 'i32', 'i64', 'bool'],
    min: ['f32', 'f64', 'i32', 'i64', 'bool'],
    prod: ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'],
    argmax: ['f32', 'f64', 'i32', 'i64', 'bool'],
    argmin: ['f32', 'f64', 'i32', 'i64', 'bool'],
    norm: ['f32', 'f64', 'c64', 'c128'],
  };
  for (const isa of paths as ('avx512f' | 'avx2' | 'portable')[]) {
    it(`reductions over whole 8-row leaves with a kept unit-stride innermost axis, every op and dtype (isa ${isa})`, async () => {
      const pkg = createTprimsProvider({ isa, parallelMinElements: 0 });
      const layouts: [number[], number[], number[]][] = [
        [[37, 64], [1, 40], [1]], // 8 leaves of 8 rows, rows 40 apart (a gap of 3)
        [[4100, 16], [1, 4103], [1]], // more than one 4096-output chunk
        [[33, 4, 2, 3], [1, 33, 132, 264], [1, 2]], // 8 rows from two reduced axes, a kept outer axis
      ];
      for (const [op, dtypes] of Object.entries(REDUCE)) {
        for (const dtype of dtypes) {
          for (const [shape, strides, axes] of layouts) {
            const src = dense(dtype, shape, strides, shape[0]! + shape.length, 3);
            const outShape = shape.map((e, i) => (axes.includes(i) ? 1 : e));
            const os: number[] = [];
            let s = 1;
            for (const e of outShape) os.push(s), (s *= e);
            const outDtype = op === 'argmax' || op === 'argmin' ? 'i64' : op === 'norm' ? (dtype === 'c64' ? 'f32' : dtype === 'c128' ? 'f64' : dtype) : dtype;
            const out = dense(outDtype, outShape, os, 5);
            const want = cloneView(out);
            await referenceTensorPrimitivesProvider.reduce(inlineContext(1), { op: op as 'sum', src, axes, out: want });
            const count = axes.reduce((p, a) => p * shape[a]!, 1);
            const tol = ['f32', 'c64'].includes(outDtype) ? 2 ** -21 * 8 * (1 + count) : ['f64', 'c128'].includes(outDtype) ? 2 ** -50 * 8 * (1 + count) : 0;
            for (const lanes of [1, 2]) {
              const got = cloneView(out);
              expect((await pkg.tensorPrimitives!.reduce(inlineContext(lanes), { op: op as 'sum', src, axes, out: got })).executed).toBe(true);
              expect(compareOutputs(got, want, tol), `${op} ${dtype} [${shape}] over [${axes}], ${lanes} lane(s)`).toBeUndefined();
            }
          }
        }
      }
    });
  }

  for (const [shape, axes] of [
    [[3000, 5], [1]],
    [[4100, 9], [1]],
    [[2500, 4, 3], [1, 2]],
    [[7, 30000], [1]],
    [[100000], [0]],
    [[40, 50, 60], [0, 2]],
  ] as [number[], number[]][]) {
    for (const op of ['sum', 'argmax', 'norm', 'max'] as const) {
      it(`${op} of f64 [${shape}] over [${axes}] (2 lanes)`, async () => {
        const strides: number[] = [];
        let s = 1;
        for (const e of shape) strides.push(s), (s *= e);
        const src = dense('f64', shape, strides, 11);
        const outShape = shape.map((e, i) => (axes.includes(i) ? 1 : e));
        const os: number[] = [];
        s = 1;
        for (const e of outShape) os.push(s), (s *= e);
        const dtype = op === 'argmax' ? 'i64' : 'f64';
        const out = dense(dtype, outShape, os, 5);
        const want = cloneView(out);
        const got = cloneView(out);
        await referenceTensorPrimitivesProvider.reduce(inlineContext(1), { op, src, axes, out: want });
        const pkg = createTprimsProvider({ parallelMinElements: 0 });
        expect((await pkg.tensorPrimitives!.reduce(inlineContext(2), { op, src, axes, out: got })).executed).toBe(true);
        const count = axes.reduce((p, a) => p * shape[a]!, 1);
        expect(compareOutputs(got, want, dtype === 'i64' ? 0 : 2 ** -50 * 8 * count)).toBeUndefined();
      });
    }
  }

  it('pairwise summation: 10^7 values of 0.1 sum to 10^6 within 10^-12 relative (a running sum is off by more than 10^-11)', async () => {
    const n = 10_000_000;
    const buffer = new SharedArrayBuffer(8 * n);
    new Float64Array(buffer).fill(0.1);
    const src: TensorDescriptor = { dtype: 'f64', shape: [n], strides: [1], offset: 0, buffer };
    const out: TensorDescriptor = { dtype: 'f64', shape: [1], strides: [1], offset: 0, buffer: new SharedArrayBuffer(8) };
    const pkg = createTprimsProvider();
    await pkg.tensorPrimitives!.reduce(inlineContext(1), { op: 'sum', src, axes: [0], out });
    const got = new Float64Array(out.buffer)[0]!;
    let running = 0;
    for (let i = 0; i < n; i++) running += 0.1;
    expect(Math.abs(got - 1e6) / 1e6).toBeLessThan(1e-12);
    expect(Math.abs(running - 1e6) / 1e6).toBeGreaterThan(1e-11);
  });
});
