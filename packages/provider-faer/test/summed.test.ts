// Summed axes (CpuGemmRequest.summed; native/src/gemm.cc run_task: run_gather_task for real dtypes, items for complex): random
// requests — any dtype, strides, batch, offsets, alpha and beta, one or two summed axes, an
// empty sum — equal core's reference GEMM on budgets 1 and 2 (splits and dynamic chunks), and
// nothing outside the output's reach is written; an addon descriptor with malformed summed
// words is refused before anything is written.
import { CpuBackend, type CpuGemmRequest, type GemmOperand, referenceGemmProvider, Tensor } from '@tenferro/core';
import { randomValues, relativeError, seededRandom, toleranceFor } from '@tenferro/core/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeTask } from '../src/kernels/gemm.js';
import { planParts, summedOrientation } from '../src/gemm-provider.js';
import { createFaerProvider } from '../src/index.js';
import { DTS, binding } from './helpers.js';

const backends: CpuBackend[] = [];
beforeAll(async () => {
  for (const threads of [1, 2]) backends.push(await CpuBackend.create({ kind: 'faer', threads, providers: [createFaerProvider()] }));
}, 60_000); // two backends' workers start: slow on a loaded machine
afterAll(async () => {
  for (const b of backends) await b.close();
});

const components = (dtype: string) => (dtype === 'c64' || dtype === 'c128' ? 2 : 1);

