// The native kernels against a naive f64 loop, called directly through the binding (on this
// thread), for every dtype and every ISA path this CPU supports: shapes around the micro-kernel
// tile (MR, NR) and the cache blocks (MC, KC), layouts of A/B/C (column-, row-major, general
// strides, broadcast inputs), conjugation, alpha/beta (beta = 0 over NaN), batches, task
// sub-ranges, and guard bands (no write outside the output view or sub-range).
import { describe, expect, it } from 'vitest';
import { type Case, DTS, binding, int, runCase, seededRandom } from './helpers.js';

const info = binding().info()!;
const isas = [2, 1, 0].filter((id) => binding().info(id) !== null);

function expectCase(c: Case): void {
  const r = runCase(c);
  const label = JSON.stringify(c);
  expect(r.status, label).toBe(0);
  expect(r.guardViolations, label).toBe(0);
  expect(r.error, label).toBeLessThanOrEqual(r.tolerance);
}

describe.each(isas.map((id) => [binding().info(id)!.isa, id] as const))('native GEMM, %s path', (_name, isa) => {
  const shape = binding().info(isa)!;
  for (const dtype of DTS) {
    const real = dtype === 'f32' || dtype === 'c64' ? shape.kernel.f32 : shape.kernel.f64;
    const bl = dtype === 'f32' || dtype === 'c64' ? shape.blocking.f32 : shape.blocking.f64;
    const complex = dtype === 'c64' || dtype === 'c128';
    // In complex units the engine's real M and K are doubled.
    const MR = complex ? real.mr / 2 : real.mr;
    const NR = real.nr;
    const MC = complex ? bl.mc / 2 : bl.mc;
    const KC = complex ? bl.kc / 2 : bl.kc;

    it(`${dtype}: sizes straddling MR=${MR}, NR=${NR}, MC=${MC}, KC=${KC}`, () => {
      const sizes: [number, number, number][] = [
        [MR - 1, NR + 1, 40],
        [MR, NR, 33],
        [MR + 1, NR - 1, 31],
        [2 * MR + 1, 3 * NR + 1, 29],
        [MC - 1, 2 * NR, 17],
        [MC + 1, NR + 2, 15],
        [MR + 3, NR + 1, KC - 1],
        [MR - 3, NR, KC + 1],
        [MR + 5, 2 * NR - 1, 2 * KC + 3],
      ];
      for (const [m, n, k] of sizes) {
        expectCase({ dtype, m: Math.max(m, 4), n: Math.max(n, 2), k, isa, beta: complex ? [0.5, -0.25] : 0.5, alpha: complex ? [0.75, 0.5] : -1.25 });
      }
    });

    it(`${dtype}: random shapes, layouts, conjugation, alpha/beta`, () => {
      const rand = seededRandom(0xfae7 + isa * 17 + DTS.indexOf(dtype));
      const layouts = ['col', 'row', 'strided', 'bcastRow', 'bcastCol'] as const;
      const outs = ['col', 'row', 'strided'] as const;
      for (let t = 0; t < 24; t++) {
        const big = t % 3 === 0;
        const m = big ? int(rand, 30, 140) : int(rand, 1, 40);
        const n = big ? int(rand, 20, 90) : int(rand, 1, 40);
        const k = big ? int(rand, 50, 2 * KC + 10) : int(rand, 0, 50);
        const betaKind = int(rand, 0, 2);
        const beta = betaKind === 0 ? (complex ? ([0, 0] as const) : 0) : complex ? ([rand() - 0.5, rand() - 0.5] as const) : rand() - 0.5;
        expectCase({
          dtype, m, n, k, isa,
          la: layouts[int(rand, 0, 4)]!, lb: layouts[int(rand, 0, 4)]!, lc: outs[int(rand, 0, 2)]!,
          alpha: complex ? [rand() - 0.5, rand() - 0.5] : rand() * 2 - 1,
          beta,
          conjA: complex && rand() < 0.5,
          conjB: complex && rand() < 0.5,
          nanC: betaKind === 0 && rand() < 0.5,
          seed: t + 1,
        });
      }
    });

    // Complex GEMMs take their own direct path, not the register-blocked one: for them the same
    // shapes (the real width of their component type) check that path instead, so no dtype's
    // case passes without running (#39).
    const smallTitle = complex
      ? `${dtype}: the shapes of the register-blocked small path (complex GEMMs take their own direct path) with every output layout, alpha/beta, ragged N`
      : `${dtype}: the register-blocked small path (M a multiple of the vector width, column-major A) with every output layout, alpha/beta, ragged N`;
    it(smallTitle, () => {
      const wide = dtype === 'f64' || dtype === 'c128';
      const W = shape.isa === 'avx512f' ? (wide ? 8 : 16) : shape.isa === 'portable' ? 1 : wide ? 4 : 8;
      const scalar = (x: number) => (complex ? ([x, x / 2] as const) : x);
      for (const mv of [1, 2, 3, 4]) {
        for (const n of [1, 2, 3, 5, 8]) {
          for (const [k, lc, beta] of [[1, 'col', 0], [7, 'row', 0.5], [3, 'strided', -1]] as const) {
            expectCase({ dtype, m: mv * W, n, k, isa, lb: n % 2 === 0 ? 'row' : 'col', lc, alpha: scalar(-0.75), beta: scalar(beta), nanC: beta === 0, seed: mv * 31 + n + k });
          }
        }
      }
      // A batch of tiny GEMMs, the tensor-network shape; and one above the small-work threshold
      // that still takes the direct path (N, K ≤ 64).
      expectCase({ dtype, m: W, n: W, k: W, batch: [5, 3], isa, beta: scalar(0.25), seed: 9 });
      expectCase({ dtype, m: 4 * W, n: 63, k: 64, batch: [2], isa, lc: 'strided', beta: scalar(-0.5), seed: 10 });
    });

    it(`${dtype}: batched, with task sub-ranges that leave the rest untouched`, () => {
      expectCase({ dtype, m: MR + 7, n: NR * 3 + 1, k: 37, batch: [2, 3], isa, beta: complex ? [1, 1] : 1 });
      expectCase({ dtype, m: 9, n: 5, k: 3, batch: [4], isa, la: 'row', lc: 'row' });
      const m = 2 * MR + 5;
      const n = 4 * NR + 3;
      expectCase({ dtype, m, n, k: 45, batch: [3], isa, part: { m0: 0, m1: m, n0: NR, n1: 3 * NR, b0: 0, b1: 3 } });
      expectCase({ dtype, m, n, k: 45, batch: [3], isa, part: { m0: MR, m1: m, n0: 0, n1: n, b0: 1, b1: 2 } });
      expectCase({ dtype, m, n, k: 45, batch: [3], isa, lc: 'row', part: { m0: 3, m1: m - 2, n0: 1, n1: n - 1, b0: 2, b1: 3 } });
    });
  }
});

