/**
 * Integer arithmetic that never traps, identical in every provider: results wrap modulo 2^32 /
 * 2^64 (two's complement), division truncates toward zero, division by zero gives 0 and
 * `INT_MIN / -1` gives `INT_MIN` (the wrapped quotient).
 */

const I64_MIN = -(2n ** 63n);

export function divI32(x: number, y: number): number {
  if (y === 0) return 0;
  if (x === -2147483648 && y === -1) return x;
  // |x|, |y| < 2^31: the double quotient never rounds across an integer, so truncation is exact.
  return Math.trunc(x / y) | 0;
}

export function divI64(x: bigint, y: bigint): bigint {
  if (y === 0n) return 0n;
  if (x === I64_MIN && y === -1n) return x;
  return x / y;
}
