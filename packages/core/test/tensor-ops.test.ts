// ops(backend | session): the documented semantics by example, validation order (errors before any
// allocation or write), the provider slot with its decline → reference fallback, and lifetimes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuTensorPrimitivesProvider,
  EXECUTED,
  Tensor,
  type TensorOps,
  Unsupported,
  ops,
  referenceTensorPrimitivesProvider,
} from '../src/index.js';
import { expectCode } from './helpers.js';

let backend: CpuBackend;
let o: TensorOps;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2, providers: [] });
  o = ops(backend);
});
afterAll(() => backend.close());

const row = (t: Tensor) => t.toArray({ order: 'row' });

describe('broadcasting: operands align at their leading axes', () => {
  const a = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6], { order: 'row' });

  it('a rank-1 operand is a column: [2, 3] + [2] adds v[i] to row i', async () => {
    const v = Tensor.fromArray('f64', [2], [10, 20]);
    expect(row(await o.add(a, v))).toEqual([11, 12, 13, 24, 25, 26]);
    expect(row(await o.add(v, a))).toEqual([11, 12, 13, 24, 25, 26]);
  });

  it('a matrix meets a batch of matrices axis for axis: [2, 3] · [2, 3, 2]', async () => {
    const batch = Tensor.fromArray('f64', [2, 3, 2], Array.from({ length: 12 }, (_, i) => i));
    const got = await o.mul(a, batch);
    expect(got.shape).toEqual([2, 3, 2]);
    const A = a.toArray();
    expect(got.toArray()).toEqual(batch.toArray().map((x, p) => x * A[p % 6]!));
  });

  it('equal ranks stretch size-1 axes: [2, 1] − [1, 3] is [2, 3]', async () => {
    const c = Tensor.fromArray('f64', [2, 1], [1, 2]);
    const r = Tensor.fromArray('f64', [1, 3], [10, 20, 30]);
    expect(row(await o.sub(c, r))).toEqual([-9, -19, -29, -8, -18, -28]);
  });

  it('trailing alignment (NumPy\'s) is not used: [2, 3] + [3] is ShapeMismatch, before anything is allocated', async () => {
    const before = backend.bufferPoolStats();
    const e = await expectCode(o.add(a, Tensor.fromArray('f64', [3], [1, 2, 3])), 'ShapeMismatch', 'Validation');
    expect(e.message).toContain('leading');
    expect(backend.bufferPoolStats()).toEqual(before);
  });

  it('broadcastTo is a stride-0 view of the same storage; permute is a view too', () => {
    const v = Tensor.fromArray('f32', [2], [1, 2]);
    const b = o.broadcastTo(v, [2, 3]);
    expect(b.strides).toEqual([1, 0]);
    expect(row(b)).toEqual([1, 1, 1, 2, 2, 2]);
    expect(b.buffer).toBe(v.buffer);
    const p = o.permute(a, [1, 0]);
    expect(p.buffer).toBe(a.buffer);
    expect(p.shape).toEqual([3, 2]);
  });
});

