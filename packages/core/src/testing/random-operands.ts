import { DTYPE_INFO, type DType } from '../tensor/dtype.js';
import { Tensor } from '../tensor/tensor.js';

/**
 * A small seeded PRNG (mulberry32), so failing conformance cases can be replayed.
 *
 * @example
 * ```ts
 * import { seededRandom } from '@tenferro/core/testing';
 *
 * const a = seededRandom(42);
 * const b = seededRandom(42);
 * const x = a();
 * console.log(x === b() && x >= 0 && x < 1); // prints: true
 * ```
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A uniform random integer in [lo, hi] drawn from `rand`.
 *
 * @example
 * ```ts
 * import { int, seededRandom } from '@tenferro/core/testing';
 *
 * const rand = seededRandom(1);
 * const n = int(rand, 1, 6);
 * console.log(n >= 1 && n <= 6 && Number.isInteger(n)); // prints: true
 * ```
 */
export const int = (rand: () => number, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

/**
 * Values in [-1, 1) (small integers/4 for exactness in f32), interleaved for complex.
 *
 * @example
 * ```ts
 * import { randomValues, seededRandom } from '@tenferro/core/testing';
 *
 * const values = randomValues(seededRandom(7), 'c64', 3); // 3 complex values: 6 numbers, re/im interleaved
 * console.log(values.length, values.every((v) => v >= -2 && v < 2 && Number.isInteger(v * 4))); // prints: 6 true
 * ```
 */
export function randomValues(rand: () => number, dtype: DType, count: number): number[] {
  return Array.from({ length: count * DTYPE_INFO[dtype].components }, () => (int(rand, -8, 7) / 4));
}

/**
 * A random matrix-like operand of logical shape `shape`: dense column-major, or — when `strided`
 * — a view that is permuted, padded (slice of a larger base) or both, the layouts providers
 * must handle. Without `strided`: column- or row-major only (what a BLAS expresses).
 *
 * @example
 * ```ts
 * import { randomOperand, seededRandom } from '@tenferro/core/testing';
 *
 * const rand = seededRandom(3);
 * const dense = randomOperand(rand, 'f64', [3, 4], false);
 * const view = randomOperand(rand, 'f64', [3, 4], true); // maybe permuted, maybe padded
 * console.log(dense.shape, view.shape, dense.isDense('col') || dense.isDense('row')); // prints: [ 3, 4 ] [ 3, 4 ] true
 * ```
 */
export function randomOperand(rand: () => number, dtype: DType, shape: readonly number[], strided: boolean): Tensor {
  const rank = shape.length;
  const perm = Array.from({ length: rank }, (_, i) => i);
  const choice = int(rand, 0, strided ? 3 : 1);
  if (choice === 1 || choice === 3) perm.reverse();
  if (strided && rank > 2 && rand() < 0.5) perm.sort(() => rand() - 0.5);
  const inv = perm.map((_, i) => perm.indexOf(i));
  const baseShape = perm.map((p) => shape[p]!);
  const pad = strided && choice >= 2 ? baseShape.map((e) => e + int(rand, 0, 2)) : baseShape;
  const size = pad.reduce((a, e) => a * e, 1);
  const base = Tensor.fromArray(dtype, pad, randomValues(rand, dtype, size));
  const sliced = pad === baseShape ? base : base.slice(...baseShape.map((e) => [0, e] as const));
  return sliced.permute(inv);
}
