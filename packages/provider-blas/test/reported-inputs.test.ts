// The reported crash: `createBlasProvider().gemm.gemm(ctx, request)` with `batchStrides: [NaN]`
// and an output offset of 10^6 segfaulted (a NaN, 1e19 or 2^63 stride passed the `< 0` test and
// was cast to the most negative int64; very large strides overflowed the reach sum; then the
// operand check was skipped). Now the provider's validation refuses such a request with a typed
// error before anything runs, and the addon refuses the same descriptor on its own.
import { CpuBackend, type CpuGemmRequest, type GemmOperand, Tensor, TenferroError } from '@tenferro/core';
import { forgingGemmProvider } from '@tenferro/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBlasProvider } from '../src/index.js';
import { validateGemmRequest } from '@tenferro/core';
import { PACKAGE_DIR, runChild } from './helpers.js';

const BAD_STRIDES = [Number.NaN, 1e19, 2 ** 63, -1, Infinity, -Infinity, 0.5, 2 ** 53 + 2];

describe('the addon refuses the reported descriptors by itself (child process: a crash would be a signal)', () => {
  it('batch strides NaN, 1e19, 2^63, …, with an output offset of 10^6 → BadDescriptor; huge valid strides → OutOfBounds', () => {
    const source = `
      import { createRequire } from 'node:module';
      const b = createRequire(${JSON.stringify(`${PACKAGE_DIR}/package.json`)})('./native/build/Release/tenferro_blas.node');
      b.load({ candidates: [] });
      const bytes = (n) => new Uint8Array(new SharedArrayBuffer(n));
      // f64, NoTrans, 2x2x2, offC 1e6, one batch axis of extent 2 with C's stride under test.
      const desc = (strideC, strideA = 4, offC = 1e6, rank = 1, ext = 2) => {
        const d = new Float64Array(18 + 4 * rank);
        d.set([1, 111, 111, 2, 2, 2, 2, 2, 2, 0, 0, offC, 1, 0, 0, 0, 0, rank]);
        for (let t = 0; t < rank; t++) { d[18 + t] = ext; d[18 + rank + t] = strideA; d[18 + 2 * rank + t] = 4; d[18 + 3 * rank + t] = strideC; }
        return d;
      };
      const out = {};
      for (const s of ${JSON.stringify(BAD_STRIDES.map(String))}.map(Number)) {
        out['C ' + s] = b.gemm(desc(s), bytes(64), bytes(64), bytes(64));
        out['A ' + s] = b.gemm(desc(4, s, 0), bytes(64), bytes(64), bytes(64));
      }
      // Strides that are valid numbers but reach far: 2^53 on 32 axes of extent 2 (the sum needs 59 bits
      // per term and would wrap a 64-bit sum), and 2^53 with an offset of 2^53.
      out.huge32 = b.gemm(desc(2 ** 53, 4, 0, 32, 2), bytes(1 << 16), bytes(1 << 16), bytes(1 << 16));
      out.hugeOffset = b.gemm(desc(2 ** 53, 4, 2 ** 53, 1, 2), bytes(64), bytes(64), bytes(64));
      out.offsetOnly = b.gemm(desc(4, 4, 1e6), bytes(64), bytes(64), bytes(64));
      console.log(JSON.stringify(out));`;
    const r = runChild(source);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    const got = r.json as Record<string, number>;
    for (const s of BAD_STRIDES) {
      expect(got[`C ${s}`], `C stride ${s}`).toBe(2); // BadDescriptor
      expect(got[`A ${s}`], `A stride ${s}`).toBe(2);
    }
    expect(got.huge32).toBe(5); // OutOfBoundsC
    expect(got.hugeOffset).toBe(5);
    expect(got.offsetOnly).toBe(5);
  });
});

