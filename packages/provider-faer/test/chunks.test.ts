// Dynamic chunks (native/src/gemm.cc, planChunks in src/gemm-provider.ts): the lanes of a split
// share the M or N range through one counter. Whatever the chunk size and however many lanes
// claim chunks, the result is the reference's, every element of the task's range exactly once,
// nothing outside it; malformed chunk arguments are refused before anything is written.
import { CpuBackend, Tensor } from '@tenferro/core';
import { naiveDotGeneral, randomValues, relativeError, seededRandom, toleranceFor } from '@tenferro/core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planChunks, planParts } from '../src/gemm-provider.js';
import { createFaerProvider } from '../src/index.js';
import { DTS, binding, runCase } from './helpers.js';

describe('dynamic chunks', () => {
  it('any chunk size, axis and number of lanes computes the reference result over the task range', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DTS),
        fc.integer({ min: 1, max: 90 }),
        fc.integer({ min: 1, max: 90 }),
        fc.integer({ min: 0, max: 60 }),
        fc.constantFrom(0 as const, 1 as const),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        (dtype, m, n, k, axis, size, calls, part) => {
          const complex = dtype === 'c64' || dtype === 'c128';
          const r = runCase({
            dtype, m, n, k, chunk: { axis, size, calls },
            lc: part ? 'row' : 'col',
            beta: complex ? [0.5, 0.25] : 0.5,
            ...(part ? { part: { m0: Math.floor(m / 3), m1: m, n0: 0, n1: Math.ceil(n / 2), b0: 0, b1: 1 } } : {}),
          });
          const label = JSON.stringify({ dtype, m, n, k, axis, size, calls, part });
          expect(r.status, label).toBe(0);
          expect(r.guardViolations, label).toBe(0);
          expect(r.error, label).toBeLessThanOrEqual(r.tolerance);
        },
      ),
      { numRuns: 60, seed: 0xc4a2 },
    );
  });

  it('a batched task is chunked within each item', () => {
    const r = runCase({ dtype: 'f64', m: 40, n: 33, k: 9, batch: [3], chunk: { axis: 1, size: 6, calls: 2 }, beta: 1 });
    expect(r.status).toBe(0);
    expect(r.guardViolations).toBe(0);
    expect(r.error).toBeLessThanOrEqual(r.tolerance);
  });

  it('refuses malformed chunk arguments with BadArguments, writing nothing; a used-up counter computes nothing', () => {
    const b = binding();
    const d = new Float64Array(27);
    d.set([1, 2, 2, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 0, 0, 0, 0, 0, -1, 0, 2, 0, 2, 0, 1, 0]);
    const a = new Float64Array([1, 2, 3, 4]);
    const c = new Float64Array(4).fill(7);
    const counter = new Int32Array(new SharedArrayBuffer(4));
    const gemm = (...rest: unknown[]) => (b.gemm as (...x: unknown[]) => number)(d, a, a, c, undefined, ...rest);
    for (const bad of [
      [counter, 2, 1],
      [counter, 0, 0],
      [counter, 0, 1.5],
      [counter, 0, -1],
      [counter, 0, 2 ** 31],
      [counter, 0],
      [counter, '0', 1],
      [new Int32Array(0), 0, 1],
      [new Uint32Array(1), 0, 1],
      [new Float64Array(1), 1, 1],
      [{}, 1, 1],
    ]) {
      expect(gemm(...bad), JSON.stringify(bad)).toBe(1);
      expect([...c]).toEqual([7, 7, 7, 7]);
    }
    counter[0] = 2; // chunks 0 and 1 (size 1 along M) already claimed by other lanes
    expect(gemm(counter, 0, 1)).toBe(0);
    expect([...c]).toEqual([7, 7, 7, 7]);
    counter[0] = -5; // a counter that wrapped: nothing to claim
    expect(gemm(counter, 0, 1)).toBe(0);
    expect([...c]).toEqual([7, 7, 7, 7]);
    counter[0] = 1; // row 1 only
    expect(gemm(counter, 0, 1)).toBe(0);
    expect([...c]).toEqual([7, 2 * 1 + 4 * 2, 7, 2 * 3 + 4 * 4]); // row 1 of A·A, A = [[1, 3], [2, 4]]
    expect(counter[0]).toBe(3);
  });

  it('planChunks: chunks only for splits of M or N of medium size, on the granule', () => {
    const shape = { mr: 32, nr: 6 };
    const plan = (m: number, n: number, k: number, batch: number[] = []) => {
      const request = { m, n, k, batch, dtype: 'f64' as const };
      return planChunks(request, planParts(request, 2, shape, 0), shape);
    };
    expect(plan(256, 256, 256)).toEqual({ axis: 1, size: 132 }); // one chunk per lane, on NR = 6
    expect(plan(300, 100, 256)).toEqual({ axis: 0, size: 160 }); // on MR = 32
    expect(plan(1024, 1024, 1024)).toBeUndefined();
    expect(plan(20, 20, 20, [8])).toBeUndefined(); // split over batches
    const one = { m: 256, n: 256, k: 256, batch: [] };
    expect(planChunks(one, planParts(one, 1, shape, 0), shape)).toBeUndefined();
  });

  it('a 2-thread backend computes split medium GEMMs in shared chunks (every dtype, both axes)', async () => {
    const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [createFaerProvider({ parallelMinWork: 0 })] });
    try {
      for (const dtype of ['f64', 'f32', 'c128', 'c64'] as const) {
        for (const [m, k, n] of [[97, 61, 150], [150, 33, 41]] as const) {
          const rand = seededRandom(m + n + k);
          const a = Tensor.fromArray(dtype, [m, k], randomValues(rand, dtype, m * k));
          const b = Tensor.fromArray(dtype, [k, n], randomValues(rand, dtype, k * n));
          const got = await backend.matmul(a, b);
          const want = naiveDotGeneral(a, b, { contracting: [[1], [0]] });
          expect(relativeError((got.toArray() as number[]).map(Number), want.values), `${dtype} ${m}x${k}x${n}`).toBeLessThanOrEqual(toleranceFor(dtype));
        }
      }
    } finally {
      await backend.close();
    }
  });
});