describe('native binding', () => {
  it('reports the ISA path, kernel shapes, blocking and caches', () => {
    expect(['avx512f', 'avx2+fma', 'portable']).toContain(info.isa);
    expect(info.kernel.f64.mr).toBeGreaterThan(0);
    expect(info.blocking.f64.kc % 2).toBe(0);
    expect(info.cache.l1d).toBeGreaterThan(0);
  });

  it('refuses malformed or out-of-bounds requests with a status code, writing nothing', () => {
    const b = binding();
    const d = new Float64Array(27);
    expect(b.gemm(d.subarray(0, 5), new Float64Array(1), new Float64Array(1), new Float64Array(1))).toBe(1);
    // dtype f64, m=n=k=2, col-major, but C has only 3 elements.
    d.set([1, 2, 2, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 0, 0, 0, 0, 0, -1, 0, 2, 0, 2, 0, 1, 0]);
    const c = new Float64Array(3).fill(7);
    expect(b.gemm(d, new Float64Array(4), new Float64Array(4), c)).toBe(2);
    expect([...c]).toEqual([7, 7, 7]);
    // wrong array type for the dtype
    expect(b.gemm(d, new Float32Array(4), new Float64Array(4), new Float64Array(4))).toBe(1);
    // sub-range outside the request
    const e = d.slice();
    e[21] = 3;
    expect(b.gemm(e, new Float64Array(4), new Float64Array(4), new Float64Array(4))).toBe(5);
    // negative or fractional numbers
    const f = d.slice();
    f[5] = -1;
    expect(b.gemm(f, new Float64Array(4), new Float64Array(4), new Float64Array(4))).toBe(1);
    f[5] = 0.5;
    expect(b.gemm(f, new Float64Array(4), new Float64Array(4), new Float64Array(4))).toBe(1);
  });

  it('reads typed arrays over a SharedArrayBuffer (napi_get_typedarray_info)', () => {
    expectCase({ dtype: 'f64', m: 3, n: 2, k: 4 });
  });

  it('measures a positive FMA throughput', () => {
    expect(binding().fmaPeak(0.05)).toBeGreaterThan(0);
  });
});

