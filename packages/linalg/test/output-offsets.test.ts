// Outputs are descriptors with offsets (#35): the built-in kernels and provider-blas's LAPACK
// kernels write each output from its offset and info from its own, nothing around them. An
// extension wraps each of them, moves every output (and info) of the request it receives to an
// offset inside a larger, sentinel-filled buffer, runs the wrapped kernel, checks the sentinels
// and copies the results back; every primitive through the public API must then give exactly
// what the unwrapped kernels give.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, type CpuProviderPackage, EXECUTED, Tensor } from '@tenferro/core';
import { createBlasProvider, status as blasStatus } from '@tenferro/provider-blas';
import { BUILTIN_KERNELS, type CpuLinalgKernels, LINALG_OPS, type Linalg, type LinalgDType, type LinalgOutput, type LinalgRequest, linalg, linalgKernelsKey } from '../src/index.js';
import { linalgConformanceCases } from '../src/testing/index.js';
import { kernelRecorder, prng } from './helpers.js';

const BYTES: Record<string, number> = { f32: 4, f64: 8, c64: 8, c128: 16, i32: 4 };
const SENTINEL = 0x5a;

/** `inner`'s methods, each running on outputs moved to `shift(dtype)` elements into sentinel-filled buffers (info 3 words in). */
function relocating(inner: CpuLinalgKernels, shift: (dtype: string) => number, violations: string[]): CpuLinalgKernels {
  const wrapped: Record<string, unknown> = { name: `relocating ${inner.name}`, overwritesOutputs: inner.overwritesOutputs, declinesBeforeWriting: inner.declinesBeforeWriting };
  if (inner.executionCapabilities !== undefined) wrapped.executionCapabilities = inner.executionCapabilities;
  for (const op of LINALG_OPS) {
    const kernel = inner[op];
    if (kernel === undefined) continue;
    wrapped[op] = async (ctx: Parameters<typeof kernel>[0], r: LinalgRequest) => {
      const count = r.batch.reduce((p, e) => p * e, 1);
      const moved = r.out.map((o): LinalgOutput | undefined => {
        if (o === undefined) return undefined;
        const bytes = BYTES[o.dtype]!, size = o.shape.reduce((p, e) => p * e, 1) * bytes, offset = shift(o.dtype);
        const buffer = new SharedArrayBuffer(offset * bytes + size + 64);
        new Uint8Array(buffer).fill(SENTINEL);
        return Object.freeze({ ...o, buffer, offset });
      });
      const info = new Int32Array(new SharedArrayBuffer(4 * (count + 5)), 12, count);
      const outcome = await kernel.call(inner, ctx, Object.freeze({ ...r, out: Object.freeze(moved), info }));
      moved.forEach((o, i) => {
        if (o === undefined) return;
        const bytes = BYTES[o.dtype]!, size = o.shape.reduce((p, e) => p * e, 1) * bytes, all = new Uint8Array(o.buffer);
        const around = [...all.subarray(0, o.offset * bytes), ...all.subarray(o.offset * bytes + size)];
        if (around.some((b) => b !== SENTINEL)) violations.push(`${op} out[${i}] written outside its span`);
        const dst = r.out[i]!;
        new Uint8Array(dst.buffer, dst.offset * bytes, size).set(all.subarray(o.offset * bytes, o.offset * bytes + size));
      });
      const infoAll = new Int32Array(info.buffer);
      if ([...infoAll.subarray(0, 3), ...infoAll.subarray(3 + count)].some((w) => w !== 0)) violations.push(`${op} info written outside its span`);
      r.info.set(info);
      return outcome;
    };
  }
  return Object.freeze(wrapped) as unknown as CpuLinalgKernels;
}

function rand(dtype: LinalgDType, shape: number[], seed: number, spd = false): Tensor<LinalgDType> {
  const c = dtype === 'c64' || dtype === 'c128' ? 2 : 1;
  const next = prng(seed);
  const d = new (dtype === 'f32' || dtype === 'c64' ? Float32Array : Float64Array)(c * shape.reduce((p, e) => p * e, 1));
  for (let i = 0; i < d.length; i++) d[i] = next();
  if (spd) {
    // Diagonally dominant Hermitian: A + Aᴴ + 2n·I.
    const n = shape[0]!, nb = shape.slice(2).reduce((p, e) => p * e, 1);
    for (let b = 0; b < nb; b++)
      for (let j = 0; j < n; j++)
        for (let i = 0; i <= j; i++) {
          const x = c * (b * n * n + i + j * n), y = c * (b * n * n + j + i * n);
          d[x] = d[y] = i === j ? 2 * n + d[x]! : d[x]!;
          if (c === 2) { d[x + 1] = i === j ? 0 : d[x + 1]!; d[y + 1] = -d[x + 1]!; }
        }
  }
  return Tensor.from(d as Float64Array, shape, { dtype } as never) as Tensor<LinalgDType>;
}

