import fc from 'fast-check';
import { expectThrows } from './helpers.js';
import { describe, expect, it } from 'vitest';
import { TenferroError } from '../src/errors/tenferro-error.js';
import { DTYPE_INFO, DTYPES, type DType } from '../src/tensor/dtype.js';
import { validateLayout } from '../src/tensor/layout.js';
import { type SliceRange, Tensor } from '../src/tensor/tensor.js';

// ---- helpers -----------------------------------------------------------------------------------


/** Counts SharedArrayBuffer constructions while `fn` runs (to prove validation precedes allocation). */
function allocations(fn: () => unknown): number {
  const Original = globalThis.SharedArrayBuffer;
  let count = 0;
  globalThis.SharedArrayBuffer = new Proxy(Original, {
    construct(target, args) {
      count++;
      return Reflect.construct(target, args) as object;
    },
  });
  try {
    fn();
  } catch {
    // the caller checks the error separately
  } finally {
    globalThis.SharedArrayBuffer = Original;
  }
  return count;
}

/** Every multi-index of `shape`, first axis fastest (`col`) or last axis fastest (`row`). */
function indices(shape: readonly number[], order: 'col' | 'row' = 'col'): number[][] {
  let out: number[][] = [[]];
  const axes = shape.map((_, i) => i);
  if (order === 'col') axes.reverse(); // build slowest axis first
  for (const axis of axes) {
    const next: number[][] = [];
    for (const prefix of out) for (let i = 0; i < shape[axis]!; i++) next.push([...prefix, i]);
    out = next;
  }
  // entries were built in `axes` order; put them back in axis order
  return out.map((idx) => {
    const r = new Array<number>(shape.length);
    axes.forEach((axis, k) => (r[axis] = idx[k]!));
    return r;
  });
}

function colLinear(idx: readonly number[], shape: readonly number[]): number {
  let lin = 0;
  for (let k = shape.length - 1; k >= 0; k--) lin = lin * shape[k]! + idx[k]!;
  return lin;
}

const product = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

function addresses(t: { shape: readonly number[]; strides: readonly number[]; offset: number }): number[] {
  return indices(t.shape).map((idx) => idx.reduce((a, i, k) => a + i * t.strides[k]!, t.offset));
}

/** Whether some non-negative strides view `parent` (in column-major linear order) as `target` — brute force. */
function reshapeOracle(parent: Tensor, target: readonly number[]): boolean {
  const a = addresses(parent);
  if (a.length === 0) return true;
  const strides = target.map((e, j) => (e > 1 ? a[product(target.slice(0, j))]! - a[0]! : 0));
  if (strides.some((s) => s < 0)) return false;
  return indices(target).every((idx, lin) => a[lin] === idx.reduce((acc, i, k) => acc + i * strides[k]!, a[0]!));
}

const layoutOf = (t: Tensor) => ({ shape: [...t.shape], strides: [...t.strides], offset: t.offset });

// ---- arbitraries: a base tensor and a chain of view operations -----------------------------------

const extentArb = fc.oneof({ arbitrary: fc.integer({ min: 1, max: 4 }), weight: 9 }, { arbitrary: fc.constant(0), weight: 1 });
const baseArb = fc.record({
  shape: fc.array(extentArb, { maxLength: 4 }),
  order: fc.constantFrom<'col' | 'row'>('col', 'row'),
});
const stepArb = fc.record({
  kind: fc.constantFrom('permute', 'transpose', 'slice', 'reshape'),
  seeds: fc.array(fc.nat(1000), { minLength: 16, maxLength: 16 }),
});

interface Applied {
  view?: Tensor;
  /** Parent index of a view index (permute, transpose, slice). */
  parentIndex?: (idx: readonly number[]) => number[];
  target?: number[];
  error?: unknown;
}

function primeFactors(n: number): number[] {
  const f: number[] = [];
  for (let p = 2; n > 1; p++) while (n % p === 0) (f.push(p), (n /= p));
  return f;
}