describe('integer and cast semantics never trap', () => {
  it('integer div: by zero → 0, INT_MIN / -1 → INT_MIN, truncation toward zero (i32 and i64)', async () => {
    const x = Tensor.fromArray('i32', [4], [7, -2147483648, -7, 5]);
    const y = Tensor.fromArray('i32', [4], [0, -1, 2, -2]);
    expect((await o.div(x, y)).toArray()).toEqual([0, -2147483648, -3, -2]);
    const X = Tensor.fromArray('i64', [3], [7n, -(2n ** 63n), -7n]);
    const Y = Tensor.fromArray('i64', [3], [0n, -1n, 2n]);
    expect((await o.div(X, Y)).toArray()).toEqual([0n, -(2n ** 63n), -3n]);
  });

  it('integer add, mul, neg and abs wrap', async () => {
    const x = Tensor.fromArray('i32', [2], [2147483647, -2147483648]);
    expect((await o.add(x, x)).toArray()).toEqual([-2, 0]);
    expect((await o.neg(x)).toArray()).toEqual([-2147483647, -2147483648]);
    expect((await o.abs(x)).toArray()).toEqual([2147483647, -2147483648]);
    expect((await o.mul(x, x)).toArray()).toEqual([1, 0]);
  });

  it('cast to an integer truncates, saturates and maps NaN to 0', async () => {
    const f = Tensor.fromArray('f64', [7], [NaN, 1e10, -1e10, 2.9, -2.9, Infinity, -Infinity]);
    expect((await o.cast(f, 'i32')).toArray()).toEqual([0, 2147483647, -2147483648, 2, -2, 2147483647, -2147483648]);
    expect((await o.cast(f, 'i64')).toArray()).toEqual([0n, 10000000000n, -10000000000n, 2n, -2n, 2n ** 63n - 1n, -(2n ** 63n)]);
    expect((await o.cast(Tensor.fromArray('i64', [2], [2n ** 40n, -(2n ** 40n)]), 'i32')).toArray()).toEqual([2147483647, -2147483648]);
  });

  it('cast i64 → f32 rounds once (not through f64); to bool is non-zero, NaN included; complex → real keeps the real part', async () => {
    const big = 2n ** 60n + 2n ** 36n + 1n; // just above the f32 halfway point; f64 would round it to the tie
    expect((await o.cast(Tensor.fromArray('i64', [1], [big]), 'f32')).toArray()).toEqual([2 ** 60 + 2 ** 37]);
    expect((await o.cast(Tensor.fromArray('f64', [3], [0, NaN, -0.5]), 'bool')).toArray()).toEqual([0, 1, 1]);
    expect((await o.cast(Tensor.fromArray('c128', [1], [3, 4]), 'f64')).toArray()).toEqual([3]);
    expect((await o.cast(Tensor.fromArray('f32', [1], [3]), 'c128')).toArray()).toEqual([3, 0]);
  });

  it('scale of f32 rounds alpha to f32 first: one correctly rounded f32 product', async () => {
    const x = Tensor.fromArray('f32', [1], [3]);
    expect((await o.scale(x, 0.1)).toArray()).toEqual([Math.fround(Math.fround(0.1) * 3)]);
  });

  it('pow follows C: pow(1, NaN) = 1, pow(-1, ±∞) = 1, pow(x, 0) = 1', async () => {
    const x = Tensor.fromArray('f64', [4], [1, -1, -1, NaN]);
    const y = Tensor.fromArray('f64', [4], [NaN, Infinity, -Infinity, 0]);
    expect((await o.pow(x, y)).toArray()).toEqual([1, 1, 1, 1]);
  });

  it('maximum/minimum propagate NaN and order −0 < +0; comparisons with NaN are false', async () => {
    const x = Tensor.fromArray('f64', [3], [NaN, -0, 1]);
    const y = Tensor.fromArray('f64', [3], [1, 0, NaN]);
    expect((await o.maximum(x, y)).toArray().map((v) => Object.is(v, 0) ? '+0' : v)).toEqual([NaN, '+0', NaN]);
    expect(Object.is((await o.minimum(x, y)).toArray()[1], -0)).toBe(true);
    expect((await o.eq(x, x)).toArray()).toEqual([0, 1, 1]);
    expect((await o.ge(x, y)).toArray()).toEqual([0, 1, 0]);
  });
});

