import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, type DType, Tensor } from '../src/index.js';
import { naiveDotGeneral, randomOperand, relativeError, seededRandom, toleranceFor } from '../src/testing/index.js';
import { expectCode } from './helpers.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2 });
});
afterAll(async () => {
  await backend.close();
});

const DTYPES: DType[] = ['f32', 'f64', 'c64', 'c128'];

/** Random dot-general problems: free, contracting and batch axes in random positions, random layouts. */
const problem = fc.record({
  seed: fc.integer(),
  dtype: fc.constantFrom(...DTYPES),
  free: fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 })),
  contracting: fc.integer({ min: 0, max: 2 }),
  batch: fc.integer({ min: 0, max: 2 }),
  conjLhs: fc.boolean(),
  conjRhs: fc.boolean(),
});

describe('dotGeneral against the oracle (property)', () => {
  it('equals the naive definition for random shapes, strides, batch axes and conjugation', async () => {
    await fc.assert(
      fc.asyncProperty(problem, async (p) => {
        const rand = seededRandom(p.seed);
        const ext = () => 1 + Math.floor(rand() * 4);
        const [lf, rf] = p.free;
        const cExt = Array.from({ length: p.contracting }, ext);
        const bExt = Array.from({ length: p.batch }, ext);
        // lay out each operand's roles in a random axis order
        const shuffle = <T,>(xs: T[]) => xs.map((x) => [rand(), x] as const).sort((a, b) => a[0] - b[0]).map(([, x]) => x);
        const lRoles = shuffle([...Array.from({ length: lf }, () => ({ r: 'f' as const, e: ext() })), ...cExt.map((e, i) => ({ r: 'c' as const, e, i })), ...bExt.map((e, i) => ({ r: 'b' as const, e, i }))]);
        const rRoles = shuffle([...Array.from({ length: rf }, () => ({ r: 'f' as const, e: ext() })), ...cExt.map((e, i) => ({ r: 'c' as const, e, i })), ...bExt.map((e, i) => ({ r: 'b' as const, e, i }))]);
        const axes = (roles: typeof lRoles, kind: 'c' | 'b', n: number) =>
          Array.from({ length: n }, (_, i) => roles.findIndex((x) => x.r === kind && 'i' in x && x.i === i));
        const dims = {
          contracting: [axes(lRoles, 'c', p.contracting), axes(rRoles, 'c', p.contracting)] as [number[], number[]],
          batch: [axes(lRoles, 'b', p.batch), axes(rRoles, 'b', p.batch)] as [number[], number[]],
        };
        const lhs = randomOperand(rand, p.dtype, lRoles.map((x) => x.e), true);
        const rhs = randomOperand(rand, p.dtype, rRoles.map((x) => x.e), true);
        const opts = { conjLhs: p.conjLhs, conjRhs: p.conjRhs };
        const got = await backend.dotGeneral(lhs, rhs, dims, opts);
        const want = naiveDotGeneral(lhs, rhs, dims, p.dtype.startsWith('c') ? opts : {});
        expect(got.shape).toEqual(want.shape);
        expect(relativeError((got.toArray() as number[]).map(Number), want.values)).toBeLessThanOrEqual(toleranceFor(p.dtype));
        expect(got.placement.cpuAffinity).toBe(0);
      }),
      { numRuns: 120, seed: 42 },
    );
    expect(backend.bufferPoolStats().outstanding).toBe(0);
  });

  it('matmul of a random 300×200 by 200×100 f64 equals the oracle within 1e-12 relative', async () => {
    const rand = seededRandom(7);
    const a = randomOperand(rand, 'f64', [300, 200], false);
    const b = randomOperand(rand, 'f64', [200, 100], false);
    const got = await backend.matmul(a, b);
    const want = naiveDotGeneral(a, b, { contracting: [[1], [0]] });
    expect(relativeError(got.toArray() as number[], want.values)).toBeLessThanOrEqual(1e-12);
  });

  it('zero-size outputs and k = 0 work', async () => {
    const empty = await backend.dotGeneral(Tensor.zeros('f64', [0, 3]), Tensor.zeros('f64', [3, 2]), { contracting: [[1], [0]] });
    expect(empty.shape).toEqual([0, 2]);
    const k0 = await backend.dotGeneral(Tensor.zeros('f64', [2, 0]), Tensor.zeros('f64', [0, 3]), { contracting: [[1], [0]] });
    expect(k0.toArray()).toEqual([0, 0, 0, 0, 0, 0]);
  });
});

