// The built-in kernels keep Eigen's SVD (BDCSVD) and Hermitian eigensolver on each engine worker
// between calls, so that a call of the same shape reuses their storage instead of fresh pages
// (native/src/ops.h: svd_in, eigh). What a worker factored before must never show in a result:
// every call of a sequence on one worker (shapes, options and data mixed, a failure among them, the
// whole sequence twice) equals, bit for bit, the same call on a worker that never ran another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor } from '@tenferro/core';
import { type Linalg, linalg } from '../src/index.js';

type Call = { readonly name: string; readonly run: (la: Linalg) => Promise<Tensor[]> };

function values(n: number, seed: number): number[] {
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647 - 0.5;
  });
}

function symmetric(n: number, seed: number): Tensor<'f64'> {
  const v = values(n * n, seed);
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) a[i * n + j] = v[i * n + j]! + v[j * n + i]!;
  return Tensor.fromArray('f64', [n, n], a);
}

const general = (m: number, n: number, seed: number) => Tensor.fromArray('f64', [m, n], values(m * n, seed));
const withNaN = (m: number, n: number) => Tensor.fromArray('f64', [m, n], values(m * n, 9).map((x, i) => (i === 5 ? Number.NaN : x)));

const CALLS: readonly Call[] = [
  { name: 'svd 40×40 (full)', run: async (la) => Object.values(await la.svd(general(40, 40, 1))) },
  { name: 'svd 40×40 other data', run: async (la) => Object.values(await la.svd(general(40, 40, 2))) },
  { name: 'svd 40×40 thin', run: async (la) => Object.values(await la.svd(general(40, 40, 3), { fullMatrices: false })) },
  { name: 'svdvals 40×40', run: async (la) => [await la.svdvals(general(40, 40, 4))] },
  { name: 'svd 17×33', run: async (la) => Object.values(await la.svd(general(17, 33, 5))) },
  { name: 'svd 33×17 thin', run: async (la) => Object.values(await la.svd(general(33, 17, 6), { fullMatrices: false })) },
  { name: 'svd 8×8 (Jacobi inside BDCSVD)', run: async (la) => Object.values(await la.svd(general(8, 8, 7))) },
  { name: 'svd 40×40 with a NaN (fails)', run: async (la) => la.svd(withNaN(40, 40)).then(() => [], (e: { code?: string }) => [Tensor.fromArray('f64', [1], [e.code === 'NoConvergence' ? 1 : -1])]) },
  { name: 'svd 40×40 after the failure', run: async (la) => Object.values(await la.svd(general(40, 40, 1))) },
  { name: 'eigh 30', run: async (la) => Object.values(await la.eigh(symmetric(30, 10))) },
  { name: 'eigh 30 other data, upper', run: async (la) => Object.values(await la.eigh(symmetric(30, 11), { uplo: 'U' })) },
  { name: 'eigvalsh 30', run: async (la) => [await la.eigvalsh(symmetric(30, 12))] },
  { name: 'eigh 12', run: async (la) => Object.values(await la.eigh(symmetric(12, 13))) },
];

const arrays = (ts: Tensor[]) => ts.map((t) => Array.from(t.toArray().flat(4) as number[]));

describe('the kept SVD and eigensolver: results never depend on what the worker factored before', () => {
  let backend: CpuBackend;
  beforeAll(async () => {
    backend = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [] });
  });
  afterAll(async () => {
    await backend.close();
  });

  it('every call of a mixed sequence, run twice on one worker, equals the same call on a fresh worker, bit for bit', async () => {
    const fresh: number[][][] = [];
    for (const c of CALLS) {
      const own = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [] });
      try {
        fresh.push(arrays(await c.run(linalg(own))));
      } finally {
        await own.close();
      }
    }
    expect(fresh[7]).toEqual([[1]]); // the NaN input failed with NoConvergence
    const la = linalg(backend);
    for (let pass = 0; pass < 2; pass++) {
      for (const [i, c] of CALLS.entries()) expect(arrays(await c.run(la)), `${c.name}, pass ${pass + 1}`).toEqual(fresh[i]);
    }
  });
});
