/**
 * The worker-side kernel of the built-in "scale rows": out(i, j) = s(i) · a(i, j) for a strided
 * matrix `a` (f32 or f64), a strided vector `s` and a dense column-major `out`. Words:
 * [dtype (0 f32, 1 f64), m, n, offA, rsA, csA, offS, sS, offOut]; buffers: [a, s, out].
 */
import type { KernelArgs } from '@tenferro/core';

export function scaleRowsKernel({ words, buffers }: KernelArgs): void {
  const [code, m, n, offA, rsA, csA, offS, sS, offOut] = Array.from(words.subarray(0, 9)) as [number, number, number, number, number, number, number, number, number];
  const view = (b: SharedArrayBuffer): Float32Array | Float64Array => (code === 0 ? new Float32Array(b) : new Float64Array(b));
  const a = view(buffers[0]!);
  const s = view(buffers[1]!);
  const out = view(buffers[2]!);
  for (let j = 0; j < n; j++) {
    for (let i = 0; i < m; i++) out[offOut + i + j * m] = s[offS + i * sS]! * a[offA + i * rsA + j * csA]!;
  }
}