describe('dotGeneralInto and tagging (R96–R99)', () => {
  it('keeps the caller\'s metadata, computes alpha·AB + beta·C', async () => {
    const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    const b = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);
    const out = Tensor.fromArray('f64', [2, 2], [1, 1, 1, 1]).withPlacement({ cpuAffinity: 7 });
    const r = await backend.dotGeneralInto(out, a, b, { contracting: [[1], [0]] }, { alpha: 2, beta: 3 });
    expect(r).toBe(out);
    expect(out.toArray()).toEqual([5, 7, 9, 11]);
    expect(out.placement.cpuAffinity).toBe(7);
  });

  it('accepts an output whose stepped-slice strides fail the sorted-stride rule but never overlap', async () => {
    const base = Tensor.zeros('f64', [4, 3]); // strides [1, 4]
    const out = base.slice([0, 4, 3]); // rows 0 and 3: extents [2, 3], strides [3, 4]
    expect(out.strides).toEqual([3, 4]);
    const a = Tensor.fromArray('f64', [2, 1], [1, 2]);
    const b = Tensor.fromArray('f64', [1, 3], [1, 10, 100]);
    await backend.dotGeneralInto(out, a, b, { contracting: [[1], [0]] });
    expect(out.toArray({ order: 'row' })).toEqual([1, 10, 100, 2, 20, 200]);
    expect(base.toArray({ order: 'row' })).toEqual([1, 10, 100, 0, 0, 0, 0, 0, 0, 2, 20, 200]);
  });

  it('fresh outputs carry the executing domain even when inputs carry another; inputs are never retagged', async () => {
    const a = Tensor.fromArray('f32', [2, 2], [1, 2, 3, 4]).withPlacement({ cpuAffinity: 5 });
    const r = await backend.matmul(a, a);
    expect(r.placement.cpuAffinity).toBe(0);
    expect(a.placement.cpuAffinity).toBe(5);
    expect(a.transpose().placement.cpuAffinity).toBe(5);
  });

  it('backend.reshape: a view keeps the source tag; a copy is fresh and tagged', async () => {
    const t = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]).withPlacement({ cpuAffinity: 9 });
    const view = await backend.reshape(t, [3, 2]);
    expect(view.buffer).toBe(t.buffer);
    expect(view.placement.cpuAffinity).toBe(9);
    const copy = await backend.reshape(t.transpose(), [6]);
    expect(copy.buffer).not.toBe(t.buffer);
    expect(copy.placement.cpuAffinity).toBe(0);
    expect(copy.toArray()).toEqual(t.transpose().toArray());
  });

  it('matmul names the operand that is not a matrix', async () => {
    const m = Tensor.zeros('f64', [2, 2]);
    const cube = Tensor.zeros('f64', [2, 2, 2]);
    expect((await expectCode(backend.matmul([1] as never, m), 'InvalidArgument', 'Validation')).detail).toMatchObject({ param: 'a' });
    expect((await expectCode(backend.matmul(m, {} as never), 'InvalidArgument', 'Validation')).detail).toMatchObject({ param: 'b' });
    expect((await expectCode(backend.matmul(cube, m), 'InvalidArgument', 'Validation')).detail).toMatchObject({ param: 'a.shape' });
    expect((await expectCode(backend.matmul(m, cube), 'InvalidArgument', 'Validation')).detail).toMatchObject({ param: 'b.shape' });
  });

  const a = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]);
  const b = Tensor.fromArray('f64', [3, 2], [1, 2, 3, 4, 5, 6]);
  const cases: [string, string, () => Promise<unknown>, (out: Tensor) => Promise<unknown>][] = [
    ['lhs/rhs dtype', 'DTypeMismatch', () => backend.dotGeneral(a, Tensor.zeros('f32', [3, 2]), { contracting: [[1], [0]] }), (o) => backend.dotGeneralInto(o, a, Tensor.zeros('f32', [3, 2]), { contracting: [[1], [0]] })],
    ['alpha dtype', 'DTypeMismatch', () => backend.dotGeneralInto(Tensor.zeros('f64', [2, 2]), a, b, { contracting: [[1], [0]] }, { alpha: [1, 0] }), (o) => backend.dotGeneralInto(o, a, b, { contracting: [[1], [0]] }, { beta: [0, 1] })],
    ['integers', 'UnsupportedDType', () => backend.matmul(Tensor.zeros('i32', [2, 2]), Tensor.zeros('i32', [2, 2])), (o) => backend.dotGeneralInto(o, a, b, { contracting: [[1], [0]] }, { alpha: 'x' as never })],
    ['axis out of bounds', 'AxisOutOfBounds', () => backend.dotGeneral(a, b, { contracting: [[2], [0]] }), (o) => backend.dotGeneralInto(o, a, b, { contracting: [[1], [5]] })],
    ['duplicate axis', 'DuplicateAxis', () => backend.dotGeneral(a, a, { contracting: [[1, 1], [1, 0]] }), (o) => backend.dotGeneralInto(o, a, b, { contracting: [[1, 1], [0, 0]] })],
    ['role conflict', 'AxisRoleConflict', () => backend.dotGeneral(a, a, { contracting: [[1], [1]], batch: [[1], [0]] }), (o) => backend.dotGeneralInto(o, a, a, { contracting: [[0], [0]], batch: [[0], [1]] })],
    ['count mismatch', 'InvalidArgument', () => backend.dotGeneral(a, b, { contracting: [[1], [0, 1]] }), (o) => backend.dotGeneralInto(o, a, b, { contracting: [[1, 0], [0]] })],
    ['contracted extents', 'ShapeMismatch', () => backend.dotGeneral(a, b, { contracting: [[0], [0]] }), (o) => backend.dotGeneralInto(o, a, b, { contracting: [[0], [0]] })],
    ['output shape', 'ShapeMismatch', () => backend.dotGeneralInto(Tensor.zeros('f64', [3, 3]), a, b, { contracting: [[1], [0]] }), (o) => backend.dotGeneralInto(o.reshape([4]), a, b, { contracting: [[1], [0]] })],
    ['aliasing output', 'OutputAliasing', () => backend.dotGeneralInto(Tensor.fromDescriptor({ dtype: 'f64', shape: [2, 2], strides: [0, 1], offset: 0, buffer: new SharedArrayBuffer(64) }), a, b, { contracting: [[1], [0]] }), (o) => backend.dotGeneralInto(o, Tensor.fromDescriptor({ ...o.descriptor(), shape: [2, 3], strides: [1, 2], offset: 0 }), b, { contracting: [[1], [0]] })],
    ['not a tensor', 'InvalidArgument', () => backend.dotGeneral([1] as never, b, { contracting: [[1], [0]] }), (o) => backend.dotGeneralInto(o, a, {} as never, { contracting: [[1], [0]] })],
  ];
  it.each(cases)('%s → %s, before anything is written or tagged', async (_name, code, fresh, into) => {
    await expectCode(fresh(), code, code === 'UnsupportedDType' ? 'Unsupported' : 'Validation');
    const out = Tensor.fromArray('f64', [2, 2], [9, 9, 9, 9]);
    const base = Tensor.fromArray('f64', [8], [9, 9, 9, 9, 9, 9, 9, 9]);
    const outInBase = Tensor.fromDescriptor({ ...base.descriptor(), shape: [2, 2], strides: [1, 2] });
    const target = code === 'OutputAliasing' ? outInBase : out;
    const targetBefore = new Uint8Array(target.buffer.slice(0));
    await expect(into(target)).rejects.toMatchObject({ code: expect.any(String) });
    expect(new Uint8Array(target.buffer)).toEqual(targetBefore);
    expect(target.placement.cpuAffinity).toBeUndefined();
  });
});