function applyStep(t: Tensor, kind: string, seeds: readonly number[]): Applied {
  let cursor = 0;
  const next = () => seeds[cursor++ % seeds.length]!;
  const r = t.rank;
  if (kind === 'permute') {
    const perm = t.shape.map((_, i) => i);
    for (let i = r - 1; i > 0; i--) {
      const j = next() % (i + 1);
      [perm[i], perm[j]] = [perm[j]!, perm[i]!];
    }
    return {
      view: t.permute(perm),
      parentIndex: (idx) => {
        const p = new Array<number>(r);
        perm.forEach((a, i) => (p[a] = idx[i]!));
        return p;
      },
    };
  }
  if (kind === 'transpose') return { view: t.transpose(), parentIndex: (idx) => [...idx].reverse() };
  if (kind === 'slice') {
    const k = next() % (r + 1);
    const ranges: SliceRange[] = [];
    for (let axis = 0; axis < k; axis++) {
      const e = t.shape[axis]!;
      const choice = next() % 4;
      if (choice === 1 && e > 0) ranges.push(next() % e);
      else if (choice >= 2) {
        const a = next() % (e + 1);
        const b = a + (next() % (e - a + 1));
        ranges.push(choice === 2 ? [a, b] : [a, b, 1 + (next() % 3)]);
      } else ranges.push(undefined);
    }
    return {
      view: t.slice(...ranges),
      parentIndex: (idx) => {
        const p: number[] = [];
        let v = 0;
        for (let axis = 0; axis < r; axis++) {
          const range = ranges[axis];
          if (typeof range === 'number') p.push(range);
          else if (range === undefined) p.push(idx[v++]!);
          else p.push(range[0] + idx[v++]! * (range[2] ?? 1));
        }
        return p;
      },
    };
  }
  // reshape: a random regrouping of the prime factors, a merge of two axes, or a split of one
  const size = t.size;
  let target: number[];
  const choice = next() % 3;
  if (size === 0) {
    target = choice === 0 ? [0] : choice === 1 ? [2, 0, 1] : [1, 0, 3];
  } else if (choice === 0) {
    const factors = primeFactors(size);
    for (let i = factors.length - 1; i > 0; i--) {
      const j = next() % (i + 1);
      [factors[i], factors[j]] = [factors[j]!, factors[i]!];
    }
    const rank = next() % 5;
    target = new Array<number>(rank).fill(1);
    if (rank === 0) target = size === 1 ? [] : [size];
    else for (const f of factors) target[next() % rank]! *= f;
  } else if (choice === 1 && r >= 2) {
    const a = next() % (r - 1);
    target = [...t.shape.slice(0, a), t.shape[a]! * t.shape[a + 1]!, ...t.shape.slice(a + 2)];
  } else {
    const a = next() % (r + 1);
    const e = a < r ? t.shape[a]! : 1;
    const divisors = Array.from({ length: e }, (_, i) => i + 1).filter((d) => e % d === 0);
    const d = divisors[next() % divisors.length]!;
    target = [...t.shape.slice(0, a), d, e / d, ...t.shape.slice(a + 1)];
  }
  const request = [...target];
  if (size > 0 && target.length > 0 && next() % 3 === 0) request[next() % target.length] = -1;
  try {
    return { view: t.reshape(request), target };
  } catch (error) {
    return { error, target };
  }
}

// ---- tests -------------------------------------------------------------------------------------