describe('reductions', () => {
  const a = Tensor.fromArray('f64', [2, 3], [1, 5, 3, 4, 2, 6], { order: 'row' });

  it('axes (all by default, any order) and keepDims', async () => {
    expect((await o.sum(a)).shape).toEqual([]);
    expect((await o.sum(a)).toArray()).toEqual([21]);
    expect((await o.sum(a, { axes: [1] })).toArray()).toEqual([9, 12]);
    expect((await o.sum(a, { axes: [0], keepDims: true })).shape).toEqual([1, 3]);
    expect((await o.max(a, { axes: [1, 0] })).toArray()).toEqual([6]);
    expect((await o.mean(a, { axes: [0] })).toArray()).toEqual([2.5, 3.5, 4.5]);
    expect((await o.prod(a, { axes: [] })).toArray()).toEqual(a.toArray());
  });

  it('argmax/argmin: i64 flat index within the reduced axes (first reduced axis fastest), first of ties, first NaN', async () => {
    expect((await o.argmax(a, { axes: [1] })).toArray()).toEqual([1n, 2n]);
    expect((await o.argmin(a)).toArray()).toEqual([0n]);
    expect((await o.argmax(a)).toArray()).toEqual([5n]); // 6 is at [1, 2]: 1 + 2·2
    expect((await o.argmax(Tensor.fromArray('f32', [4], [1, 3, 3, NaN]))).toArray()).toEqual([3n]);
    expect((await o.argmax(Tensor.fromArray('i32', [3], [3, 3, 1]))).toArray()).toEqual([0n]);
  });

  it('over zero elements: sum 0, prod 1, mean NaN; max/min/argmax/argmin are EmptyReduction before allocating', async () => {
    const empty = Tensor.zeros('f64', [0, 2]);
    expect((await o.sum(empty, { axes: [0] })).toArray()).toEqual([0, 0]);
    expect((await o.prod(empty, { axes: [0] })).toArray()).toEqual([1, 1]);
    expect((await o.mean(empty, { axes: [0] })).toArray()).toEqual([NaN, NaN]);
    expect((await o.max(empty, { axes: [1] })).shape).toEqual([0]);
    const before = backend.bufferPoolStats();
    for (const f of [o.max, o.min, o.argmax, o.argmin]) await expectCode(f(empty, { axes: [0] }), 'EmptyReduction', 'Validation');
    expect(backend.bufferPoolStats()).toEqual(before);
  });

  it('norm is the 2-norm, real for complex tensors, and does not overflow when the squares would', async () => {
    expect((await o.norm(Tensor.fromArray('c128', [2], [3, 4, 0, 0]))).toArray()).toEqual([5]);
    expect((await o.norm(Tensor.fromArray('c64', [1], [3, 4]))).dtype).toBe('f32');
    expect((await o.norm(Tensor.fromArray('f64', [2], [3e200, 4e200]))).toArray()[0]).toBeCloseTo(5e200, -190);
  });

  it('pairwise summation: 10^7 values of 0.1 sum within (B − 1 + ⌈log2⌈n/B⌉⌉ + 1)·u·Σ|x| of 10^6; a running sum does not', async () => {
    const n = 1e7;
    const tenth = o.broadcastTo(Tensor.fromArray('f64', [1], [0.1]), [n]);
    const got = (await o.sum(tenth)).toArray()[0]!;
    const u = 2 ** -53;
    const bound = (16 - 1 + Math.ceil(Math.log2(Math.ceil(n / 16))) + 1) * u * n * 0.1;
    let running = 0;
    for (let i = 0; i < n; i++) running += 0.1;
    expect(Math.abs(got - n * 0.1)).toBeLessThanOrEqual(bound);
    expect(Math.abs(running - n * 0.1)).toBeGreaterThan(100 * bound);
    const f32 = (await o.sum(o.broadcastTo(Tensor.fromArray('f32', [1], [0.1]), [n]))).toArray()[0]!;
    expect(Math.abs(f32 - n * Math.fround(0.1))).toBeLessThanOrEqual(n * Math.fround(0.1) * 2 ** -24);
  });
});