describe('GEMM analysis cache (R116, R117)', () => {
  it('reuses a slot only for identical layouts and rebinds on another bundle', async () => {
    const b1 = await CpuBackend.create({ threads: 1 });
    try {
      const x = Tensor.fromArray('f64', [3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]);
      await b1.matmul(x, x, { analysisSlot: 3 });
      await b1.matmul(x, x, { analysisSlot: 3 });
      let s = b1.analysisCacheStats()!;
      expect(s.stored).toBe(1);
      expect(s.hits).toBe(1);
      await b1.matmul(x.transpose(), x, { analysisSlot: 3 }); // other strides: miss, replaces
      s = b1.analysisCacheStats()!;
      expect(s.hits).toBe(1);
      await b1.matmul(x, x, { analysisSlot: 5000 }); // beyond capacity: not stored
      expect(b1.analysisCacheStats()!.stored).toBe(1);
      const other = b1.withProviderBundle(b1.providerBundle().toBuilder().build());
      await other.matmul(x, x, { analysisSlot: 3 });
      expect(b1.analysisCacheStats()!.stored).toBe(1);
      expect(b1.analysisCacheStats()!.hits).toBe(1);
    } finally {
      await b1.close();
    }
  });
});

describe('automatic GEMM analysis cache (calls without a slot)', () => {
  it('reuses the analysis of identical layouts, misses on other strides, is bounded by the capacity set on the backend', async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      const x = Tensor.fromArray('f64', [3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]);
      const want = (await b.matmul(x, x)).toArray();
      for (let i = 0; i < 3; i++) expect((await b.matmul(x, x)).toArray()).toEqual(want);
      let s = b.analysisCacheStats()!;
      expect(s).toMatchObject({ stored: 1, hits: 3, misses: 1 });
      // Transposed operand: other strides, its own entry, and the right answer.
      const xt = x.transpose();
      const viaView = (await b.matmul(xt, x)).toArray();
      const dense = Tensor.fromArray('f64', [3, 3], xt.toArray());
      expect(viaView).toEqual((await b.matmul(dense, x)).toArray());
      s = b.analysisCacheStats()!;
      expect(s.stored).toBe(2);
      // Capacity 1: only the most recent entry is kept; 0: nothing is retained.
      b.setAnalysisCacheCapacity(1);
      expect(b.analysisCacheStats()!.stored).toBe(0);
      await b.matmul(x, x);
      await b.matmul(xt, x);
      expect(b.analysisCacheStats()!).toMatchObject({ capacity: 1, stored: 1 });
      b.setAnalysisCacheCapacity(0);
      await b.matmul(x, x);
      expect(b.analysisCacheStats()!.stored).toBe(0);
      await expectCode(() => b.setAnalysisCacheCapacity(-1), 'InvalidArgument');
    } finally {
      await b.close();
    }
  });

  it('the capacity set before an engine exists applies to it when it is built', async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      b.setAnalysisCacheCapacity(7);
      await b.matmul(Tensor.zeros('f64', [2, 2]), Tensor.zeros('f64', [2, 2]));
      expect(b.analysisCacheStats()!.capacity).toBe(7);
    } finally {
      await b.close();
    }
  });
});