// The grouped kernel task (faerGemmGroup): jobs run in order, each recorded in its ledger word
// after it has written; a refused job stops the task with its status as the error code, the jobs
// before it written and recorded, the ones after it neither.
describe('grouped kernel task', () => {
  it('runs and records every job; a refused job stops it with the status name, later jobs untouched', async () => {
    const { faerGemmGroup, packGemmGroupTask } = await import('../src/kernels/gemm.js');
    const n = 4;
    const mk = (values: number[]) => {
      const buffer = new SharedArrayBuffer(8 * values.length);
      new Float64Array(buffer).set(values);
      return buffer;
    };
    const a = mk(Array.from({ length: n * n }, (_, i) => i + 1));
    const eye = mk(Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 1 : 0)));
    const outs = [0, 1, 2].map(() => mk(new Array(n * n).fill(-1)));
    const op = (buffer: SharedArrayBuffer, offset = 0) => ({ buffer, offset, rowStride: 1, colStride: n, batchStrides: [] });
    const job = (out: SharedArrayBuffer, lhsOffset = 0) => ({
      dtype: 'f64' as const, m: n, n, k: n, batch: [], lhs: op(a, lhsOffset), rhs: op(eye), out: op(out), alpha: 1, beta: 0, conjLhs: false, conjRhs: false,
    });
    // Job 1 reaches past the end of A (forged: core would never send it).
    const jobs = [job(outs[0]!), job(outs[1]!, 1), job(outs[2]!)];
    const ledger = new Int32Array(new SharedArrayBuffer(12));
    const task = { jobs, indices: [0, 1, 2], ledger: { buffer: ledger.buffer as SharedArrayBuffer, byteOffset: 0, length: 3 }, isa: -1 };
    expect(() => faerGemmGroup(packGemmGroupTask(task))).toThrow(expect.objectContaining({ code: 'OutOfBounds' }));
    expect([...ledger]).toEqual([1, 0, 0]);
    expect([...new Float64Array(outs[0]!)]).toEqual(Array.from({ length: n * n }, (_, i) => i + 1));
    expect([...new Float64Array(outs[1]!)].every((v) => v === -1)).toBe(true);
    expect([...new Float64Array(outs[2]!)].every((v) => v === -1)).toBe(true);
    // Without the bad job, with a shared counter (claims in order on one lane): every job once.
    const ok = new Int32Array(new SharedArrayBuffer(12));
    faerGemmGroup(packGemmGroupTask({ jobs, indices: [2, 0], ledger: { buffer: ok.buffer as SharedArrayBuffer, byteOffset: 0, length: 3 }, isa: -1, counter: new SharedArrayBuffer(4) }));
    expect([...ok]).toEqual([1, 0, 1]);
    expect([...new Float64Array(outs[2]!)]).toEqual(Array.from({ length: n * n }, (_, i) => i + 1));
  });
});