describe('Tensor.fromArray / toArray', () => {
  const scalarArb: Record<DType, fc.Arbitrary<number | bigint | boolean>> = {
    f32: fc.float(),
    f64: fc.double(),
    c64: fc.float(),
    c128: fc.double(),
    i32: fc.integer(),
    i64: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    bool: fc.boolean(),
  };
  const normal = (dtype: DType, v: number | bigint | boolean) => (dtype === 'bool' ? (v ? 1 : 0) : v);

  it.each(DTYPES.map((d) => [d]))('round-trips %s in both orders', (dtype) => {
    const components = DTYPE_INFO[dtype].components;
    const arb = fc
      .tuple(fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }), fc.constantFrom<'col' | 'row'>('col', 'row'))
      .chain(([shape, order]) =>
        fc.tuple(fc.constant(shape), fc.constant(order), fc.array(scalarArb[dtype], { minLength: product(shape) * components, maxLength: product(shape) * components })),
      );
    fc.assert(
      fc.property(arb, ([shape, order, data]) => {
        const t = Tensor.fromArray(dtype, shape, data as never, { order });
        expect(t.dtype).toBe(dtype);
        expect(t.shape).toEqual(shape);
        expect(t.size).toBe(product(shape));
        expect(t.isDense(order)).toBe(true);
        expect(t.buffer.byteLength - t.offset * DTYPE_INFO[dtype].bytes).toBeGreaterThanOrEqual(product(shape) * DTYPE_INFO[dtype].bytes);
        const expected = data.map((v) => normal(dtype, v));
        expect(t.toArray({ order })).toEqual(expected);
        // the other order: element at index idx moves from its position in `order` to its position in the other
        const other = order === 'col' ? 'row' : 'col';
        const pos = new Map(indices(shape, order).map((idx, i) => [idx.join(','), i]));
        const reordered = indices(shape, other).flatMap((idx) => {
          const i = pos.get(idx.join(','))!;
          return expected.slice(i * components, (i + 1) * components);
        });
        expect(t.toArray({ order: other })).toEqual(reordered);
        if (order === 'col') expect(t.toArray()).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('converts representations: i64 numbers to bigint, booleans and 0/1 to 0/1, typed arrays', () => {
    expect(Tensor.fromArray('i64', [3], [1, -2n, 2 ** 53 - 1]).toArray()).toEqual([1n, -2n, 2n ** 53n - 1n]);
    expect(Tensor.fromArray('bool', [4], [true, 0, 1, false]).toArray()).toEqual([1, 0, 1, 0]);
    expect(Tensor.fromArray('f64', [2], new Float64Array([1.5, 2.5])).toArray()).toEqual([1.5, 2.5]);
    expect(Tensor.fromArray('i32', [2], new Int32Array([-7, 7])).toArray()).toEqual([-7, 7]);
    expect(Tensor.fromArray('i64', [2], new BigInt64Array([5n, -5n])).toArray()).toEqual([5n, -5n]);
    expect(Tensor.fromArray('c64', [1], [1.5, -2]).toArray()).toEqual([1.5, -2]);
    const scalar = Tensor.fromArray('f64', [], [42]);
    expect([scalar.rank, scalar.size, scalar.toArray()]).toEqual([0, 1, [42]]);
  });

  it('stores dense in the requested order', () => {
    const col = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]);
    expect(col.strides).toEqual([1, 2]);
    expect([...new Float64Array(col.buffer)]).toEqual([1, 2, 3, 4, 5, 6]);
    const row = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6], { order: 'row' });
    expect(row.strides).toEqual([3, 1]);
    expect(row.toArray()).toEqual([1, 4, 2, 5, 3, 6]);
    expect(Tensor.fromArray('c128', [2, 2], [0, 0, 1, 1, 2, 2, 3, 3], { order: 'row' }).toArray()).toEqual([0, 0, 2, 2, 1, 1, 3, 3]);
  });

  it('zeros', () => {
    for (const dtype of DTYPES) {
      const t = Tensor.zeros(dtype, [2, 3], { order: 'row' });
      expect(t.strides).toEqual([3, 1]);
      expect(t.toArray()).toEqual(new Array(6 * DTYPE_INFO[dtype].components).fill(dtype === 'i64' ? 0n : 0));
    }
    const empty = Tensor.zeros('f32', [3, 0, 2]);
    expect([empty.size, empty.buffer.byteLength, empty.toArray()]).toEqual([0, 0, []]);
    expect(Tensor.zeros('f64', [2, 2]).strides).toEqual([1, 2]);
  });

  it('rejects every bad input with its code before allocating', () => {
    const cases: [() => unknown, string, string?][] = [
      [() => Tensor.fromArray('f64', [-1], []), 'InvalidArgument'],
      [() => Tensor.fromArray('f64', [1.5], [1]), 'InvalidArgument'],
      [() => Tensor.fromArray('f64', [Number.NaN], []), 'InvalidArgument'],
      [() => Tensor.fromArray('f64', 3 as never, [1, 2, 3]), 'InvalidArgument'],
      [() => Tensor.fromArray('f64', [2 ** 27, 2 ** 27], []), 'IntegerOverflow'],
      [() => Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5]), 'ShapeMismatch'],
      [() => Tensor.fromArray('c64', [2], [1, 2]), 'ShapeMismatch'],
      [() => Tensor.fromArray('f16' as DType, [1], [1]), 'UnsupportedDType', 'Unsupported'],
      [() => Tensor.fromArray(3 as never, [1], [1]), 'InvalidArgument'],
      [() => Tensor.fromArray('f64', [1], 'x' as never), 'InvalidArgument'],
      [() => Tensor.fromArray('f64', [1], ['1'] as never), 'InvalidArgument'],
      [() => Tensor.fromArray('i32', [1], [1.5]), 'InvalidArgument'],
      [() => Tensor.fromArray('i32', [1], [2 ** 31]), 'InvalidArgument'],
      [() => Tensor.fromArray('i64', [1], [2n ** 63n]), 'InvalidArgument'],
      [() => Tensor.fromArray('i64', [1], [0.5]), 'InvalidArgument'],
      [() => Tensor.fromArray('bool', [1], [2]), 'InvalidArgument'],
      [() => Tensor.fromArray('f64', [1], [1], { order: 'diag' as never }), 'InvalidArgument'],
      [() => Tensor.zeros('f64', [-2]), 'InvalidArgument'],
      [() => Tensor.zeros('f64', [2 ** 50]), 'IntegerOverflow'], // 2^53 bytes
      [() => Tensor.zeros('x' as DType, [1]), 'UnsupportedDType', 'Unsupported'],
    ];
    for (const [fn, code, kind] of cases) {
      expectThrows(fn, code, kind);
      expect(allocations(fn)).toBe(0);
    }
    expect(allocations(() => Tensor.fromArray('f64', [1], [1]))).toBe(1); // the probe sees allocations
  });

  it('error messages follow the house sentence', () => {
    const e = expectThrows(() => Tensor.fromArray('f64', [2, -1], []), 'InvalidArgument');
    expect(e.message).toBe('Tensor.fromArray: expected a non-negative safe integer for shape[1] but received -1 (number)');
    expect(e.op).toBe('Tensor.fromArray');
  });
});

