import { CpuBackend, type CpuGemmRequest, type DType, DTYPE_INFO, Tensor, TenferroError } from '@tenferro/core';
import { naiveDotGeneral, randomValues, relativeError, seededRandom, toleranceFor } from '@tenferro/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { planGemm } from '../src/gemm-provider.js';
import { MULTI_THREAD_MIN_WORK, SPLIT_BAND_BELOW, SPLIT_MIN_WORK, SPLIT_QUANTUM, splitCall, splitsCall } from '../src/gemm-split.js';
import { Desc, Trans } from '../src/native/binding.js';
import { blasProviderStatus, createBlasProvider } from '../src/index.js';

const rand = seededRandom(0xb1a5);
const random = (dtype: DType, shape: number[], order: 'col' | 'row' = 'col') =>
  Tensor.fromArray(dtype, shape, randomValues(rand, dtype, shape.reduce((a, e) => a * e, 1)), { order });
const values = (t: Tensor) => (t.toArray() as number[]).map(Number);

describe('blas GEMM through CpuBackend (kind blas)', () => {
  let backend: CpuBackend;
  beforeAll(async () => {
    backend = await CpuBackend.create({ kind: 'blas', threads: 2, providers: [createBlasProvider()] });
  });
  afterAll(async () => {
    await backend.close();
  });

  it('installed, it is what CpuBackend.create({ kind: \'blas\' }) uses without being passed', async () => {
    const found = await CpuBackend.create({ kind: 'blas', threads: 1 });
    try {
      expect(found.executionInfo().executionMode).toBe('providerDefaultExclusive');
      expect(found.providerBundle().gemm.name).toBe(createBlasProvider().gemm!.name);
      const r = await found.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]));
      expect(values(r)).toEqual([1, 2, 3, 4]);
    } finally {
      await found.close();
    }
  });

  it('matmul of random 300×200 by 200×100 f64 equals the oracle within 1e-12 relative', async () => {
    const r = seededRandom(7);
    const a = Tensor.fromArray('f64', [300, 200], Array.from({ length: 300 * 200 }, () => r() * 2 - 1));
    const b = Tensor.fromArray('f64', [200, 100], Array.from({ length: 200 * 100 }, () => r() * 2 - 1));
    const got = await backend.matmul(a, b);
    const want = naiveDotGeneral(a, b, { contracting: [[1], [0]] });
    expect(got.shape).toEqual([300, 100]);
    expect(relativeError(values(got), want.values)).toBeLessThanOrEqual(1e-12);
  });

  it('reports the provider in executionInfo (blas kind, provider-exclusive)', () => {
    const info = backend.executionInfo();
    expect(info.backendKind).toBe('blas');
    expect(info.executionMode).toBe('providerDefaultExclusive');
    expect(info.providerDiagnostic).toContain(blasProviderStatus().available ? (blasProviderStatus() as { name: string }).name : 'x');
  });

  for (const dtype of ['f32', 'f64', 'c64', 'c128'] as const) {
    it(`${dtype}: row-major, column-major, transposed and permuted inputs and outputs match the oracle`, async () => {
      for (const [la, lb] of [
        ['col', 'col'],
        ['row', 'col'],
        ['col', 'row'],
        ['row', 'row'],
      ] as const) {
        const a = random(dtype, [13, 7], la);
        const b = random(dtype, [7, 11], lb);
        const got = await backend.matmul(a, b);
        const want = naiveDotGeneral(a, b, { contracting: [[1], [0]] });
        expect(relativeError(values(got), want.values), `${dtype} ${la}/${lb}`).toBeLessThanOrEqual(toleranceFor(dtype));
      }
      // Views BLAS cannot address (a column slice with a non-unit row stride, a permuted rank-3
      // operand) go through core's retry on canonical operands.
      const base = random(dtype, [26, 7]);
      const strided = base.permute([1, 0]).slice([0, 7], [0, 26]).permute([1, 0]); // rows 0..25 all, fine
      const every2nd = Tensor.fromDescriptor({ ...base.descriptor(), shape: [13, 7], strides: [2, 26] });
      const b = random(dtype, [7, 5]);
      for (const a of [strided, every2nd]) {
        const got = await backend.matmul(a, b);
        const want = naiveDotGeneral(a, b, { contracting: [[1], [0]] });
        expect(relativeError(values(got), want.values)).toBeLessThanOrEqual(toleranceFor(dtype));
      }
      const t3 = random(dtype, [4, 5, 3]).permute([2, 0, 1]); // shape [3, 4, 5], strides not matrix-like
      const r3 = random(dtype, [5, 6]);
      const got = await backend.dotGeneral(t3, r3, { contracting: [[2], [0]] });
      const want = naiveDotGeneral(t3, r3, { contracting: [[2], [0]] });
      expect(got.shape).toEqual(want.shape);
      expect(relativeError(values(got), want.values)).toBeLessThanOrEqual(toleranceFor(dtype));
    });
  }

  for (const dtype of ['c64', 'c128'] as const) {
    it(`${dtype}: every conjugation × layout combination matches the oracle (ConjTrans, ConjNoTrans or the retry)`, async () => {
      for (const la of ['col', 'row'] as const) {
        for (const lb of ['col', 'row'] as const) {
          for (const conjLhs of [false, true]) {
            for (const conjRhs of [false, true]) {
              const a = random(dtype, [6, 5], la);
              const b = random(dtype, [5, 4], lb);
              const got = await backend.matmul(a, b, { conjLhs, conjRhs });
              const want = naiveDotGeneral(a, b, { contracting: [[1], [0]] }, { conjLhs, conjRhs });
              expect(relativeError(values(got), want.values), `${la}/${lb} conj ${conjLhs}/${conjRhs}`).toBeLessThanOrEqual(toleranceFor(dtype));
            }
          }
        }
      }
    });
  }

  it('batched dot-general (one task, all batches) matches the oracle, with batch-strided views', async () => {
    for (const dtype of ['f64', 'c64'] as const) {
      const a = random(dtype, [5, 4, 3]);
      const b = random(dtype, [4, 6, 3]);
      const got = await backend.dotGeneral(a, b, { contracting: [[1], [0]], batch: [[2], [2]] });
      const want = naiveDotGeneral(a, b, { contracting: [[1], [0]], batch: [[2], [2]] });
      expect(relativeError(values(got), want.values)).toBeLessThanOrEqual(toleranceFor(dtype));
      const a2 = random(dtype, [3, 5, 4]).permute([1, 2, 0]); // batch axis outermost in memory
      const got2 = await backend.dotGeneral(a2, b, { contracting: [[1], [0]], batch: [[2], [2]] });
      const want2 = naiveDotGeneral(a2, b, { contracting: [[1], [0]], batch: [[2], [2]] });
      expect(relativeError(values(got2), want2.values)).toBeLessThanOrEqual(toleranceFor(dtype));
    }
  });

  it('beta = 0 overwrites without reading (NaN in the output does not propagate); alpha and beta apply', async () => {
    const a = random('f64', [8, 6]);
    const b = random('f64', [6, 9]);
    const out = Tensor.fromArray('f64', [8, 9], new Array(72).fill(Number.NaN));
    await backend.dotGeneralInto(out, a, b, { contracting: [[1], [0]] });
    const prod = naiveDotGeneral(a, b, { contracting: [[1], [0]] }).values;
    expect(relativeError(values(out), prod)).toBeLessThanOrEqual(1e-12);
    const c = Tensor.fromArray('f64', [8, 9], new Array(72).fill(1), { order: 'row' });
    await backend.dotGeneralInto(c, a, b, { contracting: [[1], [0]] }, { alpha: 2, beta: -3 });
    expect(relativeError(values(c), prod.map((p) => 2 * p - 3))).toBeLessThanOrEqual(1e-12);
  });

  it('k = 0 gives beta · C without calling BLAS on empty operands', async () => {
    for (const dtype of ['f32', 'c128'] as const) {
      const a = Tensor.zeros(dtype, [3, 0]);
      const b = Tensor.zeros(dtype, [0, 4]);
      const components = DTYPE_INFO[dtype].components;
      const out = Tensor.fromArray(dtype, [3, 4], new Array(12 * components).fill(Number.NaN));
      await backend.dotGeneralInto(out, a, b, { contracting: [[1], [0]] });
      expect(values(out)).toEqual(new Array(12 * components).fill(0));
      const c = Tensor.fromArray(dtype, [3, 4], new Array(12 * components).fill(2));
      const beta = components === 2 ? ([0, 1] as const) : 3;
      await backend.dotGeneralInto(c, a, b, { contracting: [[1], [0]] }, { beta });
      expect(values(c)).toEqual(components === 2 ? Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? -2 : 2)) : new Array(12).fill(6));
    }
  });

  it('splits a GEMM of 128³ to 320³ multiply-adds over the two lanes (one BLAS thread each) when tenferro sets the runtime\'s threads, in every layout, and matches the oracle; one of 320³ to 1536³ stays one task', async () => {
    // Split only where tenferro sets the runtime's thread count: OpenBLAS with threads of its own,
    // or a per-call thread count (MKL); a sequential runtime (reference BLAS) runs one task. Another
    // runtime (BLIS) is checked for its results only.
    const s = blasProviderStatus();
    if (!s.available) throw new Error('no BLAS');
    const threadCount = s.capabilities.threadCount;
    const split = (s.runtime.vendor === 'openblas' && threadCount !== 'sequential') || threadCount === 'perCallUpperBound';
    const expected = split ? [true, true] : threadCount === 'sequential' ? [false] : undefined;
    const tasks: { fanOut: boolean }[] = [];
    const onTask = (e: unknown) => tasks.push(e as { fanOut: boolean });
    const backend = await CpuBackend.create({ kind: 'blas', threads: 2, providers: [createBlasProvider()] });
    subscribe('tenferro:task', onTask);
    try {
      // [m, k, n]: cut along N (the longer), and along M; just above 128³, and near the band's end.
      for (const [m, k, n] of [[128, 128, 136], [136, 128, 128], [400, 200, 161]] as const) {
        for (const [lhsOrder, rhsOrder, outOrder] of [['col', 'col', 'col'], ['row', 'row', 'col'], ['col', 'row', 'row'], ['row', 'col', 'row']] as const) {
          const a = random('f64', [m, k], lhsOrder);
          const b = random('f64', [k, n], rhsOrder);
          const out = Tensor.fromArray('f64', [m, n], new Array(m * n).fill(Number.NaN), { order: outOrder });
          tasks.length = 0;
          await backend.dotGeneralInto(out, a, b, { contracting: [[1], [0]] });
          if (expected !== undefined) expect(tasks.map((t) => t.fanOut), `${m}×${k}×${n} ${lhsOrder}/${rhsOrder}/${outOrder}`).toEqual(expected);
          expect(relativeError(values(out), naiveDotGeneral(a, b, { contracting: [[1], [0]] }).values)).toBeLessThanOrEqual(1e-12);
        }
      }
      // Batched (every part runs every batch item).
      {
        const a = random('f64', [200, 150, 4]);
        const b = random('f64', [150, 200, 4]);
        tasks.length = 0;
        const dims = { contracting: [[1], [0]], batch: [[2], [2]] } as const;
        const got = await backend.dotGeneral(a, b, dims);
        if (expected !== undefined) expect(tasks.map((t) => t.fanOut), 'batched').toEqual(expected);
        expect(relativeError(values(got), naiveDotGeneral(a, b, dims).values)).toBeLessThanOrEqual(1e-12);
      }
      // Complex, conjugated (ConjTrans, or CblasConjNoTrans where the runtime has it).
      for (const rhsOrder of ['row', 'col'] as const) {
        const a = random('c64', [160, 160]);
        const b = random('c64', [160, 160], rhsOrder);
        tasks.length = 0;
        const got = await backend.dotGeneral(a, b, { contracting: [[1], [0]] }, { conjRhs: true });
        // A runtime without CblasConjNoTrans declines the column-major case: core materialises the
        // conjugated operand first (tasks of their own), then the GEMM runs — its tasks are the last.
        if (expected !== undefined) expect(tasks.map((t) => t.fanOut).slice(-expected.length), `c64 conj rhs ${rhsOrder}`).toEqual(expected);
        expect(relativeError(values(got), naiveDotGeneral(a, b, { contracting: [[1], [0]] }, { conjRhs: true }).values)).toBeLessThanOrEqual(toleranceFor('c64'));
      }
      // Below the band, and between it and SPLIT_MIN_WORK: one task.
      for (const [m, k, n] of [[64, 64, 64], [384, 384, 384]] as const) {
        tasks.length = 0;
        const a = random('f64', [m, k]);
        const b = random('f64', [k, n]);
        const got = await backend.matmul(a, b);
        expect(tasks.map((t) => t.fanOut), `${m}×${k}×${n}`).toEqual([false]);
        expect(relativeError(values(got), naiveDotGeneral(a, b, { contracting: [[1], [0]] }).values)).toBeLessThanOrEqual(1e-12);
      }
    } finally {
      unsubscribe('tenferro:task', onTask);
      await backend.close();
    }
  });

  it("rejects { kind: 'blas', placement: { numaNode: 0 } } with ExternalProviderAffinityUnmanaged", async () => {
    const err = await CpuBackend.create({ kind: 'blas', placement: { numaNode: 0 }, providers: [createBlasProvider()] }).catch((e: unknown) => e);
    expect(TenferroError.is(err, 'ExternalProviderAffinityUnmanaged')).toBe(true);
    const err2 = await CpuBackend.create({ kind: 'blas', placement: 'allAllowed', providers: [createBlasProvider()] }).catch((e: unknown) => e);
    expect(TenferroError.is(err2, 'ExternalProviderAffinityUnmanaged')).toBe(true);
  });
});

