import fc from 'fast-check';
import { expectThrows } from './helpers.js';
import { describe, expect, it } from 'vitest';
import { TenferroError } from '../src/errors/tenferro-error.js';
import { DTYPE_INFO, type DType } from '../src/tensor/dtype.js';
import {
  denseStrides,
  elementCount,
  isDenseLayout,
  type LayoutLike,
  layoutIsInjective,
  reachableSpan,
  validateLayout,
} from '../src/tensor/layout.js';
import { type SliceRange, Tensor } from '../src/tensor/tensor.js';


const f64 = (elements: number, extraBytes = 0) => new SharedArrayBuffer(elements * 8 + extraBytes);
const layout = (shape: number[], strides: number[], offset: number, buffer: SharedArrayBuffer, dtype: DType = 'f64'): LayoutLike => ({
  dtype,
  shape,
  strides,
  offset,
  buffer,
});

/** Every reachable element offset, brute force. */
function addresses(shape: readonly number[], strides: readonly number[], offset: number): number[] {
  let out = [offset];
  shape.forEach((extent, axis) => {
    const next: number[] = [];
    for (const a of out) for (let i = 0; i < extent; i++) next.push(a + i * strides[axis]!);
    out = next;
  });
  return out;
}

describe('validateLayout', () => {
  it('accepts exact fits and rejects one element past the end', () => {
    validateLayout(layout([2, 3], [1, 2], 0, f64(6)), 'op', 'lhs');
    validateLayout(layout([2, 3], [3, 1], 0, f64(6)), 'op', 'lhs');
    validateLayout(layout([2, 2], [1, 2], 2, f64(6)), 'op', 'lhs');
    validateLayout(layout([], [], 5, f64(6)), 'op', 'lhs');
    validateLayout(layout([3], [0], 0, f64(1)), 'op', 'lhs'); // broadcast-like stride 0 is a valid input layout
    const e = expectThrows(() => validateLayout(layout([2, 3], [1, 2], 1, f64(6)), 'Op.dot', 'rhs'), 'ViewOutOfBounds');
    expect(e.detail).toEqual({ role: 'rhs', maxOffset: 6, storageLength: 6 });
    expect(e.message).toMatch(/^Op\.dot: /);
    expectThrows(() => validateLayout(layout([2, 3], [1, 2], 0, f64(5, 7)), 'op', 'lhs'), 'ViewOutOfBounds'); // partial element
    expectThrows(() => validateLayout(layout([], [], 6, f64(6)), 'op', 'lhs'), 'ViewOutOfBounds');
    // storage length counts whole elements of the dtype (a complex element is one element)
    validateLayout(layout([2], [1], 0, new SharedArrayBuffer(32), 'c128'), 'op', 'out');
    expectThrows(() => validateLayout(layout([3], [1], 0, new SharedArrayBuffer(32), 'c128'), 'op', 'out'), 'ViewOutOfBounds');
    validateLayout(layout([32], [1], 0, new SharedArrayBuffer(32), 'bool'), 'op', 'out');
  });

  it('zero-size views only need offset ≤ storage length', () => {
    validateLayout(layout([0, 3], [1, 100], 6, f64(6)), 'op', 'lhs');
    validateLayout(layout([0], [1], 0, new SharedArrayBuffer(0)), 'op', 'lhs');
    validateLayout(layout([5, 0], [1000, 1000], 0, new SharedArrayBuffer(0)), 'op', 'lhs');
    const e = expectThrows(() => validateLayout(layout([0, 3], [1, 1], 7, f64(6)), 'op', 'out'), 'ViewOutOfBounds');
    expect(e.detail).toMatchObject({ role: 'out', offset: 7, storageLength: 6 });
  });

  it('detects overflow of the element count and of the reachable offset', () => {
    expectThrows(() => validateLayout(layout([2 ** 27, 2 ** 27], [0, 0], 0, f64(1)), 'op', 'lhs'), 'IntegerOverflow');
    expectThrows(() => validateLayout(layout([2, 2], [2 ** 52, 2 ** 52], 0, f64(1)), 'op', 'lhs'), 'IntegerOverflow');
    expectThrows(() => validateLayout(layout([2], [1], Number.MAX_SAFE_INTEGER, f64(1)), 'op', 'lhs'), 'IntegerOverflow');
    // a zero extent makes the count 0, however large the others
    validateLayout(layout([2 ** 40, 2 ** 40, 0], [1, 1, 1], 0, f64(0)), 'op', 'lhs');
  });

  it('rejects a rank mismatch and bad numbers', () => {
    const b = f64(8);
    expectThrows(() => validateLayout(layout([2, 2], [1], 0, b), 'op', 'lhs'), 'RankMismatch');
    const bad: [LayoutLike, string][] = [
      [layout([-1], [1], 0, b), 'lhs.shape[0]'],
      [layout([1.5], [1], 0, b), 'lhs.shape[0]'],
      [layout([Number.NaN], [1], 0, b), 'lhs.shape[0]'],
      [layout([Infinity], [1], 0, b), 'lhs.shape[0]'],
      [layout(['2' as never], [1], 0, b), 'lhs.shape[0]'],
      [layout([2], [-1], 1, b), 'lhs.strides[0]'],
      [layout([2], [0.5], 0, b), 'lhs.strides[0]'],
      [layout([2], [1], -1, b), 'lhs.offset'],
      [layout([2], [1], 0.5, b), 'lhs.offset'],
      [layout([2], [1], 2n as never, b), 'lhs.offset'],
      [layout(3 as never, [1], 0, b), 'lhs.shape'],
      [layout([2], {} as never, 0, b), 'lhs.strides'],
      [layout([2], [1], 0, new ArrayBuffer(64) as never), 'lhs.buffer'],
    ];
    for (const [d, param] of bad) {
      const e = expectThrows(() => validateLayout(d, 'op', 'lhs'), 'InvalidArgument');
      expect(e.detail).toEqual({ param });
      expect(e.message).toMatch(new RegExp(`^op: expected .* for ${param.replace(/[[\]]/g, '\\$&')} but received .* \\(\\w+\\)$`));
    }
    expectThrows(() => validateLayout(layout([2], [1], 0, b, 'f16' as DType), 'op', 'lhs'), 'UnsupportedDType', 'Unsupported');
    expectThrows(() => validateLayout(null as never, 'op', 'lhs'), 'InvalidArgument');
  });

  it('accepts every view produced by Tensor ops (property)', () => {
    const extent = fc.integer({ min: 0, max: 4 });
    const arb = fc.record({
      shape: fc.array(extent, { maxLength: 4 }),
      dtype: fc.constantFrom<DType>('f32', 'c64', 'c128', 'i64', 'bool'),
      order: fc.constantFrom<'col' | 'row'>('col', 'row'),
      ops: fc.array(fc.tuple(fc.constantFrom('permute', 'transpose', 'slice', 'reshape'), fc.array(fc.nat(999), { minLength: 12, maxLength: 12 })), {
        maxLength: 5,
      }),
    });
    fc.assert(
      fc.property(arb, ({ shape, dtype, order, ops }) => {
        let t = Tensor.zeros(dtype, shape, { order });
        validateLayout(t.descriptor(), 'test', 'base');
        for (const [kind, seeds] of ops) {
          let c = 0;
          const next = () => seeds[c++ % seeds.length]!;
          const r = t.rank;
          if (kind === 'permute') {
            const perm = t.shape.map((_, i) => i);
            for (let i = r - 1; i > 0; i--) {
              const j = next() % (i + 1);
              [perm[i], perm[j]] = [perm[j]!, perm[i]!];
            }
            t = t.permute(perm);
          } else if (kind === 'transpose') t = t.transpose();
          else if (kind === 'slice') {
            const ranges: SliceRange[] = t.shape.map((e) => {
              const choice = next() % 3;
              if (choice === 0 && e > 0) return next() % e;
              const a = next() % (e + 1);
              return [a, a + (next() % (e - a + 1)), 1 + (next() % 3)] as const;
            });
            t = t.slice(...ranges);
          } else {
            try {
              t = t.reshape([-1]);
            } catch (e) {
              expect(TenferroError.is(e, 'ReshapeNeedsCopy')).toBe(true);
            }
          }
          validateLayout(t.descriptor(), 'test', 'view');
          // views of a fresh dense tensor never alias, and stay inside the dense span
          expect(layoutIsInjective(t.shape, t.strides)).toBe(true);
          const span = reachableSpan(t);
          if (span !== undefined) expect(span.last).toBeLessThan(t.buffer.byteLength / DTYPE_INFO[dtype].bytes);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('layoutIsInjective', () => {
  const bruteInjective = (shape: number[], strides: number[]) => {
    const a = addresses(shape, strides, 0);
    return new Set(a).size === a.length;
  };
  const small = fc.integer({ min: 1, max: 4 }).chain((rank) =>
    fc.tuple(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: rank, maxLength: rank }), fc.array(fc.integer({ min: 0, max: 8 }), { minLength: rank, maxLength: rank })),
  );

  it('never calls an aliasing layout injective (sound against brute force)', () => {
    fc.assert(
      fc.property(small, ([shape, strides]) => {
        if (layoutIsInjective(shape, strides)) expect(bruteInjective(shape, strides)).toBe(true);
        if (!bruteInjective(shape, strides)) expect(layoutIsInjective(shape, strides)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('is exact when the strides of the extent>1 axes form a divisibility chain', () => {
    // strides: a random chain s1 | s2 | … assigned to the axes in a random order
    const arb = fc.integer({ min: 1, max: 4 }).chain((rank) =>
      fc.tuple(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: rank, maxLength: rank }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: rank, maxLength: rank }),
        fc.array(fc.nat(), { minLength: rank, maxLength: rank }),
      ),
    );
    fc.assert(
      fc.property(arb, ([shape, factors, keys]) => {
        let s = 1;
        const chain = factors.map((f) => (s *= f));
        const order = shape.map((_, i) => i).sort((a, b) => keys[a]! - keys[b]! || a - b);
        const strides = new Array<number>(shape.length);
        order.forEach((axis, k) => (strides[axis] = chain[k]!));
        expect(layoutIsInjective(shape, strides)).toBe(bruteInjective(shape, strides));
      }),
      { numRuns: 2000 },
    );
  });

  it('known cases', () => {
    expect(layoutIsInjective([2, 3], [1, 2])).toBe(true);
    expect(layoutIsInjective([2, 3], [3, 1])).toBe(true);
    expect(layoutIsInjective([2, 3], [1, 1])).toBe(false);
    expect(layoutIsInjective([3, 1], [0, 0])).toBe(false);
    expect(layoutIsInjective([1, 5], [0, 1])).toBe(true); // extent-1 axes are ignored
    expect(layoutIsInjective([0, 5], [0, 0])).toBe(true); // zero-size
    expect(layoutIsInjective([], [])).toBe(true);
    // the axes interleave (addresses 0, 2, 3, 5): the sorted-stride rule fails, the exact check decides
    expect(layoutIsInjective([2, 2], [2, 3])).toBe(true);
    expect(bruteInjective([2, 2], [2, 3])).toBe(true);
    expect(layoutIsInjective([2, 3], [3, 4])).toBe(true); // a stepped slice of a dense [4, 3]
    // above 2^16 elements an interleaving layout is refused (conservative), though it never repeats
    expect(layoutIsInjective([2, 40_000], [3, 4])).toBe(false);
  });
});

describe('reachableSpan, denseStrides, elementCount', () => {
  it('reachableSpan matches brute force', () => {
    const arb = fc.record({
      shape: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 4 }),
      strides: fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 4, maxLength: 4 }),
      offset: fc.integer({ min: 0, max: 20 }),
    });
    fc.assert(
      fc.property(arb, ({ shape, strides, offset }) => {
        const s = strides.slice(0, shape.length);
        const a = addresses(shape, s, offset);
        const span = reachableSpan({ shape, strides: s, offset });
        if (a.length === 0) expect(span).toBeUndefined();
        else expect(span).toEqual({ first: Math.min(...a), last: Math.max(...a) });
      }),
      { numRuns: 1000 },
    );
  });

  it('denseStrides', () => {
    expect(denseStrides([2, 3, 4], 'col')).toEqual([1, 2, 6]);
    expect(denseStrides([2, 3, 4], 'row')).toEqual([12, 4, 1]);
    expect(denseStrides([], 'col')).toEqual([]);
    expect(denseStrides([2, 0, 3], 'col')).toEqual([1, 2, 0]);
    expect(denseStrides([2 ** 30, 2 ** 30, 2 ** 30, 0], 'col')).toEqual([1, 2 ** 30, 0, 0]); // unsafe strides of a zero-size shape are 0
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 4 }), fc.constantFrom<'col' | 'row'>('col', 'row'), (shape, order) => {
        const strides = denseStrides(shape, order);
        expect(isDenseLayout(shape, strides, order)).toBe(true);
        expect(layoutIsInjective(shape, strides)).toBe(true);
        const a = addresses(shape, strides, 0).sort((x, y) => x - y);
        expect(a).toEqual(a.map((_, i) => i)); // exactly 0 … size-1
      }),
    );
  });

  it('elementCount is checked', () => {
    expect(elementCount([], 'op')).toBe(1);
    expect(elementCount([2, 3, 4], 'op')).toBe(24);
    expect(elementCount([2 ** 60, 0], 'op')).toBe(0);
    expect(elementCount([2 ** 26, 2 ** 27 - 1], 'op')).toBe(2 ** 53 - 2 ** 26);
    const e = expectThrows(() => elementCount([2 ** 26, 2 ** 27], 'Backend.zeros'), 'IntegerOverflow'); // exactly 2^53
    expect(e.op).toBe('Backend.zeros');
  });
});