describe('validation comes before any permit, allocation or write', () => {
  const f = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
  const cases: [string, (o: TensorOps) => Promise<unknown>, string][] = [
    ['dtype mismatch', (o) => o.add(f, Tensor.fromArray('f32', [2, 2], [1, 2, 3, 4]) as never), 'DTypeMismatch'],
    ['unsupported dtype (exp of i32)', (o) => o.exp(Tensor.fromArray('i32', [1], [1])), 'UnsupportedDType'],
    ['unsupported dtype (mean of i64)', (o) => o.mean(Tensor.fromArray('i64', [1], [1n])), 'UnsupportedDType'],
    ['unsupported dtype (lt of complex)', (o) => o.lt(Tensor.fromArray('c64', [1], [1, 0]), Tensor.fromArray('c64', [1], [1, 0])), 'UnsupportedDType'],
    ['unknown option key', (o) => o.add(f, f, { outt: f } as never), 'InvalidArgument'],
    ['options not an object', (o) => o.neg(f, 3 as never), 'InvalidArgument'],
    ['not a tensor', (o) => o.neg({ shape: [1] } as never), 'InvalidArgument'],
    ['out of the wrong shape', (o) => o.add(f, f, { out: Tensor.zeros('f64', [4]) }), 'ShapeMismatch'],
    ['out of the wrong dtype', (o) => o.lt(f, f, { out: Tensor.zeros('f64', [2, 2]) as never }), 'DTypeMismatch'],
    ['out overlapping an input', (o) => o.neg(f, { out: f }), 'OutputAliasing'],
    ['out overlapping itself (a broadcast view)', (o) => o.neg(Tensor.zeros('f64', [2, 2]), { out: o.broadcastTo(Tensor.zeros('f64', [2]), [2, 2]) }), 'OutputAliasing'],
    ['axis out of range', (o) => o.sum(f, { axes: [2] }), 'AxisOutOfBounds'],
    ['duplicate axis', (o) => o.sum(f, { axes: [0, 0] }), 'DuplicateAxis'],
    ['keepDims not a boolean', (o) => o.sum(f, { keepDims: 1 } as never), 'InvalidArgument'],
    ['alpha of the wrong kind', (o) => o.scale(f, [1, 2]), 'InvalidArgument'],
    ['alpha not an i32', (o) => o.scale(Tensor.fromArray('i32', [1], [1]), 0.5), 'InvalidArgument'],
    ['cast to an unknown dtype', (o) => o.cast(f, 'f16' as never), 'UnsupportedDType'],
    ['contiguous with a bad order', (o) => o.contiguous(f, { order: 'diagonal' as never }), 'InvalidArgument'],
    ['copyInto of another dtype', (o) => o.copyInto(Tensor.zeros('f32', [2, 2]), f as never), 'DTypeMismatch'],
    ['copyInto that does not broadcast', (o) => o.copyInto(Tensor.zeros('f64', [3, 2]), f), 'ShapeMismatch'],
    ['a disposed input', (o) => { const t = Tensor.zeros('f64', [1]); t.dispose(); return o.neg(t); }, 'TensorDisposed'],
  ];
  it.each(cases)('%s', async (_name, run, code) => {
    const out = Tensor.zeros('f64', [2, 2]);
    let calls = 0;
    const counting: CpuTensorPrimitivesProvider = {
      ...referenceTensorPrimitivesProvider,
      name: 'counting',
      binary: async () => (calls++, EXECUTED),
      unary: async () => (calls++, EXECUTED),
      reduce: async () => (calls++, EXECUTED),
    };
    const h = backend.withProviderBundle(backend.providerBundle().toBuilder().tensorPrimitivesProvider(counting).build());
    const before = backend.bufferPoolStats();
    const entries = backend.executionInfo().executorEntries.installs;
    const original = f.toArray();
    await expectCode(run(ops(h)), code);
    expect(backend.bufferPoolStats()).toEqual(before);
    expect(backend.executionInfo().executorEntries.installs).toBe(entries);
    expect(f.toArray()).toEqual(original);
    expect(out.toArray()).toEqual([0, 0, 0, 0]);
    expect(calls).toBe(0);
  });
});

