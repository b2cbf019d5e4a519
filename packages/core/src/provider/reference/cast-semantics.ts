/**
 * Conversions of `cast`, identical in every provider. To an integer dtype: truncation toward zero,
 * saturating at the dtype's range, NaN → 0. To a float dtype: round to nearest, ties to even,
 * rounded once (an i64 to f32 is not rounded through f64). To bool: non-zero (NaN included) → 1.
 * From complex to a real dtype: the real part. From bool: 0 or 1 (any non-zero byte is 1).
 */

const TWO_63 = 2 ** 63;
export const I64_MAX = 2n ** 63n - 1n;
export const I64_MIN = -(2n ** 63n);

/** A float to i32: truncate, saturate, NaN → 0. */
export function floatToI32(x: number): number {
  if (Number.isNaN(x)) return 0;
  if (x >= 2147483647) return 2147483647;
  if (x <= -2147483648) return -2147483648;
  return Math.trunc(x);
}

/** A float to i64: truncate, saturate, NaN → 0. */
export function floatToI64(x: number): bigint {
  if (Number.isNaN(x)) return 0n;
  if (x >= TWO_63) return I64_MAX;
  if (x <= -TWO_63) return I64_MIN;
  return BigInt(Math.trunc(x));
}

export function i64ToI32(x: bigint): number {
  if (x > 2147483647n) return 2147483647;
  if (x < -2147483648n) return -2147483648;
  return Number(x);
}

/** An i64 to the nearest f32 (ties to even), rounded once. */
export function i64ToF32(x: bigint): number {
  const negative = x < 0n;
  let m = negative ? -x : x;
  if (m <= 2n ** 53n) return Math.fround(Number(x));
  // Keep 24 significant bits, rounding the rest to nearest, ties to even; the result is exact in f64.
  const bits = m.toString(2).length;
  const drop = BigInt(bits - 24);
  const kept = m >> drop;
  const rest = m - (kept << drop);
  const half = 1n << (drop - 1n);
  let q = kept;
  if (rest > half || (rest === half && (kept & 1n) === 1n)) q += 1n;
  m = q << drop;
  const v = Number(m);
  return Math.fround(negative ? -v : v);
}
