import { DTYPE_INFO, type DType } from '../tensor/dtype.js';
import { Tensor } from '../tensor/tensor.js';
import { int } from './random-operands.js';

/** What {@link randomView} may produce besides a dense column-major tensor. */
export interface RandomViewOptions {
  /** Permuted axes, padded bases with offsets and stepped slices (default true). */
  readonly strided?: boolean;
  /** Axes of extent 1 in `shape` may be stretched views of stride 0 (inputs only; default false). */
  readonly broadcast?: boolean;
  /** Values in the view (default: small multiples of 1/4 in [-2, 2), exact in every float dtype). */
  readonly values?: (rand: () => number, dtype: DType, count: number) => (number | bigint)[];
}

/**
 * Small values exact in every dtype: multiples of 1/4 for floats, small integers, 0/1 for bool; complex interleaved.
 *
 * @example
 * ```ts
 * import { randomElementValues, seededRandom } from '@tenferro/core/testing';
 *
 * const rand = seededRandom(5);
 * console.log(randomElementValues(rand, 'i64', 2).every((v) => typeof v === 'bigint')); // prints: true
 * console.log(randomElementValues(rand, 'bool', 4).every((v) => v === 0 || v === 1)); // prints: true
 * ```
 */
export function randomElementValues(rand: () => number, dtype: DType, count: number): (number | bigint)[] {
  const n = count * DTYPE_INFO[dtype].components;
  if (dtype === 'bool') return Array.from({ length: n }, () => int(rand, 0, 1));
  if (dtype === 'i64') return Array.from({ length: n }, () => BigInt(int(rand, -9, 9)));
  if (dtype === 'i32') return Array.from({ length: n }, () => int(rand, -9, 9));
  return Array.from({ length: n }, () => int(rand, -8, 7) / 4);
}

/**
 * A random view of logical shape `shape`: dense, or — with `strided` — a permuted view of a
 * padded base (an offset into it), or a stepped slice; with `broadcast`, axes of extent 1 may
 * instead be a stride-0 view of one element. Its base storage is a fresh tensor filled with
 * `values`, so views never share memory with anything else.
 *
 * @example
 * ```ts
 * import { randomView, seededRandom } from '@tenferro/core/testing';
 *
 * const rand = seededRandom(11);
 * const view = randomView(rand, 'i32', [2, 3], { strided: true, broadcast: true });
 * console.log(view.shape, view.dtype); // prints: [ 2, 3 ] i32
 * console.log(randomView(rand, 'f32', [4], { strided: false }).isDense('col')); // prints: true
 * ```
 */
export function randomView(rand: () => number, dtype: DType, shape: readonly number[], options: RandomViewOptions = {}): Tensor {
  const strided = options.strided ?? true;
  const values = options.values ?? randomElementValues;
  const rank = shape.length;
  // Axes the view stretches (stride 0): extent 1 in the base, `shape[t]` in the view — only for `broadcast`.
  const stretched = shape.map((e) => options.broadcast === true && e > 1 && rand() < 0.3);
  const logical = shape.map((e, t) => (stretched[t] ? 1 : e));
  const perm = Array.from({ length: rank }, (_, i) => i);
  if (strided && rank > 1 && rand() < 0.6) perm.sort(() => rand() - 0.5);
  const inv = perm.map((_, i) => perm.indexOf(i));
  const step = strided && rank > 0 && rand() < 0.3 ? 2 : 1;
  const baseShape = perm.map((p) => logical[p]!);
  const lead = strided && rand() < 0.5 ? 1 : 0;
  const padded = baseShape.map((e, t) => (t === 0 ? lead : 0) + (e === 0 ? 0 : (e - 1) * step + 1) + (strided ? int(rand, 0, 1) : 0));
  const size = padded.reduce((a, e) => a * e, 1);
  const base = Tensor.fromArray(dtype, padded, values(rand, dtype, size) as never);
  const ranges = baseShape.map((e, t) => {
    const start = t === 0 ? lead : 0;
    return step === 1 || e === 0 ? ([start, start + e] as const) : ([start, start + (e - 1) * step + 1, step] as const);
  });
  let view = rank === 0 ? base : base.slice(...ranges).permute(inv);
  if (stretched.some(Boolean)) {
    const d = view.descriptor();
    view = Tensor.fromDescriptor({ ...d, shape: [...shape], strides: d.strides.map((s, t) => (stretched[t] ? 0 : s)) });
  }
  return view;
}
