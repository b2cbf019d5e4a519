// Property tests of the unpacked small-matrix kernels (native/include/gemm_engine.h: small_real,
// small_complex) against the naive f64 reference of helpers.ts, on every ISA path this CPU
// supports: odd sizes 1..130 (masked row tails, every column remainder), column-major,
// row-major (taken through Cᵀ = Bᵀ·Aᵀ), strided and broadcast operands, every output layout,
// alpha/beta (beta = 0 over NaN), conjugation, batches, all four dtypes. Each case also checks that
// nothing outside the output view changes. Sizes stay under the default thresholds
// (m·n·k ≤ 256³ real, ≤ 64³ complex; for real dtypes, B's k·n within smallStreamBytes) so the
// small kernels are what runs (the helpers' strides are never whole multiples of 4 KiB).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Dt, DTS, type Layout, binding, runCase } from './helpers.js';

const isas = [2, 1, 0].filter((id) => binding().info(id) !== null);
const inputs: readonly Layout[] = ['col', 'row', 'strided', 'bcastRow', 'bcastCol'];
const outputs = ['col', 'row', 'strided'] as const;

function property(dtype: Dt, isa: number) {
  const complex = dtype === 'c64' || dtype === 'c128';
  const cap = complex ? 64 ** 3 : 130 ** 3;
  const scalar = fc.double({ min: -2, max: 2, noNaN: true });
  const streamBytes = binding().info(isa)!.blocking[dtype === 'f32' || dtype === 'c64' ? 'f32' : 'f64'].smallStreamBytes;
  return fc.property(
    fc.integer({ min: 1, max: 130 }),
    fc.integer({ min: 1, max: 130 }),
    fc.integer({ min: 1, max: 130 }),
    fc.record({
      la: fc.constantFrom(...inputs),
      lb: fc.constantFrom(...inputs),
      lc: fc.constantFrom(...outputs),
      alpha: fc.tuple(scalar, scalar),
      beta: fc.oneof(fc.constant([0, 0] as [number, number]), fc.tuple(scalar, scalar)),
      conjA: fc.boolean(),
      conjB: fc.boolean(),
      batch: fc.constantFrom([], [], [2]),
      seed: fc.integer({ min: 1, max: 1 << 20 }),
    }),
    (m, n, k0, o) => {
      // Keep the product under the small-kernel threshold (and the JS reference quick).
      const stream = complex ? Infinity : Math.floor(streamBytes / ((dtype === 'f32' ? 4 : 8) * Math.max(m, n)));
      const k = Math.max(1, Math.min(k0, stream, Math.floor(Math.min(cap, 400_000) / (m * n))));
      const zeroBeta = o.beta[0] === 0 && o.beta[1] === 0;
      const r = runCase({
        dtype, m, n, k, isa, la: o.la, lb: o.lb, lc: o.lc, batch: o.batch, seed: o.seed,
        alpha: complex ? o.alpha : o.alpha[0],
        beta: complex ? o.beta : o.beta[0],
        conjA: complex && o.conjA,
        conjB: complex && o.conjB,
        nanC: zeroBeta,
      });
      const label = JSON.stringify({ dtype, isa, m, n, k, ...o });
      expect(r.status, label).toBe(0);
      expect(r.guardViolations, label).toBe(0);
      expect(r.error, label).toBeLessThanOrEqual(r.tolerance);
    },
  );
}

describe.each(isas.map((id) => [binding().info(id)!.isa, id] as const))('small-matrix kernels, %s path', (_name, isa) => {
  it('the default thresholds send these sizes to the small kernels', () => {
    const { blocking } = binding().info(isa)!;
    for (const b of [blocking.f32, blocking.f64]) {
      expect(b.small).toBe(256 ** 3);
      expect(b.smallComplex).toBe(64 ** 3);
    }
  });

  for (const dtype of DTS) {
    it(`${dtype}: agrees with the reference on random shapes 1..130, layouts, alpha/beta, conjugation`, () => {
      fc.assert(property(dtype, isa), { numRuns: 30, seed: 0x5a11 + isa * 7 + DTS.indexOf(dtype) });
    });
  }

  // Batches whose items stream from memory (count × item bytes above half of L2, items of at least
  // 4 KiB with dense operands): the small kernel prefetches each next item while one computes
  // (gemm_engine.h, Prefetch). The prefetch changes no value; every item, partial batch range and
  // orientation must still agree with the reference, and nothing outside the outputs may change.
  it('real batches large enough to prefetch the next item agree with the reference', () => {
    const l2 = binding().info(isa)!.cache.l2;
    fc.assert(
      fc.property(
        fc.constantFrom<Dt>('f64', 'f32'),
        fc.integer({ min: 16, max: 40 }),
        fc.integer({ min: 16, max: 40 }),
        fc.integer({ min: 16, max: 40 }),
        fc.record({
          la: fc.constantFrom<Layout>('col', 'row'),
          lb: fc.constantFrom<Layout>('col', 'row'),
          lc: fc.constantFrom('col', 'row', 'strided'),
          beta: fc.constantFrom(0, 0.5),
          twoAxes: fc.boolean(),
          cut: fc.integer({ min: 0, max: 3 }),
          seed: fc.integer({ min: 1, max: 1 << 20 }),
        }),
        (dtype, m, n, k, o) => {
          const bytes = (dtype === 'f32' ? 4 : 8) * (m * k + k * n + m * n);
          const count = Math.ceil((0.5 * l2) / bytes) + 3;
          const batch = o.twoAxes ? [2, Math.ceil(count / 2)] : [count];
          const batches = batch.reduce((x, y) => x * y, 1);
          const part = { m0: 0, m1: m, n0: 0, n1: n, b0: o.cut, b1: batches - o.cut };
          const r = runCase({ dtype, m, n, k, isa, la: o.la, lb: o.lb, lc: o.lc, batch, part, seed: o.seed, alpha: 1.5, beta: o.beta, nanC: o.beta === 0 });
          const label = JSON.stringify({ dtype, isa, m, n, k, batch, ...o });
          expect(r.status, label).toBe(0);
          expect(r.guardViolations, label).toBe(0);
          expect(r.error, label).toBeLessThanOrEqual(r.tolerance);
        },
      ),
      { numRuns: 12, seed: 0x9f3 + isa },
    );
  });

  it('every row tail and column remainder of the register tile (m = 1..2·MR+1 at n = 1..2·NR+1)', () => {
    const info = binding().info(isa)!;
    for (const dtype of ['f64', 'f32', 'c128', 'c64'] as const) {
      const real = dtype === 'f32' || dtype === 'c64' ? info.kernel.f32 : info.kernel.f64;
      const complex = dtype === 'c64' || dtype === 'c128';
      const mr = complex ? real.mr / 2 : real.mr;
      for (let m = 1; m <= 2 * mr + 1; m += m < 4 ? 1 : Math.max(1, Math.floor(mr / 5))) {
        for (let n = 1; n <= 2 * real.nr + 1; n++) {
          const r = runCase({ dtype, m, n, k: 5, isa, lc: n % 3 === 0 ? 'row' : 'col', beta: complex ? [0.5, -1] : 0.5, alpha: complex ? [1, 0.5] : 2, seed: m * 97 + n });
          expect(r.status).toBe(0);
          expect(r.guardViolations, JSON.stringify({ dtype, m, n })).toBe(0);
          expect(r.error, JSON.stringify({ dtype, m, n })).toBeLessThanOrEqual(r.tolerance);
        }
      }
    }
  });
});