describe('the provider refuses them first, with a typed error (through a real execution context)', () => {
  let backend: CpuBackend;
  const forging = forgingGemmProvider(createBlasProvider().gemm!);

  beforeAll(async () => {
    const base = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
    backend = base.withProviderBundle(base.providerBundle().toBuilder().gemmProvider(forging.provider).build());
  });
  afterAll(async () => {
    await backend.close();
  });

  async function attempt(f: (r: CpuGemmRequest) => CpuGemmRequest): Promise<unknown> {
    forging.forge(f);
    const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    const b = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);
    await expect(backend.matmul(a, b)).rejects.toThrow();
    return forging.seen.error;
  }

  const withBatch = (r: CpuGemmRequest, stride: number, offset = 1e6): CpuGemmRequest => ({
    ...r,
    batch: [2],
    lhs: { ...r.lhs, batchStrides: [0] },
    rhs: { ...r.rhs, batchStrides: [0] },
    out: { ...r.out, offset, batchStrides: [stride] },
  });

  it('sanity: the wrapper passes an untouched request through and the product is right', async () => {
    forging.forge((r) => r);
    const got = await backend.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]));
    expect(got.toArray()).toEqual([1, 2, 3, 4]);
    expect(forging.seen.ranKernel).toBe(true);
  });

  for (const stride of BAD_STRIDES) {
    it(`out.batchStrides [${stride}] with an output offset of 10^6 → InvalidArgument, no kernel task`, async () => {
      const error = await attempt((r) => withBatch(r, stride));
      expect(TenferroError.is(error, 'InvalidArgument')).toBe(true);
      expect((error as TenferroError).detail).toEqual({ param: 'request.out.batchStrides[0]' });
      expect(forging.seen.ranKernel).toBe(false);
    });
  }

  it('a valid but far-reaching request (offset 10^6, stride 2^52) → ViewOutOfBounds, no kernel task', async () => {
    const error = await attempt((r) => withBatch(r, 2 ** 52));
    expect(TenferroError.is(error, 'ViewOutOfBounds')).toBe(true);
    expect((error as TenferroError).detail).toMatchObject({ operand: 'out' });
    expect(forging.seen.ranKernel).toBe(false);
  });

  it('every other malformed field is InvalidArgument naming it', async () => {
    const cases: [string, (r: CpuGemmRequest) => CpuGemmRequest][] = [
      ['request.m', (r) => ({ ...r, m: Number.NaN })],
      ['request.k', (r) => ({ ...r, k: -1 })],
      ['request.batch[0]', (r) => ({ ...r, batch: [1.5], lhs: { ...r.lhs, batchStrides: [0] }, rhs: { ...r.rhs, batchStrides: [0] }, out: { ...r.out, batchStrides: [0] } })],
      ['request.lhs.batchStrides', (r) => ({ ...r, batch: [1], lhs: { ...r.lhs, batchStrides: [] } })],
      ['request.lhs.offset', (r) => ({ ...r, lhs: { ...r.lhs, offset: 2 ** 63 } })],
      ['request.rhs.colStride', (r) => ({ ...r, rhs: { ...r.rhs, colStride: 1e19 } })],
      ['request.out.buffer', (r) => ({ ...r, out: { ...r.out, buffer: new ArrayBuffer(64) as unknown as SharedArrayBuffer } })],
      ['request.alpha', (r) => ({ ...r, alpha: '1' as unknown as number })],
      ['request.conjLhs', (r) => ({ ...r, conjLhs: 1 as unknown as boolean })],
    ];
    for (const [param, f] of cases) {
      const error = await attempt(f);
      expect(TenferroError.is(error, 'InvalidArgument'), param).toBe(true);
      expect((error as TenferroError).detail, param).toEqual({ param });
      expect(forging.seen.ranKernel, param).toBe(false);
    }
  });
});

describe('validateGemmRequest (pure)', () => {
  const sab = () => new SharedArrayBuffer(8 * 16);
  const op = (buffer = sab()): GemmOperand => ({ buffer, offset: 0, rowStride: 1, colStride: 2, batchStrides: [] });
  const ok: CpuGemmRequest = { dtype: 'f64', m: 2, n: 2, k: 2, batch: [], lhs: op(), rhs: op(), out: op(), alpha: 1, beta: 0, conjLhs: false, conjRhs: false };

  it('accepts a well-formed request and an empty one that reaches nothing', () => {
    expect(validateGemmRequest('gemm', ok)).toBe(8);
    expect(validateGemmRequest('gemm', { ...ok, m: 0, out: { ...ok.out, offset: 2 ** 52 } })).toBe(8);
  });

  it('the reach is exact: the last element fits, one more is ViewOutOfBounds', () => {
    // 2x2 at colStride 2 reaches element 3; a 16-element buffer holds offsets up to 12.
    expect(validateGemmRequest('gemm', { ...ok, out: { ...ok.out, offset: 12 } })).toBe(8);
    expect(() => validateGemmRequest('gemm', { ...ok, out: { ...ok.out, offset: 13 } })).toThrow(expect.objectContaining({ code: 'ViewOutOfBounds' }));
  });

  it('a batch count above 2^53 is IntegerOverflow', () => {
    const batch = [2 ** 27, 2 ** 27];
    const b = (o: GemmOperand): GemmOperand => ({ ...o, batchStrides: [0, 0] });
    expect(() => validateGemmRequest('gemm', { ...ok, batch, lhs: b(ok.lhs), rhs: b(ok.rhs), out: b(ok.out) })).toThrow(expect.objectContaining({ code: 'IntegerOverflow' }));
  });
});