describe('Tensor metadata', () => {
  it('is frozen, and descriptor() is a frozen snapshot', () => {
    const t = Tensor.fromArray('f32', [2, 2], [1, 2, 3, 4]);
    expect(Object.isFrozen(t)).toBe(true);
    expect(Object.isFrozen(t.shape) && Object.isFrozen(t.strides) && Object.isFrozen(t.placement)).toBe(true);
    expect(() => {
      (t as { offset: number }).offset = 1;
    }).toThrow(TypeError);
    expect(() => (t.shape as number[]).push(1)).toThrow(TypeError);
    const d = t.descriptor();
    expect(Object.isFrozen(d) && Object.isFrozen(d.shape) && Object.isFrozen(d.strides)).toBe(true);
    expect(d).toEqual({ dtype: 'f32', shape: [2, 2], strides: [1, 2], offset: 0, buffer: t.buffer });
  });

  it('fromDescriptor validates, copies the arrays, and takes a placement', () => {
    const buffer = new SharedArrayBuffer(6 * 8);
    new Float64Array(buffer).set([0, 1, 2, 3, 4, 5]);
    const shape = [2, 2];
    const t = Tensor.fromDescriptor({ dtype: 'f64', shape, strides: [2, 1], offset: 1, buffer }, { cpuAffinity: 3n });
    shape[0] = 99;
    expect(t.shape).toEqual([2, 2]);
    expect(t.toArray()).toEqual([1, 3, 2, 4]);
    expect(t.placement).toEqual({ cpuAffinity: 3n });
    expectThrows(() => Tensor.fromDescriptor({ dtype: 'f64', shape: [2, 2], strides: [2, 1], offset: 3, buffer }), 'ViewOutOfBounds');
    expectThrows(() => Tensor.fromDescriptor({ dtype: 'f64', shape: [2], strides: [1, 1], offset: 0, buffer }), 'RankMismatch');
    expectThrows(() => Tensor.fromDescriptor({ dtype: 'f64', shape: [2], strides: [1], offset: 0, buffer }, { cpuAffinity: -1 }), 'InvalidArgument');
    expectThrows(() => Tensor.fromDescriptor({ dtype: 'f64', shape: [2], strides: [1], offset: 0, buffer: new ArrayBuffer(16) as never }), 'InvalidArgument');
  });

  it('withPlacement keeps storage and layout; views keep placement and share storage', () => {
    const base = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]);
    expect(base.placement).toEqual({});
    const tagged = base.withPlacement({ cpuAffinity: 7 });
    expect(base.placement).toEqual({});
    expect(tagged.placement).toEqual({ cpuAffinity: 7 });
    expect([tagged.buffer, tagged.shape, tagged.strides, tagged.offset]).toEqual([base.buffer, base.shape, base.strides, base.offset]);
    expectThrows(() => base.withPlacement({ cpuAffinity: 1.5 }), 'InvalidArgument');
    const views = [tagged.permute([1, 0]), tagged.transpose(), tagged.slice(1), tagged.slice(undefined, [1, 3]), tagged.reshape([3, 2]), tagged.reshape([-1])];
    for (const v of views) {
      expect(v.buffer).toBe(base.buffer);
      expect(v.placement).toEqual({ cpuAffinity: 7 });
    }
    // write through one, read through the other
    const s = tagged.slice(1, [1, 3]); // elements (1,1) and (1,2)
    expect(s.toArray()).toEqual([4, 6]);
    new Float64Array(s.buffer)[s.offset + s.strides[0]!] = -6;
    expect(base.toArray()).toEqual([1, 2, 3, 4, 5, -6]);
    expect(tagged.transpose().toArray()).toEqual([1, 3, 5, 2, 4, -6]);
  });

  it('transpose of rank ≤ 1 keeps the layout', () => {
    for (const t of [Tensor.fromArray('f64', [], [1]), Tensor.fromArray('f64', [3], [1, 2, 3]).slice([0, 3, 2])]) {
      const u = t.transpose();
      expect([u.shape, u.strides, u.offset]).toEqual([t.shape, t.strides, t.offset]);
    }
    const m = Tensor.zeros('f32', [2, 3, 4]).transpose();
    expect([m.shape, m.strides]).toEqual([[4, 3, 2], [6, 2, 1]]);
    expect(m.isDense('row')).toBe(true);
    expect(m.isDense('col')).toBe(false);
  });

  it('slice semantics', () => {
    const t = Tensor.fromArray('i32', [3, 4], Array.from({ length: 12 }, (_, i) => i)); // t[i,j] = i + 3j
    expect(t.slice(1).toArray()).toEqual([1, 4, 7, 10]);
    expect(t.slice(undefined, 2).toArray()).toEqual([6, 7, 8]);
    expect(t.slice([0, 3, 2], [1, 4, 2]).toArray()).toEqual([3, 5, 9, 11]);
    expect(t.slice(2, 3).shape).toEqual([]);
    expect(t.slice(2, 3).toArray()).toEqual([11]);
    const empty = t.slice([3, 3], [4, 4]);
    expect([empty.shape, empty.size, empty.toArray()]).toEqual([[0, 0], 0, []]);
    expect(() => validateLayout(empty.descriptor(), 'test', 'view')).not.toThrow();
    expect(t.slice([1, 2, 5]).shape).toEqual([1, 4]);
  });

  it('rejects bad axes and ranges', () => {
    const t = Tensor.zeros('f64', [2, 3]);
    expectThrows(() => t.permute([0, 0]), 'DuplicateAxis');
    expectThrows(() => t.permute([0, 2]), 'AxisOutOfBounds');
    expectThrows(() => t.permute([-1, 0]), 'AxisOutOfBounds');
    expectThrows(() => t.permute([0, 1.5]), 'InvalidArgument');
    expectThrows(() => t.permute(['0', 1] as never), 'InvalidArgument');
    expectThrows(() => t.permute([0]), 'RankMismatch');
    expectThrows(() => t.permute('01' as never), 'InvalidArgument');
    expectThrows(() => t.slice(2), 'ViewOutOfBounds');
    expectThrows(() => t.slice(-1), 'ViewOutOfBounds');
    expectThrows(() => t.slice(0.5), 'InvalidArgument');
    expectThrows(() => t.slice([0, 3]), 'ViewOutOfBounds');
    expectThrows(() => t.slice([2, 1]), 'InvalidArgument');
    expectThrows(() => t.slice([0, 2, 0]), 'InvalidArgument');
    expectThrows(() => t.slice([0, 2, -1]), 'InvalidArgument');
    expectThrows(() => t.slice([0] as never), 'InvalidArgument');
    expectThrows(() => t.slice(0, 0, 0), 'RankMismatch');
    expectThrows(() => t.reshape([5]), 'ShapeMismatch');
    expectThrows(() => t.reshape([-1, -1]), 'InvalidArgument');
    expectThrows(() => t.reshape([-2, -3]), 'InvalidArgument');
    expectThrows(() => t.reshape([4, -1]), 'ShapeMismatch');
    expectThrows(() => Tensor.zeros('f64', [0, 3]).reshape([0, -1]), 'ShapeMismatch');
    expectThrows(() => t.reshape([1.5, 4]), 'InvalidArgument');
    expectThrows(() => t.isDense('diag' as never), 'InvalidArgument');
  });
});