describe('planGemm (stride → transpose/leading-dimension mapping)', () => {
  const buf = new SharedArrayBuffer(8 * 1024);
  const operand = (rowStride: number, colStride: number, offset = 0) => ({ buffer: buf, offset, rowStride, colStride, batchStrides: [] });
  const req = (over: Partial<CpuGemmRequest>): CpuGemmRequest => ({
    dtype: 'f64', m: 4, n: 3, k: 5, batch: [],
    lhs: operand(1, 4), rhs: operand(1, 5), out: operand(1, 4),
    alpha: 1, beta: 0, conjLhs: false, conjRhs: false,
    ...over,
  });
  const plan = (r: CpuGemmRequest, conjNoTrans = false) => planGemm(r, conjNoTrans, 0);
  const desc = (r: CpuGemmRequest) => {
    const p = plan(r);
    if (!p.ok) throw new Error(JSON.stringify(p.outcome));
    return Array.from(p.payload.desc.slice(0, 9));
  };

  it('column-major operands → NoTrans with ld = colStride; row-major → Trans with ld = rowStride', () => {
    expect(desc(req({}))).toEqual([1, 111, 111, 4, 3, 5, 4, 5, 4]);
    expect(desc(req({ lhs: operand(7, 1) }))).toEqual([1, 112, 111, 4, 3, 5, 7, 5, 4]);
    expect(desc(req({ rhs: operand(3, 1) }))).toEqual([1, 111, 112, 4, 3, 5, 4, 3, 4]);
  });

  it('a row-major output computes Cᵀ = Bᵀ·Aᵀ (operands swapped, m and n swapped)', () => {
    // out 4×3 row-major (rowStride 3, colStride 1); lhs col-major 4×5; rhs col-major 5×3.
    expect(desc(req({ out: operand(3, 1) }))).toEqual([1, 112, 112, 3, 4, 5, 5, 4, 3]);
  });

  it('extents of 1 make the other stride irrelevant', () => {
    expect(plan(req({ m: 1, lhs: operand(99, 1), out: operand(99, 1) })).ok).toBe(true);
    expect(plan(req({ n: 1, rhs: operand(1, 0), out: operand(1, 0) })).ok).toBe(true);
  });

  it('declines what BLAS cannot express, before touching anything', () => {
    const outcome = (r: CpuGemmRequest, c = false) => {
      const p = plan(r, c);
      return p.ok ? 'executed' : p.outcome;
    };
    expect(outcome(req({ lhs: operand(2, 8) }))).toMatchObject({ executed: false, reason: { kind: 'layout', operand: 'lhs' } });
    expect(outcome(req({ rhs: operand(2, 10) }))).toMatchObject({ executed: false, reason: { kind: 'layout', operand: 'rhs' } });
    expect(outcome(req({ lhs: operand(1, 0) }))).toMatchObject({ executed: false, reason: { kind: 'layout', operand: 'lhs' } }); // broadcast
    expect(outcome(req({ out: operand(2, 8) }))).toMatchObject({ executed: false, reason: { kind: 'layout', operand: 'output' } });
    expect(outcome(req({ dtype: 'i32' }))).toMatchObject({ executed: false, reason: { kind: 'dtype', dtype: 'i32' } });
    const conj = req({ dtype: 'c128', conjLhs: true, alpha: [1, 0], beta: [0, 0] });
    expect(outcome(conj)).toMatchObject({ executed: false, reason: { kind: 'conjugation' } });
    expect(outcome(conj, true)).toBe('executed');
    // With a transpose available, conjugation folds into ConjTrans.
    expect(outcome(req({ dtype: 'c128', conjLhs: true, lhs: operand(5, 1), alpha: [1, 0], beta: [0, 0] }))).toBe('executed');
    // Summed axes are not declared: a request carrying them is declined (one ?gemm would sum one item).
    expect(outcome(req({ summed: { extents: [2], lhsStrides: [20], rhsStrides: [15] } }))).toMatchObject({ executed: false, reason: { kind: 'stridedBatch' } });
    expect(outcome(req({ summed: { extents: [], lhsStrides: [], rhsStrides: [] } }))).toBe('executed');
  });

  it('packs batch extents and per-operand batch strides', () => {
    const b = (s: number) => ({ buffer: buf, offset: 0, rowStride: 1, colStride: 4, batchStrides: [s, 2 * s] });
    const p = plan(req({ batch: [2, 3], lhs: b(20), rhs: { ...b(15), colStride: 5 }, out: b(12) }));
    expect(p.ok).toBe(true);
    if (p.ok) expect(Array.from(p.payload.desc.slice(17))).toEqual([2, 2, 3, 20, 40, 15, 30, 12, 24]);
  });
});

