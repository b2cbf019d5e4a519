// tenferro_blas.lapack(words, a, b, out0, out1, out2, info) directly (also run under ASan by
// `node packages/native-build/asan.mjs --only blas`, which runs this suite on the sanitizer build):
// every op in every dtype on small, strided, batched inputs — results checked where a short
// identity decides them — and descriptors the native side must refuse before reading or writing.
import { describe, expect, it } from 'vitest';
import { blasCandidates } from '../src/native/candidates.js';
import { BlasStatus } from '../src/native/binding.js';
import { loadBlas } from '../src/native/load.js';

const load = loadBlas();
const binding = load.available ? load.binding : undefined;
const symbols = (() => {
  if (binding === undefined) return null;
  binding.load({ candidates: [...blasCandidates()], coretype: '', coretypeOverwrite: false } as never);
  return binding.lapackSymbols();
})();
const haveLapack = symbols !== null && symbols.dgetrf === true && symbols.zgeev === true;

const HEADER = 16;
const SIZE = [4, 8, 8, 16];
/** Words for op on an m×n stack with `nb` batches along one axis, A (and B) strided by (1, ld) and batch stride `bs`. */
function words(op: number, dt: number, m: number, n: number, flags: number, batch: number, a: { off: number; rs: number; cs: number; bs: number }, b = a): Float64Array {
  const w = new Float64Array(HEADER + 3);
  w.set([op, dt, m, n, flags, 1, 1, a.off, a.rs, a.cs, b.off, b.rs, b.cs]);
  w[HEADER] = batch;
  w[HEADER + 1] = a.bs;
  w[HEADER + 2] = b.bs;
  return w;
}
/** A buffer of `count` elements of dtype dt with a diagonally dominant pattern (every op succeeds on it). */
function input(dt: number, rows: number, cols: number, ld: number, batch: number, bs: number, pad: number): Uint8Array {
  const comps = dt >= 2 ? 2 : 1;
  const len = (pad + (batch - 1) * bs + (cols - 1) * ld + rows) * comps;
  const f = dt === 0 || dt === 2 ? new Float32Array(len) : new Float64Array(len);
  for (let b = 0; b < batch; b++)
    for (let j = 0; j < cols; j++)
      for (let i = 0; i < rows; i++) {
        const at = (pad + b * bs + j * ld + i) * comps;
        f[at] = (i === j ? 4 + i : 0) + 1 / (1 + i + j + b);
        if (comps === 2 && i !== j) f[at + 1] = 0.1 * (i - j);
      }
  return new Uint8Array(f.buffer);
}

describe.skipIf(!haveLapack)('native lapack()', () => {
  it('runs every op (0–9) in every dtype, batched and strided, with LAPACK info 0', () => {
    for (let dt = 0; dt < 4; dt++)
      for (let op = 0; op <= 9; op++)
        for (const flags of [0, 1 | 2 | 16, 8 | 16, 32 | 4]) {
          const m = 4, n = op === 0 || op >= 7 ? 4 : 3, batch = 3, ld = 6, bs = 30, pad = 2;
          const rows = op === 1 && !(flags & 2) ? n : m, cols = op === 1 || op === 4 ? rows : n;
          const a = input(dt, Math.max(rows, m), Math.max(cols, n, m), ld, batch, bs, pad);
          const b = input(dt, m, n, ld, batch, bs, pad);
          const outs = [0, 1, 2].map(() => new Uint8Array(batch * 16 * 16 * 16));
          const info = new Int32Array(batch).fill(-7);
          const s = binding!.lapack(words(op, dt, m, n, flags, batch, { off: pad, rs: 1, cs: ld, bs }), a, b, outs[0]!, outs[1]!, outs[2]!, info);
          expect(s, `op ${op} dtype ${dt} flags ${flags}`).toBe(BlasStatus.Ok);
          expect(Array.from(info), `op ${op} dtype ${dt} flags ${flags}`).toEqual([0, 0, 0]);
        }
  });

  it('cholesky in f64: L·Lᵀ = A and zeros above the diagonal', () => {
    const a = new Float64Array([4, 2, 2, 3]);
    const out = new Float64Array(4);
    const info = new Int32Array(1);
    expect(binding!.lapack(words(0, 1, 2, 2, 0, 1, { off: 0, rs: 1, cs: 2, bs: 0 }), new Uint8Array(a.buffer), new Uint8Array(a.buffer), new Uint8Array(out.buffer), new Uint8Array(8), new Uint8Array(8), info)).toBe(0);
    expect(Array.from(out)).toEqual([2, 1, 0, Math.SQRT2]);
  });

  it('refuses, before reading or writing, what the checks forbid', () => {
    const a = new Uint8Array(8 * 16), out = new Uint8Array(8 * 16), info = new Int32Array(2);
    const before = out.slice();
    const call = (w: Float64Array, o = out, i = info) => binding!.lapack(w, a, a, o, o, o, i);
    const ok = { off: 0, rs: 1, cs: 4, bs: 0 };
    expect(call(words(10, 1, 2, 2, 0, 1, ok))).toBe(BlasStatus.BadDescriptor);
    expect(call(words(0, 4, 2, 2, 0, 1, ok))).toBe(BlasStatus.BadDType);
    expect(call(words(0, 1, 2.5, 2, 0, 1, ok))).toBe(BlasStatus.BadDescriptor);
    expect(call(words(0, 1, 2, 2, 64, 1, ok))).toBe(BlasStatus.BadDescriptor);
    expect(call(words(0, 1, 2, 2, 0, 1, { ...ok, off: 15 }))).toBe(BlasStatus.OutOfBoundsA);
    expect(call(words(4, 1, 2, 2, 0, 1, ok, { ...ok, off: 2 ** 52 }))).toBe(BlasStatus.OutOfBoundsB);
    expect(call(words(0, 1, 2, 2, 0, 1, { ...ok, rs: -1 }))).toBe(BlasStatus.OutOfBoundsA);
    expect(call(words(0, 1, 60000, 60000, 0, 1, ok))).toBe(BlasStatus.TooLarge);
    expect(call(words(6, 1, 2 ** 31 - 1, 1, 0, 1, ok))).toBe(BlasStatus.TooLarge);
    expect(call(words(0, 1, 4, 4, 0, 2, ok), new Uint8Array(8 * 16))).toBe(BlasStatus.OutOfBoundsC);
    expect(call(words(0, 1, 2, 2, 0, 2, ok), out, new Int32Array(1))).toBe(BlasStatus.OutOfBoundsC);
    expect(call(words(0, 1, 2, 2, 0, 1, ok), out.subarray(1))).toBe(BlasStatus.Misaligned);
    expect(binding!.lapack(new Float64Array(8), a, a, out, out, out, info)).toBe(BlasStatus.BadDescriptor);
    expect(Array.from(out)).toEqual(Array.from(before));
    expect(Array.from(info)).toEqual([0, 0]);
  });
});
