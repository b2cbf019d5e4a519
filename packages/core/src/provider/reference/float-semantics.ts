/**
 * Floating-point functions whose JavaScript definition differs from C's, fixed to C's (IEEE 754)
 * so the reference and native kernels agree.
 */

/** C's `pow`: `pow(1, y)` and `pow(x, ±0)` are 1 even for NaN, `pow(-1, ±∞)` is 1 (JavaScript's `**` gives NaN for both). */
export function powReal(x: number, y: number): number {
  if (x === 1 || y === 0) return 1;
  if (x === -1 && (y === Infinity || y === -Infinity)) return 1;
  return Math.pow(x, y);
}