describe('splitCall (a planned call cut into 1-thread parts for the lanes)', () => {
  const buf = new SharedArrayBuffer(8);
  const base = (over: Partial<Record<keyof typeof Desc, number>>) => {
    const r: CpuGemmRequest = {
      dtype: 'f64', m: 8, n: 8, k: 8, batch: [],
      lhs: { buffer: buf, offset: 0, rowStride: 1, colStride: 8, batchStrides: [] },
      rhs: { buffer: buf, offset: 0, rowStride: 1, colStride: 8, batchStrides: [] },
      out: { buffer: buf, offset: 0, rowStride: 1, colStride: 8, batchStrides: [] },
      alpha: 1, beta: 0, conjLhs: false, conjRhs: false,
    };
    const p = planGemm(r, false, 2);
    if (!p.ok) throw new Error('planned');
    const d = Float64Array.from(p.payload.desc);
    for (const [key, v] of Object.entries(over)) d[Desc[key as keyof typeof Desc]] = v!;
    return d;
  };

  it('is chosen by work: by default from 128³ to below 320³ and from 1536³ on; from splitMinWork alone when it is given', () => {
    expect([MULTI_THREAD_MIN_WORK, SPLIT_BAND_BELOW, SPLIT_MIN_WORK]).toEqual([128 ** 3, 320 ** 3, 1536 ** 3]);
    const byDefault = [128 ** 3 - 1, 128 ** 3, 320 ** 3 - 1, 320 ** 3, 1536 ** 3 - 1, 1536 ** 3].map((w) => splitsCall(w, undefined));
    expect(byDefault).toEqual([false, true, true, false, false, true]);
    expect([100, 400 ** 3, 2048 ** 3].map((w) => splitsCall(w, 400 ** 3))).toEqual([false, true, true]);
    expect([128 ** 3, 2048 ** 3].map((w) => splitsCall(w, Number.POSITIVE_INFINITY))).toEqual([false, false]);
  });

  it('stays whole for one lane, a runtime whose threads are not set, no work, or nothing long enough to cut (too little work is splitsCall\'s)', () => {
    const big = { M: 2048, N: 2048, K: 2048, Lda: 2048, Ldb: 2048, Ldc: 2048 };
    expect(splitCall(base(big), 2)).toHaveLength(2);
    expect(splitCall(base(big), 1)).toBeUndefined();
    expect(splitCall(base({ ...big, Threads: 0 }), 2)).toBeUndefined();
    expect(splitCall(base({ ...big, K: 0 }), 2)).toBeUndefined();
    expect(splitsCall(100 * 100 * 100, undefined)).toBe(false);
    expect(splitCall(base({ ...big, M: 2 * SPLIT_QUANTUM - 1, N: 2 * SPLIT_QUANTUM - 1, K: 1 << 20 }), 2)).toBeUndefined();
  });

  it('cuts the longer of M and N into quantum multiples that cover it exactly, moving op(B), op(A) and C to each part', () => {
    for (const transA of [Trans.No, Trans.T]) {
      for (const transB of [Trans.No, Trans.ConjT]) {
        // N longer: columns of C and op(B).
        const byN = base({ M: 100, N: 300, K: 50, Lda: 120, Ldb: 70, Ldc: 130, OffA: 3, OffB: 5, OffC: 7, TransA: transA, TransB: transB });
        const cols = splitCall(byN, 3)!;
        let at = 0;
        for (const part of cols) {
          expect(part[Desc.Threads]).toBe(1);
          expect([part[Desc.M], part[Desc.K], part[Desc.OffA]]).toEqual([100, 50, 3]);
          expect(part[Desc.OffC]).toBe(7 + at * 130);
          expect(part[Desc.OffB]).toBe(5 + at * (transB === Trans.No ? 70 : 1));
          at += part[Desc.N]!;
          if (at < 300) expect(part[Desc.N]! % SPLIT_QUANTUM).toBe(0);
        }
        expect([cols.length, at]).toEqual([3, 300]);
        // M longer: rows of C and op(A).
        const byM = base({ M: 300, N: 100, K: 50, Lda: 310, Ldb: 70, Ldc: 330, OffA: 3, OffB: 5, OffC: 7, TransA: transA, TransB: transB });
        const rows = splitCall(byM, 2)!;
        at = 0;
        for (const part of rows) {
          expect([part[Desc.N], part[Desc.OffB]]).toEqual([100, 5]);
          expect(part[Desc.OffC]).toBe(7 + at);
          expect(part[Desc.OffA]).toBe(3 + at * (transA === Trans.No ? 1 : 310));
          at += part[Desc.M]!;
        }
        expect([rows.length, at]).toEqual([2, 300]);
      }
    }
  });
});
