// Extent-1 sides of a GEMM request carry their dense stride, never 0 (#40): a provider that
// accepts "one of the strides is 1" (the provider author guide's check) or a BLAS-style leading
// dimension runs every shape with a unit side — 1×1 operands, outer products (k = 1), dot
// products (no free axis at all), matrix-vector products, batches of 1×1 items — on the operands
// as they are. Before #40 a 1×1 operand had strides (0, 0), core's own canonical retry (R105)
// included, and such a provider ended the call with ProviderUnsupported.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, type CpuGemmProvider, type CpuGemmRequest, CpuProviderBundle, type GemmOperand, referenceGemmProvider, referenceLayoutProvider, Tensor, Unsupported } from '../src/index.js';
import { naiveDotGeneral, relativeError } from '../src/testing/index.js';
import { blasExpressible } from './helpers.js';

/** The guide's decline rule over the reference kernel: dense-ish operands only, every request recorded. */
function unitStrideGemm(declineFirst = false): { provider: CpuGemmProvider; calls: CpuGemmRequest[] } {
  const calls: CpuGemmRequest[] = [];
  const unitStride = (o: GemmOperand): boolean => o.rowStride === 1 || o.colStride === 1;
  const provider: CpuGemmProvider = {
    name: 'unit-stride only',
    executionCapabilities: () => referenceGemmProvider.executionCapabilities(),
    async gemm(ctx, req) {
      calls.push(req);
      if (declineFirst && calls.length === 1) return Unsupported.layout('lhs');
      if (!unitStride(req.lhs)) return Unsupported.layout('lhs');
      if (!unitStride(req.rhs)) return Unsupported.layout('rhs');
      if (!unitStride(req.out)) return Unsupported.layout('output');
      return referenceGemmProvider.gemm(ctx, req);
    },
  };
  return { provider, calls };
}

let base: CpuBackend;
beforeAll(async () => {
  base = await CpuBackend.create({ threads: 1 });
});
afterAll(async () => {
  await base.close();
});

const values = (n: number, seed: number) => Array.from({ length: n }, (_, i) => ((i * 7 + seed) % 11) - 5);
const dense = (shape: number[], seed: number) => Tensor.fromArray('f64', shape, values(shape.reduce((p, e) => p * e, 1), seed));

const CASES: { name: string; lhs: number[]; rhs: number[]; dims: { contracting: [number[], number[]]; batch?: [number[], number[]] } }[] = [
  { name: '1×1 · 1×1', lhs: [1, 1], rhs: [1, 1], dims: { contracting: [[1], [0]] } },
  { name: 'outer product (k = 1): 5×1 · 1×4', lhs: [5, 1], rhs: [1, 4], dims: { contracting: [[1], [0]] } },
  { name: 'row times column (1×1 output): 1×6 · 6×1', lhs: [1, 6], rhs: [6, 1], dims: { contracting: [[1], [0]] } },
  { name: 'dot product (no free axis): [6] · [6]', lhs: [6], rhs: [6], dims: { contracting: [[0], [0]] } },
  { name: 'matrix-vector: 3×6 · [6]', lhs: [3, 6], rhs: [6], dims: { contracting: [[1], [0]] } },
  { name: 'vector-matrix: [6] · 6×3', lhs: [6], rhs: [6, 3], dims: { contracting: [[0], [0]] } },
  { name: 'a batch of 1×1 items: 1×1×3 · 1×1×3', lhs: [1, 1, 3], rhs: [1, 1, 3], dims: { contracting: [[1], [0]], batch: [[2], [2]] } },
];

describe('extent-1 strides of GEMM requests (#40)', () => {
  it.each(CASES)('$name runs on a provider that wants one unit stride, in one call, every side BLAS-expressible with no zero stride', async ({ lhs, rhs, dims }) => {
    const { provider, calls } = unitStrideGemm();
    const h = base.withProviderBundle(CpuProviderBundle.customBuilder().gemmProvider(provider).layoutTransformProvider(referenceLayoutProvider).build());
    const [a, b] = [dense(lhs, 1), dense(rhs, 2)];
    const got = await h.dotGeneral(a, b, dims);
    expect(relativeError(got.toArray() as number[], naiveDotGeneral(a, b, dims).values)).toBeLessThan(1e-12);
    // Dense inputs: the direct plan is accepted as it is, no canonical retry.
    expect(calls).toHaveLength(1);
    const r = calls[0]!;
    for (const [what, o, rows, cols] of [['lhs', r.lhs, r.m, r.k], ['rhs', r.rhs, r.k, r.n], ['out', r.out, r.m, r.n]] as const) {
      expect(o.rowStride, `${what} row stride`).not.toBe(0);
      expect(o.colStride, `${what} column stride`).not.toBe(0);
      expect(blasExpressible(rows, cols, o.rowStride, o.colStride), `${what} ${rows}×${cols} (${o.rowStride}, ${o.colStride})`).toBe(true);
    }
  });

  it("core's canonical retry (R105) of 1×1 operands is dense, (1, 1), and the provider runs it", async () => {
    const { provider, calls } = unitStrideGemm(true);
    const h = base.withProviderBundle(CpuProviderBundle.customBuilder().gemmProvider(provider).layoutTransformProvider(referenceLayoutProvider).build());
    const [a, b] = [dense([1, 1], 3), dense([1, 1], 4)];
    const dims = { contracting: [[1], [0]] as [number[], number[]] };
    const got = await h.dotGeneral(a, b, dims);
    expect(got.toArray()).toEqual(naiveDotGeneral(a, b, dims).values);
    // The first call declined layout(lhs); the second is the retry on canonical operands.
    expect(calls).toHaveLength(2);
    expect(calls[1]!.lhs.buffer).not.toBe(a.buffer);
    for (const o of [calls[1]!.lhs, calls[1]!.rhs, calls[1]!.out]) expect([o.rowStride, o.colStride]).toEqual([1, 1]);
  });
});