describe('summed axes', () => {
  it('random summed requests equal the reference GEMM, budgets 1 and 2, nothing written outside the output', async () => {
    const faer = createFaerProvider().gemm!;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 30 }), fc.constantFrom(...DTS), fc.constantFrom(0, 1), async (seed, dtype, which) => {
        const rand = seededRandom(seed);
        const pick = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
        const [m, n, k] = [pick(1, 70), pick(1, 70), pick(1, 40)];
        const extents = rand() < 0.1 ? [pick(1, 3), 0] : rand() < 0.5 ? [pick(2, 9)] : [pick(1, 4), pick(2, 4)];
        const batch = rand() < 0.25 ? [pick(1, 3)] : [];
        const bsz = batch.reduce((a, b) => a * b, 1);
        // Operands: row- or column-major item matrices (leading dimension padded), the summed and
        // batch items after each other (in a random order of the two), a random offset.
        const operand = (rows: number, cols: number): { op: GemmOperand; summedStrides: number[]; size: number } => {
          const ld = (rand() < 0.5 ? rows : cols) + pick(0, 2);
          const rowMajor = ld >= cols && rand() < 0.5;
          const [rs, cs] = rowMajor ? [ld, 1] : [1, Math.max(ld, rows)];
          const span = (rows - 1) * rs + (cols - 1) * cs + 1;
          const offset = pick(0, 3);
          const summedStrides: number[] = [];
          let step = span;
          for (const e of extents) {
            summedStrides.push(step);
            step *= Math.max(1, e);
          }
          return { op: { buffer: new SharedArrayBuffer(8), offset, rowStride: rs, colStride: cs, batchStrides: batch.map(() => step) }, summedStrides, size: offset + step * bsz };
        };
        const withBuffer = (o: ReturnType<typeof operand>) => {
          const t = Tensor.fromArray(dtype, [o.size], randomValues(rand, dtype, o.size));
          return { ...o.op, offset: o.op.offset + t.offset, buffer: t.buffer };
        };
        const l = operand(m, k);
        const r = operand(k, n);
        const outRowMajor = rand() < 0.5;
        const oSize = m * n * bsz + 4;
        const out: GemmOperand = { buffer: new SharedArrayBuffer(8), offset: 2, rowStride: outRowMajor ? n : 1, colStride: outRowMajor ? 1 : m, batchStrides: batch.map(() => m * n) };
        const complex = components(dtype) === 2;
        const beta = rand() < 0.4 ? (complex ? [0, 0] : 0) : complex ? [0.5, -0.25] : 0.5;
        const req: CpuGemmRequest = {
          dtype, m, n, k, batch,
          lhs: withBuffer(l),
          rhs: withBuffer(r),
          out,
          alpha: complex ? [0.75, 0.5] : 0.75,
          beta: beta as CpuGemmRequest['beta'],
          conjLhs: complex && rand() < 0.5,
          conjRhs: complex && rand() < 0.5,
          summed: { extents, lhsStrides: l.summedStrides, rhsStrides: r.summedStrides },
        };
        const initial = randomValues(rand, dtype, oSize);
        const outFaer = Tensor.fromArray(dtype, [oSize], initial);
        const outRef = Tensor.fromArray(dtype, [oSize], initial);
        const b = backends[which]!;
        expect((await b.install((ctx) => faer.gemm(ctx, { ...req, out: { ...out, offset: out.offset + outFaer.offset, buffer: outFaer.buffer } }))).executed).toBe(true);
        expect((await b.install((ctx) => referenceGemmProvider.gemm(ctx, { ...req, out: { ...out, offset: out.offset + outRef.offset, buffer: outRef.buffer } }))).executed).toBe(true);
        const got = Array.from(outFaer.toArray() as number[]);
        const want = Array.from(outRef.toArray() as number[]);
        const label = JSON.stringify({ dtype, m, n, k, extents, batch, outRowMajor, threads: which + 1 });
        expect(relativeError(got.flat(), want.flat()), label).toBeLessThanOrEqual(toleranceFor(dtype));
        // Outside the output's elements (offset 2, m·n·batch of them) nothing changed.
        const c = components(dtype);
        expect(got.flat().slice(0, 2 * c), label).toEqual(initial.slice(0, 2 * c));
        expect(got.flat().slice((2 + m * n * bsz) * c), label).toEqual(initial.slice((2 + m * n * bsz) * c));
      }),
      { numRuns: 150, seed: 0x50ed },
    );
  });

  it('the tensor-network contraction C[i,l] = Σ A[i,j,k]·B[k,j,l] on row-major operands equals a direct sum, into column- and row-major outputs', async () => {
    // Thin items (k = d < 64) into blocks of C of at least 1,024 elements on 1 and 2 lanes: one
    // gathered K of d·d steps (several K blocks); A's (j, k) steps are affine, B's are not.
    const d = 48;
    const rand = seededRandom(0x7e45);
    for (const dtype of ['f64', 'f32'] as const) {
      const av = randomValues(rand, dtype, d ** 3) as number[];
      const bv = randomValues(rand, dtype, d ** 3) as number[];
      const rowMajor = (v: number[]) => {
        const t = Tensor.fromArray(dtype, [d ** 3], v);
        return Tensor.fromDescriptor({ dtype, shape: [d, d, d], strides: [d * d, d, 1], offset: t.offset, buffer: t.buffer });
      };
      const want: number[] = [];
      for (let l = 0; l < d; l++) {
        for (let i = 0; i < d; i++) {
          let s = 0;
          for (let j = 0; j < d; j++) for (let k = 0; k < d; k++) s += av[i * d * d + j * d + k]! * bv[k * d * d + j * d + l]!;
          want[l * d + i] = s; // column-major ('col')
        }
      }
      for (const b of backends) {
        const dims = { contracting: [[1, 2], [1, 0]] as [number[], number[]] };
        const c = await b.dotGeneral(rowMajor(av), rowMajor(bv), dims);
        expect(relativeError(Array.from(c.toTypedArray({ order: 'col' })), want)).toBeLessThanOrEqual(toleranceFor(dtype));
        const zeros = Tensor.zeros(dtype, [d * d]);
        const out = Tensor.fromDescriptor({ dtype, shape: [d, d], strides: [d, 1], offset: zeros.offset, buffer: zeros.buffer });
        await b.dotGeneralInto(out, rowMajor(av), rowMajor(bv), dims);
        expect(relativeError(Array.from(out.toTypedArray({ order: 'col' })), want)).toBeLessThanOrEqual(toleranceFor(dtype));
        c.dispose();
      }
    }
  });

  it('the addon refuses malformed summed words (count, extents, strides past the buffer) before writing', () => {
    const a = new Float64Array(64).fill(1);
    const c = new Float64Array(16).fill(7);
    const op = (buffer: SharedArrayBuffer): GemmOperand => ({ buffer, offset: 0, rowStride: 1, colStride: 4, batchStrides: [] });
    const sab = new SharedArrayBuffer(8);
    const task = (summed: CpuGemmRequest['summed']) =>
      describeTask({
        request: { dtype: 'f64', m: 4, n: 4, k: 4, batch: [], lhs: op(sab), rhs: op(sab), out: op(sab), alpha: 1, beta: 0, conjLhs: false, conjRhs: false, ...(summed ? { summed } : {}) },
        isa: -1, m0: 0, m1: 4, n0: 0, n1: 4, b0: 0, b1: 1,
      });
    const ok = task({ extents: [4], lhsStrides: [16], rhsStrides: [16] });
    expect(binding().gemm(ok, a, a, c)).toBe(0);
    expect(Array.from(c)).toEqual(new Array(16).fill(16));
    c.fill(7);
    for (const bad of [
      (d: Float64Array) => (d[d.length - 3] = 17), // lhs stride 17: item 3 reaches past 64 elements
      (d: Float64Array) => (d[d.length - 4] = -1), // a negative extent
      (d: Float64Array) => (d[d.length - 4] = 1.5), // a fractional extent
      (d: Float64Array) => (d[d.length - 5] = 2), // a count of 2 with words for 1
      (d: Float64Array) => (d[d.length - 5] = 99), // a count above the limit
    ]) {
      const d = Float64Array.from(ok);
      bad(d);
      expect(binding().gemm(d, a, a, c)).not.toBe(0);
      expect(Array.from(c)).toEqual(new Array(16).fill(7));
    }
  });

  it('a summed request the kernels run transposed splits N on the kernel MR and M on its NR', () => {
    const sab = new SharedArrayBuffer(8);
    const op = (rowStride: number, colStride: number): GemmOperand => ({ buffer: sab, offset: 0, rowStride, colStride, batchStrides: [] });
    const shape = { mr: 32, nr: 6 };
    // A[i,j,k]·B[k,j,l] on row-major operands, k = 64 (items run one by one): lhs rows not
    // unit-stride, rhs columns unit-stride — transposed whatever C's layout.
    const base = { dtype: 'f64' as const, m: 64, n: 64, k: 64, batch: [], out: op(1, 64), summed: { extents: [64], lhsStrides: [64], rhsStrides: [64] } };
    const transposed = { ...base, lhs: op(4096, 1), rhs: op(4096, 1) };
    expect(summedOrientation(transposed, shape)).toEqual({ mr: 6, nr: 32 });
    expect(planParts(transposed, 2, summedOrientation(transposed, shape), 0).map((p) => [p.n0, p.n1])).toEqual([
      [0, 32],
      [32, 64],
    ]);
    // 96 = three panels of 32 along N would split 64 + 32: M (granule 6) splits 48 + 48.
    const wide = { ...transposed, m: 96, n: 96 };
    expect(planParts(wide, 2, summedOrientation(wide, shape), 0).map((p) => [p.m0, p.m1, p.n0, p.n1])).toEqual([
      [0, 48, 0, 96],
      [48, 96, 0, 96],
    ]);
    // Thin items (k = 16 into 64×64, gathered into one K): C's layout decides, as in any GEMM.
    const thin = { ...transposed, k: 16 };
    expect(summedOrientation({ ...thin, out: op(64, 1) }, shape)).toEqual({ mr: 6, nr: 32 });
    expect(summedOrientation(thin, shape)).toEqual(shape);
    // Thin items into a small C run one by one again: lhs and rhs decide.
    expect(summedOrientation({ ...thin, m: 16, n: 16 }, shape)).toEqual({ mr: 6, nr: 32 });
    // Column-major lhs, or no summed axes, or a complex dtype: the kernel's own granules.
    expect(summedOrientation({ ...base, lhs: op(1, 64), rhs: op(4096, 1) }, shape)).toEqual(shape);
    expect(summedOrientation({ ...transposed, summed: undefined }, shape)).toEqual(shape);
    expect(summedOrientation({ ...transposed, dtype: 'c128' }, shape)).toEqual(shape);
  });
});