/** Every primitive, every output, on batched inputs. */
async function everything(la: Linalg, dtype: LinalgDType): Promise<Tensor[]> {
  const a = rand(dtype, [5, 3, 2], 1), s = rand(dtype, [4, 4, 2], 2), h = rand(dtype, [4, 4, 2], 3, true), b = rand(dtype, [4, 2, 2], 4);
  const out: Tensor[] = [];
  out.push(await la.cholesky(h), await la.cholesky(h, { upper: true }));
  out.push(await la.solveTriangular(h, b, { upper: true }), await la.solveTriangular(h, rand(dtype, [2, 4, 2], 5), { upper: false, left: false, unitDiagonal: true }));
  const f = await la.luFactor(a);
  const l = await la.lu(a);
  const fp = await la.luFullPivot(s);
  out.push(f.lu, f.pivots, l.p, l.l, l.u, fp.lu, fp.pivots, fp.colPivots, await la.solve(s, b));
  for (const mode of ['reduced', 'complete', 'r'] as const) {
    const q = await la.qr(a, { mode });
    out.push(...(q.q === undefined ? [] : [q.q]), q.r);
  }
  for (const fullMatrices of [true, false]) {
    const v = await la.svd(a, { fullMatrices });
    out.push(v.u, v.s, v.vh);
  }
  const e = await la.eigh(h), g = await la.eig(s);
  out.push(await la.svdvals(a), e.eigenvalues, e.eigenvectors, await la.eigvalsh(h, { uplo: 'U' }), g.eigenvalues, g.eigenvectors, await la.eigvals(s));
  return out;
}

const haveBlas = blasStatus().available;
const DTYPES: readonly LinalgDType[] = ['f64', 'c64'];

describe('outputs at offsets (#35): every kernel writes from each descriptor\'s offset, nothing around it', () => {
  const backends: CpuBackend[] = [];
  const violations: string[] = [];
  let plainFaer: CpuBackend, movedFaer: CpuBackend, movedFaerOdd: CpuBackend;
  beforeAll(async () => {
    const pkg = (kernels: CpuLinalgKernels): CpuProviderPackage => ({ kind: 'faer', name: 'relocating', extensions: [[linalgKernelsKey(), kernels]] });
    plainFaer = await CpuBackend.create({ threads: 1, providers: [] });
    // 64 bytes in (the alignment class of the pool's outputs is kept: bit-identical results), and one element in.
    movedFaer = await CpuBackend.create({ threads: 1, providers: [pkg(relocating(BUILTIN_KERNELS, (d) => 64 / BYTES[d]!, violations))] } as never);
    movedFaerOdd = await CpuBackend.create({ threads: 1, providers: [pkg(relocating(BUILTIN_KERNELS, () => 1, violations))] } as never);
    backends.push(plainFaer, movedFaer, movedFaerOdd);
  });
  afterAll(async () => {
    for (const b of backends) await b.close();
  });

  for (const dtype of DTYPES) {
    it(`built-in kernels, ${dtype}: the same results, bit for bit, and nothing written around the outputs`, async () => {
      const x = await everything(linalg(movedFaer), dtype), y = await everything(linalg(plainFaer), dtype);
      expect(x.map((t) => [t.dtype, t.shape])).toEqual(y.map((t) => [t.dtype, t.shape]));
      for (let i = 0; i < x.length; i++) expect(Array.from(x[i]!.toTypedArray() as Float64Array), `result ${i}`).toEqual(Array.from(y[i]!.toTypedArray() as Float64Array));
      const odd = await everything(linalg(movedFaerOdd), dtype);
      const tol = dtype === 'c64' ? 1e-4 : 1e-12;
      for (let i = 0; i < x.length; i++) {
        const p = odd[i]!.toTypedArray() as Float64Array, q = y[i]!.toTypedArray() as Float64Array;
        for (let j = 0; j < q.length; j++) expect(Math.abs(p[j]! - q[j]!), `result ${i}[${j}]`).toBeLessThanOrEqual(tol * (1 + Math.abs(q[j]!)));
      }
      expect(violations).toEqual([]);
    });
  }

  describe.skipIf(!haveBlas)("provider-blas's LAPACK kernels", () => {
    let plainBlas: CpuBackend, movedBlas: CpuBackend;
    const blasViolations: string[] = [];
    beforeAll(async () => {
      const blas = createBlasProvider();
      const lapack = blas.extensions![0]![1] as CpuLinalgKernels;
      plainBlas = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [blas] });
      const moved: CpuProviderPackage = { ...blas, name: 'relocating blas', extensions: [[linalgKernelsKey(), relocating(lapack, (d) => 64 / BYTES[d]!, blasViolations)]] };
      movedBlas = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [moved] });
      backends.push(plainBlas, movedBlas);
    });

    for (const dtype of DTYPES) {
      it(`${dtype}: the same results, bit for bit, every call on LAPACK, nothing written around the outputs`, async () => {
        const lm = linalg(movedBlas), lp = linalg(plainBlas);
        const rec = kernelRecorder();
        const x = await everything(lm, dtype);
        const calls = rec.take();
        rec.stop();
        const y = await everything(lp, dtype);
        expect(calls.length).toBeGreaterThan(0);
        expect(calls.every((r) => r.kernel === 'extension')).toBe(true);
        expect(x.map((t) => [t.dtype, t.shape])).toEqual(y.map((t) => [t.dtype, t.shape]));
        for (let i = 0; i < x.length; i++) expect(Array.from(x[i]!.toTypedArray() as Float64Array), `result ${i}`).toEqual(Array.from(y[i]!.toTypedArray() as Float64Array));
        expect(blasViolations).toEqual([]);
      });
    }
  });
});