describe('the tensorPrimitives provider, its declines and the reference fallback', () => {
  function fake(decline: (kind: string) => boolean, options: { write?: boolean; declares?: boolean } = {}) {
    const calls = { binary: 0, unary: 0, reduce: 0 };
    const provider: CpuTensorPrimitivesProvider = {
      name: 'fake tprims',
      executionCapabilities: () => referenceTensorPrimitivesProvider.executionCapabilities(),
      declaredSupport: () => ({ dtypes: ['f64'], stridedOperands: true, conjugation: false, declinesBeforeWriting: options.declares ?? true }),
      async binary(ctx, r) {
        calls.binary++;
        if (options.write) new Float64Array(r.out.buffer).fill(42);
        return decline(r.lhs.dtype) ? Unsupported.dtype(r.lhs.dtype) : referenceTensorPrimitivesProvider.binary(ctx, r);
      },
      async unary(ctx, r) {
        calls.unary++;
        return decline(r.src.dtype) ? Unsupported.of({ kind: 'accumulation' }) : referenceTensorPrimitivesProvider.unary(ctx, r);
      },
      async reduce(ctx, r) {
        calls.reduce++;
        return decline(r.src.dtype) ? Unsupported.layout('output') : referenceTensorPrimitivesProvider.reduce(ctx, r);
      },
    };
    const h = backend.withProviderBundle(backend.providerBundle().toBuilder().tensorPrimitivesProvider(provider).build());
    return { h, t: ops(h), calls };
  }

  it('what the provider accepts runs on it; what it declines runs on the reference, once, counted — and warned about once', async () => {
    const warnings: { code?: string; message: string }[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const { t, calls } = fake((d) => d !== 'f64');
      const x64 = Tensor.fromArray('f64', [3], [1, 2, 3]);
      const x32 = Tensor.fromArray('f32', [3], [1, 2, 3]);
      expect((await t.add(x64, x64)).toArray()).toEqual([2, 4, 6]);
      expect(t.referenceFallbacks()).toBe(0);
      expect((await t.add(x32, x32)).toArray()).toEqual([2, 4, 6]);
      expect((await t.neg(x32)).toArray()).toEqual([-1, -2, -3]);
      expect((await t.sum(x32)).toArray()).toEqual([6]);
      expect(calls).toEqual({ binary: 2, unary: 1, reduce: 1 });
      expect(t.referenceFallbacks()).toBe(3);
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      // never silently slow: the first fallback of the slot is reported, with the provider and the reason; the others are counted
      const fallbacks = warnings.filter((w) => w.code === 'TENFERRO_PRIMITIVE_FALLBACK');
      expect(fallbacks).toHaveLength(1);
      expect(fallbacks[0]!.message).toMatch(/fake tprims declined ops\.add \(.*f32.*\)/);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('into a caller-owned output too; a provider that wrote and then declined is ProviderContractViolation', async () => {
    const ok = fake(() => true);
    const out = Tensor.zeros('f64', [2]);
    const x = Tensor.fromArray('f64', [2], [1, 2]);
    await ok.t.mul(x, x, { out });
    expect(out.toArray()).toEqual([1, 4]);
    const liar = fake(() => true, { write: true, declares: false });
    await expectCode(liar.t.mul(x, x, { out: Tensor.zeros('f64', [2]) }), 'ProviderContractViolation');
    expect(liar.t.referenceFallbacks()).toBe(0);
  });

  it('a provider that throws is ProviderFailed; the pool gets its loan back', async () => {
    const provider = { ...referenceTensorPrimitivesProvider, name: 'boom', binary: async () => { throw new Error('boom'); } };
    const h = backend.withProviderBundle(backend.providerBundle().toBuilder().tensorPrimitivesProvider(provider).build());
    const x = Tensor.fromArray('f64', [2], [1, 2]);
    await expectCode(ops(h).add(x, x), 'ProviderFailed');
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });
});

describe('outputs, handles and sessions', () => {
  it('fresh outputs come from the engine pool, are tagged with the domain and go back on dispose', async () => {
    const x = Tensor.fromArray('f64', [64], Array.from({ length: 64 }, (_, i) => i));
    const y = await o.exp(x);
    expect(y.placement.cpuAffinity).toBe(0);
    const retained = backend.bufferPoolStats().buffers;
    y.dispose();
    expect(backend.bufferPoolStats().buffers).toBe(retained + 1);
    const z = await o.exp(x);
    expect(backend.bufferPoolStats().buffers).toBe(retained);
    z.dispose();
  });

  it('reductions without keepDims are views that drop the reduced axes, disposable like any output', async () => {
    const x = Tensor.fromArray('f64', [2, 3, 4], Array.from({ length: 24 }, (_, i) => i));
    const s = await o.sum(x, { axes: [1] });
    expect(s.shape).toEqual([2, 4]);
    expect(s.isDense('col')).toBe(true);
    s.dispose();
    expect(backend.bufferPoolStats().outstanding).toBe(0);
  });

  it('ops(session) runs on the session\'s entry; ops of anything else is InvalidArgument', async () => {
    const x = Tensor.fromArray('f64', [2], [3, 4]);
    const got = await backend.withBackendSession(async (s) => {
      const so = ops(s);
      const y = await so.mul(x, x);
      return (await so.sum(y)).toArray();
    });
    expect(got).toEqual([25]);
    await expectCode(async () => ops({} as never), 'InvalidArgument');
  });

  it('a closed backend is BackendClosed; an ended session is ContextExpired', async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    let kept: TensorOps | undefined;
    await b.withBackendSession((s) => void (kept = ops(s)));
    const x = Tensor.fromArray('f64', [1], [1]);
    await expectCode(kept!.neg(x), 'ContextExpired');
    const bo = ops(b);
    await b.close();
    await expectCode(bo.neg(x), 'BackendClosed');
  });

  it('an aborted signal rejects before admission', async () => {
    const x = Tensor.fromArray('f64', [2], [3, 4]);
    const before = backend.bufferPoolStats();
    await expectCode(o.neg(x, { signal: AbortSignal.abort() }), 'AdmissionAborted');
    expect(backend.bufferPoolStats()).toEqual(before);
  });

  it('transposing copies (tiled in the reference) of every dtype equal the source element by element, guard bands kept', async () => {
    for (const dtype of ['f64', 'c64', 'i64', 'bool'] as const) {
      const n = 40 * 70 * 3;
      const raw = Array.from({ length: n * (dtype === 'c64' ? 2 : 1) }, (_, i) => (dtype === 'i64' ? BigInt(i) : dtype === 'bool' ? i % 3 === 0 ? 1 : 0 : i));
      const src = Tensor.fromArray(dtype, [40, 70, 3], raw as never).permute([1, 2, 0]);
      const want = src.toArray();
      const conjWant = dtype === 'c64' ? (want as number[]).map((v, i) => (i % 2 === 1 ? -v : v)) : want;
      expect((await o.contiguous(src, { conjugate: true })).toArray()).toEqual(conjWant);
      expect((await o.contiguous(src, { order: 'row' })).toArray()).toEqual(want);
      // into a padded view: the 71st row of the base is a guard band
      const base = Tensor.zeros(dtype, [71, 3, 40]);
      const out = base.slice([0, 70], undefined, undefined);
      await o.copyInto(out, src);
      expect(out.toArray()).toEqual(want);
      expect(base.slice([70, 71], undefined, undefined).toArray().every((v) => v === 0 || v === 0n)).toBe(true);
    }
  });

  it('contiguous materialises any view (row order, conjugated) and copyInto broadcasts its source', async () => {
    const c = Tensor.fromArray('c128', [2, 2], [1, 1, 2, 2, 3, 3, 4, 4]).transpose();
    const d = await o.contiguous(c, { order: 'row', conjugate: true });
    expect(d.isDense('row')).toBe(true);
    expect(d.toArray()).toEqual([1, -1, 3, -3, 2, -2, 4, -4]);
    const out = Tensor.zeros('f32', [2, 3]);
    await o.copyInto(out, Tensor.fromArray('f32', [2], [7, 8]));
    expect(row(out)).toEqual([7, 7, 7, 8, 8, 8]);
  });
});
