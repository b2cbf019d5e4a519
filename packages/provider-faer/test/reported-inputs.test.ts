// The provider-blas crash report (a batch stride of NaN, 1e19 or 2^63 with an output offset of
// 10^6), applied to provider-faer: its addon refuses such descriptors on its own, and its
// provider refuses such requests first with a typed error, before any kernel task.
import { CpuBackend, type CpuGemmRequest, type GemmOperand, Tensor, TenferroError } from '@tenferro/core';
import { forgingGemmProvider } from '@tenferro/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaerProvider } from '../src/index.js';
import { DESC, GemmStatus } from '../src/native/binding.js';
import { validateGemmRequest } from '@tenferro/core';
import { binding } from './helpers.js';

const BAD = [Number.NaN, 1e19, 2 ** 63, -1, Infinity, -Infinity, 0.5, 2 ** 53 + 2];

/** f64 2x2x2, column-major, one batch axis of extent 2; `set` edits the descriptor. */
function desc(set: (d: Float64Array) => void, rank = 1): Float64Array {
  const d = new Float64Array(DESC.HEADER + 4 * rank);
  d.set([1, 2, 2, 2, 0, 1, 2, 0, 1, 2, 1e6, 1, 2, 1, 0, 0, 0, 0, 0, -1, 0, 2, 0, 2, 0, 2 ** rank, rank]);
  for (let t = 0; t < rank; t++) {
    d[DESC.HEADER + t] = 2;
    d[DESC.HEADER + rank + t] = 4;
    d[DESC.HEADER + 2 * rank + t] = 4;
    d[DESC.HEADER + 3 * rank + t] = 4;
  }
  set(d);
  return d;
}

describe('the addon refuses the reported descriptors by itself', () => {
  const f64 = (n: number) => new Float64Array(new SharedArrayBuffer(8 * n));

  it('a batch stride, offset, stride or extent that is NaN, ±Infinity, 1e19, 2^63, negative or fractional → BadArguments, nothing written', () => {
    const c = f64(64).fill(7);
    for (const value of BAD) {
      for (const at of [DESC.HEADER + 3, DESC.HEADER + 1, DESC.offC, DESC.rsA, DESC.csC, DESC.m, DESC.HEADER, DESC.m1, DESC.b1]) {
        expect(binding().gemm(desc((d) => (d[at] = value)), f64(64), f64(64), c), `entry ${at} = ${value}`).toBe(GemmStatus.BadArguments);
      }
    }
    expect(c.every((x) => x === 7)).toBe(true);
  });

  it('the conjugation flags and the ISA must be exactly one of their values', () => {
    for (const value of [2, 0.5, -1, Number.NaN]) {
      expect(binding().gemm(desc((d) => (d[DESC.conjA] = value)), f64(64), f64(64), f64(1 << 21))).toBe(GemmStatus.BadArguments);
    }
    for (const value of [3, -2, 0.5, Number.NaN]) {
      expect(binding().gemm(desc((d) => (d[DESC.isa] = value)), f64(64), f64(64), f64(1 << 21))).toBe(GemmStatus.BadArguments);
    }
  });

  it('valid but far-reaching values are OutOfBounds: offset 10^6, strides of 2^53 on 32 axes (a 64-bit sum would wrap)', () => {
    expect(binding().gemm(desc(() => undefined), f64(64), f64(64), f64(64))).toBe(GemmStatus.OutOfBounds);
    const wide = desc((d) => {
      d[DESC.offC] = 0;
      for (let t = 0; t < 32; t++) d[DESC.HEADER + 3 * 32 + t] = 2 ** 53;
    }, 32);
    expect(binding().gemm(wide, f64(1 << 10), f64(1 << 10), f64(1 << 16))).toBe(GemmStatus.OutOfBounds);
    // The same request within bounds runs.
    expect(binding().gemm(desc((d) => (d[DESC.offC] = 0)), f64(64), f64(64), f64(64))).toBe(GemmStatus.Ok);
  });
});

describe('the provider refuses them first, with a typed error (through a real execution context)', () => {
  let backend: CpuBackend;
  const forging = forgingGemmProvider(createFaerProvider().gemm!);

  beforeAll(async () => {
    const base = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [createFaerProvider()] });
    backend = base.withProviderBundle(base.providerBundle().toBuilder().gemmProvider(forging.provider).build());
  });
  afterAll(async () => {
    await backend.close();
  });

  async function attempt(f: (r: CpuGemmRequest) => CpuGemmRequest): Promise<unknown> {
    forging.forge(f);
    await expect(backend.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]))).rejects.toThrow();
    return forging.seen.error;
  }

  it('sanity: an untouched request runs', async () => {
    forging.forge((r) => r);
    const got = await backend.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]));
    expect(got.toArray()).toEqual([1, 2, 3, 4]);
    expect(forging.seen.ranKernel).toBe(true);
  });

  for (const stride of BAD) {
    it(`out.batchStrides [${stride}] with an output offset of 10^6 → InvalidArgument, no kernel task`, async () => {
      const error = await attempt((r) => ({
        ...r,
        batch: [2],
        lhs: { ...r.lhs, batchStrides: [0] },
        rhs: { ...r.rhs, batchStrides: [0] },
        out: { ...r.out, offset: 1e6, batchStrides: [stride] },
      }));
      expect(TenferroError.is(error, 'InvalidArgument')).toBe(true);
      expect((error as TenferroError).detail).toEqual({ param: 'request.out.batchStrides[0]' });
      expect(forging.seen.ranKernel).toBe(false);
    });
  }

  it('an output offset of 10^6 with valid strides → ViewOutOfBounds, no kernel task', async () => {
    const error = await attempt((r) => ({ ...r, out: { ...r.out, offset: 1e6 } }));
    expect(TenferroError.is(error, 'ViewOutOfBounds')).toBe(true);
    expect(forging.seen.ranKernel).toBe(false);
  });

  it('more than 32 batch axes are declined (ProviderUnsupported), not sent to the addon', async () => {
    forging.forge((r) => {
      const ones = Array.from({ length: 33 }, () => 1);
      const zeros = ones.map(() => 0);
      return { ...r, batch: ones, lhs: { ...r.lhs, batchStrides: zeros }, rhs: { ...r.rhs, batchStrides: zeros }, out: { ...r.out, batchStrides: zeros } };
    });
    const error = await backend.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(forging.seen.error).toBeUndefined(); // the provider declined: an outcome, not an error
    expect(TenferroError.is(error, 'ProviderUnsupported')).toBe(true);
    expect((error as TenferroError).detail).toMatchObject({ reason: expect.objectContaining({ kind: 'stridedBatch' }) });
    expect(forging.seen.ranKernel).toBe(false);
  });

  it('validateGemmRequest: the last element fits, one more is ViewOutOfBounds', () => {
    const op = (): GemmOperand => ({ buffer: new SharedArrayBuffer(8 * 16), offset: 0, rowStride: 1, colStride: 2, batchStrides: [] });
    const ok: CpuGemmRequest = { dtype: 'f64', m: 2, n: 2, k: 2, batch: [], lhs: op(), rhs: op(), out: op(), alpha: 1, beta: 0, conjLhs: false, conjRhs: false };
    expect(validateGemmRequest('gemm', { ...ok, out: { ...ok.out, offset: 12 } })).toBe(8);
    expect(() => validateGemmRequest('gemm', { ...ok, out: { ...ok.out, offset: 13 } })).toThrow(expect.objectContaining({ code: 'ViewOutOfBounds' }));
  });
});