describe('Tensor views against a naive index model', () => {
  it('permute, transpose, slice and reshape (chains of up to 4 ops)', () => {
    fc.assert(
      fc.property(baseArb, fc.array(stepArb, { minLength: 1, maxLength: 4 }), ({ shape, order }, steps) => {
        const size = product(shape);
        const data = Array.from({ length: size }, (_, i) => i + 1);
        let t: Tensor = Tensor.fromArray('f64', shape, data, { order }).withPlacement({ cpuAffinity: 5 });
        const base = t;
        for (const { kind, seeds } of steps) {
          const parentCol = t.toArray() as number[];
          const applied = applyStep(t, kind, seeds);
          if (applied.error !== undefined) {
            expect(TenferroError.is(applied.error, 'ReshapeNeedsCopy'), String(applied.error)).toBe(true);
            expect(reshapeOracle(t, applied.target!)).toBe(false);
            continue;
          }
          const view = applied.view!;
          let expected: number[];
          if (applied.parentIndex) {
            expected = indices(view.shape).map((idx) => parentCol[colLinear(applied.parentIndex!(idx), t.shape)]!);
          } else {
            expect(view.shape).toEqual(applied.target);
            expect(reshapeOracle(t, applied.target!)).toBe(true);
            expected = parentCol;
          }
          expect(view.toArray()).toEqual(expected);
          const rowExpected = indices(view.shape, 'row').map((idx) => expected[colLinear(idx, view.shape)]!);
          expect(view.toArray({ order: 'row' })).toEqual(rowExpected);
          expect(view.buffer).toBe(base.buffer);
          expect(view.placement).toBe(base.placement);
          expect(view.size).toBe(product(view.shape));
          expect(() => validateLayout(view.descriptor(), 'test', 'view')).not.toThrow();
          t = view;
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe('Tensor.reshape', () => {
  const iota = (shape: number[], order: 'col' | 'row' = 'col') =>
    Tensor.fromArray('f64', shape, Array.from({ length: product(shape) }, (_, i) => i), { order });

  it('is metadata-only on dense column-major layouts', () => {
    const t = iota([2, 3, 4]);
    for (const target of [[24], [6, 4], [2, 12], [4, 6], [4, 3, 2], [1, 24, 1], [2, 1, 3, 1, 4]]) {
      const r = t.reshape(target);
      expect(r.shape).toEqual(target);
      expect(r.isDense('col')).toBe(true);
      expect(r.offset).toBe(t.offset);
      expect(r.toArray()).toEqual(t.toArray());
    }
    expect(t.reshape([-1, 4]).shape).toEqual([6, 4]);
    expect(iota([]).reshape([1, 1]).toArray()).toEqual([0]);
    expect(iota([1, 1]).reshape([]).shape).toEqual([]);
  });

  it('ignores extent-1 axes, whatever their stride', () => {
    const buffer = new SharedArrayBuffer(6 * 8);
    new Float64Array(buffer).set([0, 1, 2, 3, 4, 5]);
    const t = Tensor.fromDescriptor({ dtype: 'f64', shape: [2, 1, 3], strides: [1, 999, 2], offset: 0, buffer });
    expect(t.reshape([6]).strides).toEqual([1]);
    expect(t.reshape([3, 1, 2]).toArray()).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('splits and merges compatible axes of permuted and sliced views', () => {
    const p = iota([2, 3, 4]).permute([2, 0, 1]); // shape [4,2,3], strides [6,1,2]
    expect(p.strides).toEqual([6, 1, 2]);
    const merged = p.reshape([4, 6]);
    expect(merged.strides).toEqual([6, 1]);
    expect(merged.toArray()).toEqual(p.toArray());
    const split = p.reshape([2, 2, 6]);
    expect(split.strides).toEqual([6, 12, 1]);
    expect(split.toArray()).toEqual(p.toArray());
    const cols = iota([4, 4]).slice(undefined, [0, 2]); // dense block
    expect(cols.reshape([8]).toArray()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const rows = iota([4, 4]).slice([0, 2]); // shape [2,4], strides [1,4]
    expect(rows.reshape([2, 2, 2]).strides).toEqual([1, 4, 8]);
    expect(iota([2, 3], 'row').transpose().reshape([6]).toArray()).toEqual([0, 1, 2, 3, 4, 5]);
    const stepped = iota([6]).slice([0, 6, 2]); // strides [2]
    expect(stepped.reshape([1, 3, 1]).toArray()).toEqual([0, 2, 4]);
    const odd = stepped.reshape([3, 1]).permute([1, 0]).slice(undefined, [0, 2]); // [1,2], strides [6,2]
    expect(odd.reshape([2]).toArray()).toEqual([0, 2]);
  });

  it('throws ReshapeNeedsCopy when the layout needs a copy', () => {
    const cases: [Tensor, number[]][] = [
      [iota([2, 3], 'row'), [6]],
      [iota([2, 3], 'row'), [3, 2]],
      [iota([2, 3, 4]).permute([1, 0, 2]), [3, 8]],
      [iota([4, 4]).slice([0, 2]), [8]],
      [iota([2, 3]).transpose(), [6]],
    ];
    for (const [t, target] of cases) {
      const e = expectThrows(() => t.reshape(target), 'ReshapeNeedsCopy');
      expect(e.detail).toMatchObject({ from: [...t.shape], to: target });
      expect(reshapeOracle(t, target)).toBe(false);
    }
  });

  it('zero-size tensors reshape to any zero-size shape', () => {
    const t = Tensor.zeros('c64', [3, 0, 2]).permute([2, 0, 1]);
    expect(t.reshape([0]).shape).toEqual([0]);
    expect(t.reshape([5, 0, 7]).toArray()).toEqual([]);
  });
});

describe('layout snapshots', () => {
  it('views report their layouts', () => {
    const t = Tensor.zeros('c128', [3, 4]);
    expect(layoutOf(t.slice([1, 3], [0, 4, 3]))).toEqual({ shape: [2, 2], strides: [1, 9], offset: 1 });
    expect(layoutOf(t.permute([1, 0]).slice(2))).toEqual({ shape: [3], strides: [1], offset: 6 });
  });
});

describe('tensor storage alignment', () => {
  it('tensors tenferro allocates start their data on a 64-byte line from 256 bytes on', async () => {
    const { sharedMemoryRange } = await import('@tenferro/os');
    const line = (t: Tensor) => Number((sharedMemoryRange(t.buffer).address + BigInt(t.offset * DTYPE_INFO[t.dtype].bytes)) % 64n);
    for (const [dtype, n] of [['f64', 32], ['f32', 64], ['c128', 16], ['c64', 32], ['i64', 40], ['i32', 100], ['bool', 300]] as const) {
      const data = Array.from({ length: n * DTYPE_INFO[dtype].components }, (_, i) => (dtype === 'bool' ? i % 2 : i % 7));
      const made = [Tensor.fromArray(dtype, [n], data as never), Tensor.zeros(dtype, [n])];
      for (const t of made) {
        expect(line(t), `${dtype} ${n}`).toBe(0);
        expect(t.toArray().length).toBe(n * (dtype === 'c64' || dtype === 'c128' ? 2 : 1));
      }
      expect(made[0]!.toArray().map(Number)).toEqual(data.map(Number));
    }
    // copied from an unshared typed array: aligned too, same values
    const copied = Tensor.from(new Float64Array(64).map((_, i) => i), [8, 8]);
    expect(line(copied)).toBe(0);
    expect(copied.toArray()).toEqual(Array.from({ length: 64 }, (_, i) => i));
    // small tensors are not padded
    expect(Tensor.zeros('f64', [4]).offset).toBe(0);
  });
});
