import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONTRACTION_DTYPES,
  CpuBackend,
  type CpuGemmProvider,
  type CpuGemmRequest,
  CpuProviderBundle,
  referenceGemmProvider,
  referenceLayoutProvider,
  Tensor,
  Unsupported,
  validateGemmRequest,
} from '../src/index.js';
import { naiveDotGeneral, randomView, relativeError, seededRandom, toleranceFor } from '../src/testing/index.js';
import { expectCode } from './helpers.js';

/**
 * A GEMM provider running the reference one, recording every request; `summed` says whether it
 * declares `summedAxes`, `declineSummed` makes it decline every request that has summed axes.
 */
function recordingGemm(summed: boolean, declineSummed = false) {
  const calls: CpuGemmRequest[] = [];
  const provider: CpuGemmProvider = {
    name: `recording (summed ${summed}, declines summed ${declineSummed}, ${Math.random()})`,
    executionCapabilities: () => referenceGemmProvider.executionCapabilities(),
    declaredSupport: () => ({ ...referenceGemmProvider.declaredSupport!(), summedAxes: summed }),
    async gemm(ctx, req) {
      calls.push(req);
      if (declineSummed && req.summed !== undefined) return Unsupported.layout('lhs');
      return referenceGemmProvider.gemm(ctx, req);
    },
  };
  return { provider, calls };
}

let base: CpuBackend;
beforeAll(async () => {
  base = await CpuBackend.create({ threads: 1 });
}, 60_000); // a loaded machine starts workers slowly
afterAll(async () => {
  await base.close();
});

const withGemm = (gemm: CpuGemmProvider) => base.withProviderBundle(CpuProviderBundle.customBuilder().gemmProvider(gemm).layoutTransformProvider(referenceLayoutProvider).build());

/** Row-major A[i,j,k] and B[k,j,l] (strides [d², d, 1]) as in provider-tprims's contraction bench, with small exact values. */
function rowMajor(d: number, seed: number, dtype: 'f64' | 'c128' = 'f64'): Tensor {
  const rand = seededRandom(seed);
  const components = dtype === 'c128' ? 2 : 1;
  const data = Array.from({ length: d ** 3 * components }, () => Math.floor(rand() * 16 - 8) / 4);
  return Tensor.fromArray(dtype, [d, d, d], data).permute([2, 1, 0]);
}
const TN = { contracting: [[1, 2], [1, 0]] as [number[], number[]] };