describe('outputs at offsets (#35): the blocked LU and Cholesky shared by a 2-lane pool', () => {
  it("factor in place from the offsets (the pivots' too): the same results, bit for bit", async () => {
    const violations: string[] = [];
    const plain = await CpuBackend.create({ threads: 2, providers: [] });
    const moved = await CpuBackend.create({ threads: 2, providers: [{ kind: 'faer', name: 'relocating', extensions: [[linalgKernelsKey(), relocating(BUILTIN_KERNELS, (d) => 64 / BYTES[d]!, violations)]] }] });
    try {
      const n = 600; // ≥ PARALLEL_MIN_ORDER, not a multiple of the panel width
      const a = rand('f64', [n, n], 7), h = rand('f64', [n, n], 8, true);
      const run = async (la: Linalg) => {
        const f = await la.luFactor(a);
        return [f.lu, f.pivots, await la.cholesky(h), await la.cholesky(h, { upper: true })];
      };
      const x = await run(linalg(moved)), y = await run(linalg(plain));
      for (let i = 0; i < x.length; i++) expect(Buffer.from((x[i]!.toTypedArray() as Float64Array).buffer).equals(Buffer.from((y[i]!.toTypedArray() as Float64Array).buffer)), `result ${i}`).toBe(true);
      expect(violations).toEqual([]);
    } finally {
      await plain.close();
      await moved.close();
    }
  });
});

describe('the conformance kit hands kernels outputs at offsets (#35)', () => {
  it('fails a kernel that writes an output from byte 0 of its buffer instead of its offset', async () => {
    const fromZero: CpuLinalgKernels = {
      name: 'from byte 0',
      executionCapabilities: BUILTIN_KERNELS.executionCapabilities,
      cholesky: (_ctx, r) => {
        new Float64Array(r.out[0]!.buffer, 0, 8).set([1, 0, 0, 1, 1, 0, 0, 1]);
        return EXECUTED;
      },
    };
    const [c] = linalgConformanceCases(() => fromZero, { sizes: [2], dtypes: ['f64'] });
    await expect(c!.run()).rejects.toThrow(/outside its span/);
  });

  it('passes the same kernel writing from the offset', async () => {
    const atOffset: CpuLinalgKernels = {
      name: 'at the offset',
      executionCapabilities: BUILTIN_KERNELS.executionCapabilities,
      cholesky: (ctx, r) => BUILTIN_KERNELS.cholesky!(ctx, r),
    };
    const [c] = linalgConformanceCases(() => atOffset, { sizes: [2], dtypes: ['f64'] });
    await expect(c!.run()).resolves.toBeUndefined();
  });
});
