// Algebraic properties of ops(): random shapes (rank 0–5) and random strided, permuted and
// broadcast views; each property exact in the dtypes where it holds exactly.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, type DType, type Tensor, type TensorOps, ops } from '../src/index.js';
import { randomView, seededRandom } from '../src/testing/index.js';

let backend: CpuBackend;
let o: TensorOps;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2, providers: [] });
  o = ops(backend);
});
afterAll(() => backend.close());

const shapeArb = fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 0, maxLength: 5 });
const seedArb = fc.integer();
const NUMERIC: DType[] = ['f32', 'f64', 'c64', 'c128', 'i32', 'i64'];
const arr = (t: Tensor) => t.toArray();

describe('algebra of ops()', () => {
  it('add and mul commute; a − a = 0; neg is an involution', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom(...NUMERIC), seedArb, async (shape, dtype, seed) => {
        const rand = seededRandom(seed);
        const a = randomView(rand, dtype, shape, { broadcast: true });
        const b = randomView(rand, dtype, shape, { broadcast: true });
        expect(arr(await o.add(a, b))).toEqual(arr(await o.add(b, a)));
        expect(arr(await o.mul(a, b))).toEqual(arr(await o.mul(b, a)));
        expect(arr(await o.sub(a, a)).every((v) => v === 0 || v === 0n)).toBe(true);
        expect(arr(await o.neg(await o.neg(a)))).toEqual(arr(a));
      }),
      { numRuns: 60 },
    );
  });

  it('broadcasting is a view: op(a, b) equals op on both operands materialised at the broadcast shape', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom<DType>('f64', 'i32', 'c64'), seedArb, async (shape, dtype, seed) => {
        const rand = seededRandom(seed);
        const short = shape.slice(0, Math.floor(rand() * (shape.length + 1))).map((e) => (rand() < 0.4 ? 1 : e));
        const a = randomView(rand, dtype, short);
        const b = randomView(rand, dtype, shape);
        const wide = await o.contiguous(o.broadcastTo(a, shape));
        expect(arr(await o.sub(a, b))).toEqual(arr(await o.sub(wide, b)));
        expect(arr(await o.sub(b, a))).toEqual(arr(await o.sub(b, wide)));
      }),
      { numRuns: 60 },
    );
  });

  it('integer sums compose: sum over A ∪ B = sum over B of the sum over A (keepDims), exactly, with wrapping', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom<DType>('i32', 'i64'), seedArb, async (shape, dtype, seed) => {
        const rand = seededRandom(seed);
        const t = randomView(rand, dtype, shape, {
          values: (r, d, n) => Array.from({ length: n }, () => (d === 'i64' ? BigInt.asIntN(64, BigInt(Math.floor(r() * 2 ** 52)) * 4096n) : Math.floor(r() * 2 ** 31))),
        });
        const axes = shape.map((_, i) => i);
        const A = axes.filter(() => rand() < 0.5);
        const B = axes.filter((x) => !A.includes(x));
        const once = await o.sum(t, { axes, keepDims: true });
        const twice = await o.sum(await o.sum(t, { axes: A, keepDims: true }), { axes: B, keepDims: true });
        expect(arr(twice)).toEqual(arr(once));
      }),
      { numRuns: 60 },
    );
  });

  it('argmax picks an element equal to max; permuting and materialising commute', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.constantFrom<DType>('f32', 'f64', 'i32', 'i64'), seedArb, async (shape, dtype, seed) => {
        const rand = seededRandom(seed);
        const t = randomView(rand, dtype, shape, { broadcast: true });
        const axis = shape.length === 0 ? undefined : Math.floor(rand() * shape.length);
        const opt = axis === undefined ? {} : { axes: [axis] };
        const max = arr(await o.max(t, opt));
        const at = arr(await o.argmax(t, opt)) as bigint[];
        const dense = arr(await o.contiguous(t));
        // Gather t at the argmax along `axis` (column-major positions).
        const stride = axis === undefined ? 1 : shape.slice(0, axis).reduce((a, e) => a * e, 1);
        const extent = axis === undefined ? 1 : shape[axis]!;
        max.forEach((m, q) => {
          const low = q % stride;
          const high = Math.floor(q / stride);
          expect(dense[low + stride * (Number(at[q]) + extent * high)]).toEqual(m);
        });
        const perm = shape.map((_, i) => i).sort(() => rand() - 0.5);
        const inverse = perm.map((_, i) => perm.indexOf(i));
        expect(arr(o.permute(await o.contiguous(o.permute(t, perm)), inverse))).toEqual(arr(t));
      }),
      { numRuns: 60 },
    );
  });

  it('cast round trips: i32 → f64 → i32 and f32 → f64 → f32 are identities; i32 → i64 → i32 too', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, seedArb, async (shape, seed) => {
        const rand = seededRandom(seed);
        const i = randomView(rand, 'i32', shape, { values: (r, _d, n) => Array.from({ length: n }, () => Math.floor(r() * 2 ** 32) - 2 ** 31) });
        expect(arr(await o.cast(await o.cast(i, 'f64'), 'i32'))).toEqual(arr(i));
        expect(arr(await o.cast(await o.cast(i, 'i64'), 'i32'))).toEqual(arr(i));
        const f = randomView(rand, 'f32', shape, { values: (r, _d, n) => Array.from({ length: n }, () => Math.fround((r() - 0.5) * 1e30)) });
        expect(arr(await o.cast(await o.cast(f, 'f64'), 'f32'))).toEqual(arr(f));
      }),
      { numRuns: 60 },
    );
  });
});