describe("dot-general's summed plan (contracting axes that do not fuse are summed by the GEMM provider)", () => {
  it('sends A[i,j,k]·B[k,j,l] (row-major) as one GEMM, k fused, j summed, no copy — and the result equals the oracle', async () => {
    const d = 16;
    const A = rowMajor(d, 1);
    const B = rowMajor(d, 2);
    const { provider, calls } = recordingGemm(true);
    const got = await withGemm(provider).dotGeneral(A, B, TN);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.lhs.buffer).toBe(A.buffer);
    expect(calls[0]!.rhs.buffer).toBe(B.buffer);
    expect(calls[0]!.k).toBe(d);
    expect(calls[0]!.summed).toEqual({ extents: [d], lhsStrides: [d], rhsStrides: [d] });
    expect(relativeError(got.toArray() as number[], naiveDotGeneral(A, B, TN).values)).toBeLessThan(1e-14);
  });

  it('a provider that does not declare summedAxes gets the copy path (never a summed request)', async () => {
    const A = rowMajor(16, 3);
    const B = rowMajor(16, 4);
    const { provider, calls } = recordingGemm(false);
    const got = await withGemm(provider).dotGeneral(A, B, TN);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.summed).toBeUndefined();
    expect(calls[0]!.k).toBe(256);
    expect(relativeError(got.toArray() as number[], naiveDotGeneral(A, B, TN).values)).toBeLessThan(1e-14);
  });

  it('a provider declaring summedAxes that declines a summed request falls back to the copy path, warned once per provider', async () => {
    const A = rowMajor(16, 5, 'c128');
    const B = rowMajor(16, 6, 'c128');
    const { provider, calls } = recordingGemm(true, true);
    const h = withGemm(provider);
    const warnings: Error[] = [];
    const listen = (w: Error) => void warnings.push(w);
    process.on('warning', listen);
    try {
      for (let round = 0; round < 2; round++) {
        const got = await h.dotGeneral(A, B, TN, { conjLhs: true });
        expect(relativeError(got.toArray() as number[], naiveDotGeneral(A, B, TN, { conjLhs: true }).values)).toBeLessThan(1e-14);
      }
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', listen);
    }
    expect(calls.map((c) => c.summed !== undefined)).toEqual([true, false, true, false]);
    expect(calls[1]!.k).toBe(256);
    expect(warnings.filter((w) => (w as { code?: string }).code === 'TENFERRO_SUMMED_FALLBACK')).toHaveLength(1);
  });

  it('the cost model: thin summed items into a large output take the summed plan; thick ones with many output updates and a small operand to copy keep the copy', async () => {
    // Three contracting axes that fuse only one at a time (lhs row-major, rhs with them reversed).
    const rand = seededRandom(9);
    const values = (n: number) => Array.from({ length: n }, () => Math.floor(rand() * 16 - 8) / 4);
    const dims = { contracting: [[1, 2, 3], [2, 1, 0]] as [number[], number[]] };
    // Extents 4, 4, 4 into a 64×64 output: k = 4 and 16 items, thin — gathered into one K by the
    // provider (provider-faer), so the summed plan is taken whatever the output size.
    const A = Tensor.fromArray('f64', [4, 4, 4, 64], values(4096)).permute([3, 2, 1, 0]); // [m, a, b, c], row-major
    const B = Tensor.fromArray('f64', [64, 4, 4, 4], values(4096)).permute([3, 2, 1, 0]); // [c, b, a, n], row-major
    const { provider, calls } = recordingGemm(true);
    const got = await withGemm(provider).dotGeneral(A, B, dims);
    expect(calls.map((c) => [c.k, c.summed?.extents.reduce((x, y) => x * y, 1)])).toEqual([[4, 16]]);
    expect(relativeError(got.toArray() as number[], naiveDotGeneral(A, B, dims).values)).toBeLessThan(1e-14);
    // Extents 64, 4, 4 into a 256×64 output: k = 64 and 16 items, each a pass over the output
    // (2·16·256·64 element updates) against a copy of the 65,536-element rhs: the copy is kept.
    const A2 = Tensor.fromArray('f64', [4, 4, 64, 256], values(262144)).permute([3, 2, 1, 0]); // [m, a, b, c]
    const B2 = Tensor.fromArray('f64', [64, 64, 4, 4], values(65536)).permute([3, 2, 1, 0]); // [c, b, a, n]
    const { provider: p2, calls: c2 } = recordingGemm(true);
    const copied = await withGemm(p2).dotGeneral(A2, B2, dims);
    expect(c2).toHaveLength(1);
    expect(c2[0]!.summed).toBeUndefined();
    expect(c2[0]!.k).toBe(1024);
    expect(relativeError(copied.toArray() as number[], naiveDotGeneral(A2, B2, dims).values)).toBeLessThan(1e-13);
  });

  it('property: random contractions of permuted and strided views equal the oracle on every path (summed, copy, declined summed), with alpha and beta', async () => {
    const paths = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 30 }), fc.constantFrom(...CONTRACTION_DTYPES), fc.constantFrom('summed', 'undeclared', 'declined'), async (seed, dtype, mode) => {
        const rand = seededRandom(seed);
        const pick = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
        // Contracting pairs: one longer, one or two short ones.
        const contracting = [pick(4, 20), ...Array.from({ length: pick(1, 2) }, () => pick(1, 3))];
        const lhsFree = Array.from({ length: pick(0, 2) }, () => pick(1, 4));
        const rhsFree = Array.from({ length: pick(0, 2) }, () => pick(1, 4));
        const batch = rand() < 0.3 ? [pick(1, 3)] : [];
        // Axes of each operand in a random order: the dims name them by position.
        const shuffle = (n: number) => {
          const p = Array.from({ length: n }, (_, i) => i);
          for (let i = n - 1; i > 0; i--) {
            const j = Math.floor(rand() * (i + 1));
            [p[i], p[j]] = [p[j]!, p[i]!];
          }
          return p;
        };
        const lhsRoles = [...lhsFree.map((e) => ['f', e] as const), ...contracting.map((e, i) => ['c', e, i] as const), ...batch.map((e, i) => ['b', e, i] as const)];
        const rhsRoles = [...contracting.map((e, i) => ['c', e, i] as const), ...rhsFree.map((e) => ['f', e] as const), ...batch.map((e, i) => ['b', e, i] as const)];
        const lp = shuffle(lhsRoles.length);
        const rp = shuffle(rhsRoles.length);
        const lhsAxes = lp.map((i) => lhsRoles[i]!);
        const rhsAxes = rp.map((i) => rhsRoles[i]!);
        const find = (axes: typeof lhsAxes, kind: 'c' | 'b', i: number) => axes.findIndex((a) => a[0] === kind && a[2] === i);
        const dims = {
          contracting: [contracting.map((_, i) => find(lhsAxes, 'c', i)), contracting.map((_, i) => find(rhsAxes, 'c', i))] as [number[], number[]],
          ...(batch.length > 0 ? { batch: [[find(lhsAxes, 'b', 0)], [find(rhsAxes, 'b', 0)]] as [number[], number[]] } : {}),
        };
        // Half the time the operands are dense in their own axis order (row-major-like: the
        // summed plan's case), else random views (permuted, offset, stepped).
        const operand = (shape: number[]) => (rand() < 0.5 ? randomView(rand, dtype, shape, { strided: false }) : randomView(rand, dtype, shape, { strided: true }));
        const lhs = operand(lhsAxes.map((a) => a[1]));
        const rhs = operand(rhsAxes.map((a) => a[1]));
        const complex = dtype === 'c64' || dtype === 'c128';
        const conj = complex ? { conjLhs: rand() < 0.5, conjRhs: rand() < 0.5 } : {};
        const { provider, calls } = recordingGemm(mode !== 'undeclared', mode === 'declined');
        const h = withGemm(provider);
        const prod = naiveDotGeneral(lhs, rhs, dims, conj);
        const into = rand() < 0.5;
        let got: number[];
        let want = prod.values;
        if (into) {
          // alpha and beta on a caller-owned output holding values.
          const out = randomView(rand, dtype, prod.shape, { strided: false });
          const old = (out.toArray() as number[]).map(Number);
          const alpha = complex ? ([0.5, -0.25] as [number, number]) : 0.5;
          const beta = complex ? ([2, 0.5] as [number, number]) : 2;
          await h.dotGeneralInto(out, lhs, rhs, dims, { ...conj, alpha, beta });
          got = (out.toArray() as number[]).map(Number);
          want = complex
            ? prod.values.map((_, e) => {
                const c = e >> 1;
                const [pr, pi, or, oi] = [prod.values[2 * c]!, prod.values[2 * c + 1]!, old[2 * c]!, old[2 * c + 1]!];
                return e % 2 === 0 ? 0.5 * pr + 0.25 * pi + 2 * or - 0.5 * oi : 0.5 * pi - 0.25 * pr + 2 * oi + 0.5 * or;
              })
            : prod.values.map((v, e) => 0.5 * v + 2 * old[e]!);
        } else {
          got = ((await h.dotGeneral(lhs, rhs, dims, conj)).toArray() as number[]).map(Number);
        }
        expect(relativeError(got, want), `${dtype} ${mode} ${JSON.stringify({ lhs: lhs.shape, ls: lhs.strides, rhs: rhs.shape, rs: rhs.strides, dims })}`).toBeLessThanOrEqual(
          toleranceFor(dtype),
        );
        if (mode === 'undeclared') expect(calls.every((c) => c.summed === undefined)).toBe(true);
        for (const c of calls) if (c.summed !== undefined) paths.add(`${mode}:summed`);
        if (calls.some((c) => c.summed === undefined)) paths.add(`${mode}:other`);
      }),
      { numRuns: 120, seed: 0x5e3d },
    );
    // Every path was taken by some case (the property checked each of them).
    for (const p of ['summed:summed', 'undeclared:other', 'declined:summed', 'declined:other']) expect(paths).toContain(p);
  });

  it('validateGemmRequest checks summed axes: lengths, integers, and the reach they add', async () => {
    const buffer = new SharedArrayBuffer(8 * 8);
    const operand = { buffer, offset: 0, rowStride: 1, colStride: 2, batchStrides: [] };
    const req: CpuGemmRequest = { dtype: 'f64', m: 2, n: 2, k: 2, batch: [], lhs: operand, rhs: operand, out: operand, alpha: 1, beta: 0, conjLhs: false, conjRhs: false };
    expect(validateGemmRequest('t', { ...req, summed: { extents: [2], lhsStrides: [4], rhsStrides: [4] } })).toBe(8);
    await expectCode(() => validateGemmRequest('t', { ...req, summed: { extents: [2], lhsStrides: [5], rhsStrides: [4] } }), 'ViewOutOfBounds');
    await expectCode(() => validateGemmRequest('t', { ...req, summed: { extents: [2], lhsStrides: [4], rhsStrides: [] } }), 'InvalidArgument');
    await expectCode(() => validateGemmRequest('t', { ...req, summed: { extents: [2], lhsStrides: [-1], rhsStrides: [4] } }), 'InvalidArgument');
    await expectCode(() => validateGemmRequest('t', { ...req, summed: { extents: [2 ** 27, 2 ** 27], lhsStrides: [0, 0], rhsStrides: [0, 0] } }), 'IntegerOverflow');
    await expectCode(() => validateGemmRequest('t', { ...req, summed: 3 as never }), 'InvalidArgument');
    // An empty sum reads neither operand: any strides pass.
    expect(validateGemmRequest('t', { ...req, summed: { extents: [0], lhsStrides: [1000], rhsStrides: [1000] } })).toBe(8);
  });
});