describe('reclaim (the contract\'s reclaim_buffer)', () => {
  it('a reclaimed output\'s storage is reused by the next fresh output, which is correct and zeroed where unwritten', async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      const x = Tensor.fromArray('f64', [16, 16], Array.from({ length: 256 }, (_, i) => (i % 5) - 2));
      const first = await b.matmul(x, x);
      const want = first.toArray();
      const storage = first.buffer;
      b.reclaim(first);
      b.reclaim(first); // twice: a no-op
      await expectCode(async () => first.toArray(), 'TensorDisposed');
      expect(b.bufferPoolStats().buffers).toBe(1);
      const second = await b.matmul(x, x);
      expect(second.buffer).toBe(storage);
      expect(second.toArray()).toEqual(want);
      expect(second.placement.cpuAffinity).toBe(0);
      expect(b.bufferPoolStats()).toMatchObject({ buffers: 0, outstanding: 0 });
      // a smaller product reuses the larger storage; the view covers only what it needs
      b.reclaim(second);
      const small = await b.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]));
      expect(small.buffer).toBe(storage);
      expect(small.toArray()).toEqual([1, 2, 3, 4]);
      await expectCode(() => b.reclaim({} as never), 'InvalidArgument');
    } finally {
      await b.close();
    }
  });

  it('a failed operation returns its fresh storage to the pool', async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      const failing = b.withProviderBundle(
        b.providerBundle().toBuilder().gemmProvider({ ...b.providerBundle().gemm, name: 'failing', gemm: async () => { throw new Error('nope'); } }).build(),
      );
      const x = Tensor.fromArray('f64', [4, 4], Array.from({ length: 16 }, (_, i) => i));
      await expectCode(failing.matmul(x, x), 'ProviderFailed');
      expect(b.bufferPoolStats()).toMatchObject({ buffers: 1, outstanding: 0 });
    } finally {
      await b.close();
    }
  });
});
