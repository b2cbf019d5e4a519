// Both paths agree: provider-blas's LAPACK CpuLinalgKernels (cholesky, luFactor, solve through
// ?potrf_/?getrf_/?getrs_ of the loaded runtime) against the built-in Eigen kernels of a faer
// backend, on the same inputs — same conventions (L lower with zeros above, LAPACK 1-based pivots,
// the same typed errors with batch index and info).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CpuBackend, Tensor } from '@tenferro/core';
import { createBlasProvider, status as blasStatus } from '@tenferro/provider-blas';
import { linalg } from '../src/index.js';

const haveBlas = blasStatus().available;
let blas: CpuBackend;
let faer: CpuBackend;

beforeAll(async () => {
  faer = await CpuBackend.create({ threads: 1, providers: [] });
  if (haveBlas) blas = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
});
afterAll(async () => {
  await faer.close();
  await blas?.close();
});

const close = (x: number[], y: number[], tol: number) => x.forEach((v, i) => expect(Math.abs(v - y[i]!)).toBeLessThanOrEqual(tol * (1 + Math.abs(y[i]!))));

describe.skipIf(!haveBlas)('LAPACK through provider-blas vs the built-in kernels', () => {
  it('cholesky, luFactor and solve agree (f32, f64, batched); other primitives fall back to the built-in', async () => {
    const lb = linalg(blas), lf = linalg(faer);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 3 }), fc.constantFrom('f32' as const, 'f64' as const), fc.integer({ min: 0, max: 1000 }), async (n, nb, dtype, seed) => {
        const data: number[] = [];
        for (let b = 0; b < nb; b++) {
          // SPD: G Gᵀ + n I from a deterministic G.
          const g = Array.from({ length: n * n }, (_, i) => Math.sin(seed + 3 * i + 17 * b));
          for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) {
            let s = i === j ? n : 0;
            for (let k = 0; k < n; k++) s += g[i + k * n]! * g[j + k * n]!;
            data.push(s);
          }
        }
        const a = Tensor.fromArray(dtype, [n, n, nb], data);
        const rhs = Tensor.fromArray(dtype, [n, 2, nb], Array.from({ length: 2 * n * nb }, (_, i) => Math.cos(seed + i)));
        const tol = dtype === 'f32' ? 1e-4 : 1e-11;
        close((await lb.cholesky(a)).toArray() as number[], (await lf.cholesky(a)).toArray() as number[], tol);
        close((await lb.cholesky(a, { upper: true })).toArray() as number[], (await lf.cholesky(a, { upper: true })).toArray() as number[], tol);
        const fb = await lb.luFactor(a), ff = await lf.luFactor(a);
        expect(fb.pivots.toArray()).toEqual(ff.pivots.toArray());
        close(fb.lu.toArray() as number[], ff.lu.toArray() as number[], tol);
        close((await lb.solve(a, rhs)).toArray() as number[], (await lf.solve(a, rhs)).toArray() as number[], tol * 10);
        expect(lb.takeCallRecords().map((r) => r.kernel)).toEqual(['extension', 'extension', 'extension', 'extension']);
        await lb.qr(a);
        expect(lb.takeCallRecords()).toEqual([{ op: 'qr', kernel: 'builtin' }]);
      }),
      { numRuns: 15 },
    );
  });

  it('the same typed errors: NotPositiveDefinite and SingularMatrix with batch index and info', async () => {
    const lb = linalg(blas);
    const a = Tensor.fromArray('f64', [2, 2, 3], [4, 0, 0, 9, 1, 2, 2, 1, 1, 0, 0, 1]);
    await expect(lb.cholesky(a)).rejects.toMatchObject({ code: 'NotPositiveDefinite', detail: { batchIndex: 1, info: 2 } });
    await expect(lb.solve(Tensor.fromArray('f64', [2, 2], [1, 2, 2, 4]), Tensor.fromArray('f64', [2, 1], [1, 1]))).rejects.toMatchObject({ code: 'SingularMatrix', detail: { batchIndex: 0, info: 2 } });
    // c128 is declined before writing: the built-in runs.
    await lb.cholesky(Tensor.fromArray("c128", [1, 1], [4, 0] as never));
    expect(lb.takeCallRecords().at(-1)).toEqual({ op: 'cholesky', kernel: 'builtin' });
  });
});
