// tenferro_blas.lapack(words, a, b, out0, out1, out2, info) directly (also run under ASan by
// `node packages/native-build/asan.mjs --only blas`, which runs this suite on the sanitizer build):
// every op in every dtype on small, strided, batched inputs — outputs and info at offsets of their
// buffers (#35), results checked where a short identity decides them, LAPACK's raw results (no
// convention: @tenferro/linalg applies it) — and descriptors the native side must refuse before
// reading or writing; and the TypeScript side's descriptor checks.
import { describe, expect, it } from 'vitest';
import { type CpuExecutionContext, TenferroError } from '@tenferro/core';
import { createBlasProvider } from '../src/index.js';
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

const HEADER = 25;
const SIZE = [4, 8, 8, 16];
type Extents = readonly [rows: number, cols: number] | null;
/** The extents of op's outputs (as @tenferro/linalg's linalgOutputSpecs; a vector is rows × 1). */
function extents(op: number, m: number, n: number, flags: number): Extents[] {
  const k = Math.min(m, n), full = (flags & 8) !== 0, vec = (flags & 16) !== 0;
  switch (op) {
    case 0: return [[m, m], null, null];
    case 1: case 4: return [[m, n], null, null];
    case 2: return [[m, n], [k, 1], null];
    case 3: return [[m, m], [m, k], [k, n]];
    case 5: return [flags & 32 ? null : [m, full ? m : k], [full ? m : k, n], null];
    case 6: return vec ? [[m, full ? m : k], [k, 1], [full ? n : k, n]] : [null, [k, 1], null];
    case 7: case 8: return [[m, 1], vec ? [m, m] : null, null];
    default: return [[m, m], [m, 1], [m, 1]];
  }
}
/**
 * Words for op on an m×n stack with `nb` batches along one axis, A (and B) strided by (1, ld) and
 * batch stride `bs`; output o at element offset `outOff[o]` (default 0) with op's extents (or `outs`), info at int32 `infoOff`.
 */
function words(op: number, dt: number, m: number, n: number, flags: number, batch: number, a: { off: number; rs: number; cs: number; bs: number }, b = a, o: { outOff?: number[]; outs?: Extents[]; infoOff?: number } = {}): Float64Array {
  const w = new Float64Array(HEADER + 3);
  w.set([op, dt, m, n, flags, 1, 1, a.off, a.rs, a.cs, b.off, b.rs, b.cs, o.infoOff ?? 0]);
  const outs = o.outs ?? extents(op, m, op === 0 || op >= 7 ? m : n, flags);
  for (let i = 0; i < 3; i++) w.set(outs[i] === null ? [-1, 0, 0] : [o.outOff?.[i] ?? 0, outs[i]![0], outs[i]![1]], 16 + 3 * i);
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

describe.skipIf(!haveLapack)('native lapack() (needs a BLAS library with LAPACK)', () => {
  it('runs every op (0–9) in every dtype, batched and strided, with LAPACK info 0', () => {
    for (let dt = 0; dt < 4; dt++)
      for (let op = 0; op <= 9; op++)
        for (const flags of [0, 1 | 2 | 16, 8 | 16, 32 | 4]) {
          const m = 4, n = op === 0 || op >= 7 ? 4 : 3, batch = 3, ld = 6, bs = 30, pad = 2;
          const rows = op === 1 && !(flags & 2) ? n : m, cols = op === 1 || op === 4 ? rows : n;
          const a = input(dt, Math.max(rows, m), Math.max(cols, n, m), ld, batch, bs, pad);
          const b = input(dt, m, n, ld, batch, bs, pad);
          const outs = [0, 1, 2].map(() => new Uint8Array(batch * 16 * 16 * 16));
          const info = new Int32Array(batch + 2).fill(-7);
          const s = binding!.lapack(words(op, dt, m, n, flags, batch, { off: pad, rs: 1, cs: ld, bs }, undefined, { outOff: [5, 2, 7], infoOff: 2 }), a, b, outs[0]!, outs[1]!, outs[2]!, info);
          expect(s, `op ${op} dtype ${dt} flags ${flags}`).toBe(BlasStatus.Ok);
          expect(Array.from(info), `op ${op} dtype ${dt} flags ${flags}`).toEqual([-7, -7, 0, 0, 0]);
        }
  });

  it('cholesky in f64: L·Lᵀ = A and zeros above the diagonal', () => {
    const a = new Float64Array([4, 2, 2, 3]);
    const out = new Float64Array(4);
    const info = new Int32Array(1);
    expect(binding!.lapack(words(0, 1, 2, 2, 0, 1, { off: 0, rs: 1, cs: 2, bs: 0 }), new Uint8Array(a.buffer), new Uint8Array(a.buffer), new Uint8Array(out.buffer), new Uint8Array(8), new Uint8Array(8), info)).toBe(0);
    expect(Array.from(out)).toEqual([2, 1, 0, Math.SQRT2]);
  });

  it('writes each output from its offset and info from its own, nothing around them (#35)', () => {
    const a = new Float64Array([4, 2, 2, 3]);
    const out = new Float64Array(3 + 4 + 2).fill(-9), info = new Int32Array(4).fill(-9);
    const w = words(0, 1, 2, 2, 0, 1, { off: 0, rs: 1, cs: 2, bs: 0 }, undefined, { outOff: [3, 0, 0], infoOff: 2 });
    expect(binding!.lapack(w, new Uint8Array(a.buffer), new Uint8Array(a.buffer), new Uint8Array(out.buffer), new Uint8Array(8), new Uint8Array(8), info)).toBe(0);
    expect(Array.from(out)).toEqual([-9, -9, -9, 2, 1, 0, Math.SQRT2, -9, -9]);
    expect(Array.from(info)).toEqual([-9, -9, 0, -9]);
    // A failing batch's info lands at the offset too.
    const bad = new Float64Array([1, 2, 2, 1]);
    expect(binding!.lapack(w, new Uint8Array(bad.buffer), new Uint8Array(bad.buffer), new Uint8Array(out.buffer), new Uint8Array(8), new Uint8Array(8), info)).toBe(0);
    expect(Array.from(info)).toEqual([-9, -9, 2, -9]);
  });

  it("returns LAPACK's raw results: geev's order, R and vectors with LAPACK's signs (the convention is @tenferro/linalg's)", () => {
    // eig of diag(3, 1, 2) (f64).
    const d = new Float64Array([3, 0, 0, 0, 1, 0, 0, 0, 2]);
    const w = new Float64Array(6), v = new Float64Array(18), info = new Int32Array(1);
    expect(binding!.lapack(words(8, 1, 3, 3, 16, 1, { off: 0, rs: 1, cs: 3, bs: 0 }), new Uint8Array(d.buffer), new Uint8Array(d.buffer), new Uint8Array(w.buffer), new Uint8Array(v.buffer), new Uint8Array(8), info)).toBe(0);
    // In whatever order geev gives them (not sorted here), each vector the unit vector of its eigenvalue.
    expect([w[0], w[2], w[4]].sort()).toEqual([1, 2, 3]);
    for (let j = 0; j < 3; j++) {
      const at = [3, 1, 2].indexOf(w[2 * j]!);
      for (let i = 0; i < 3; i++) expect(Math.abs(v[2 * (i + 3 * j)]!), `vector ${j} row ${i}`).toBe(i === at ? 1 : 0);
    }
    // qr of [[1], [1]] (f64): geqrf's Householder gives R = −√2 (the convention would make it +√2).
    const c = new Float64Array([1, 1]);
    const q = new Float64Array(2), r = new Float64Array(1);
    expect(binding!.lapack(words(5, 1, 2, 1, 0, 1, { off: 0, rs: 1, cs: 2, bs: 0 }), new Uint8Array(c.buffer), new Uint8Array(c.buffer), new Uint8Array(q.buffer), new Uint8Array(r.buffer), new Uint8Array(8), info)).toBe(0);
    expect(r[0]).toBeCloseTo(-Math.SQRT2, 14);
    expect(q[0]).toBeCloseTo(-Math.SQRT1_2, 14);
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
    // The output descriptors (#35): an offset past the buffer, a negative or fractional one, extents
    // other than the routine writes, a missing output, an info offset past its buffer, reserved words.
    expect(call(words(0, 1, 2, 2, 0, 1, ok, ok, { outOff: [13, 0, 0] }))).toBe(BlasStatus.OutOfBoundsC);
    expect(call(words(0, 1, 2, 2, 0, 1, ok, ok, { outOff: [2 ** 53, 0, 0] }))).toBe(BlasStatus.OutOfBoundsC);
    expect(call(words(0, 1, 2, 2, 0, 1, ok, ok, { outOff: [-2, 0, 0] }))).toBe(BlasStatus.OutOfBoundsC);
    expect(call(words(0, 1, 2, 2, 0, 1, ok, ok, { outOff: [0.5, 0, 0] }))).toBe(BlasStatus.OutOfBoundsC);
    expect(call(words(0, 1, 2, 2, 0, 1, ok, ok, { outs: [[2, 3], null, null] }))).toBe(BlasStatus.BadDescriptor);
    expect(call(words(0, 1, 2, 2, 0, 1, ok, ok, { outs: [[2 ** 31, 1], null, null] }))).toBe(BlasStatus.BadDescriptor);
    expect(call(words(0, 1, 2, 2, 0, 1, ok, ok, { outs: [null, null, null] }))).toBe(BlasStatus.BadDescriptor);
    expect(call(words(5, 1, 3, 2, 0, 1, ok, ok, { outs: [[3, 1], [2, 2], null] }))).toBe(BlasStatus.BadDescriptor); // Q with fewer than k columns
    expect(call(words(6, 1, 2, 2, 16, 1, ok, ok, { outs: [[2, 2], [2, 1], [1, 2]] }))).toBe(BlasStatus.BadDescriptor); // U full, Vᴴ thin
    expect(call(words(0, 1, 2, 2, 0, 1, ok, ok, { infoOff: 2 }))).toBe(BlasStatus.OutOfBoundsC);
    const reserved = words(0, 1, 2, 2, 0, 1, ok);
    reserved[14] = 1;
    expect(call(reserved)).toBe(BlasStatus.BadDescriptor);
    expect(Array.from(out)).toEqual(Array.from(before));
    expect(Array.from(info)).toEqual([0, 0]);
  });
});

describe.skipIf(!haveLapack)('the TypeScript side checks each output descriptor before posting (#35; needs a BLAS library with LAPACK)', () => {
  const kernels = createBlasProvider().extensions![0]![1] as Record<string, (ctx: CpuExecutionContext, r: unknown) => Promise<unknown>>;
  const ctx = {} as CpuExecutionContext; // never reached: the checks come first
  const flags = { upper: false, left: false, unitDiagonal: false, full: false, vectors: false, rOnly: false };
  const a = { buffer: new SharedArrayBuffer(32), offset: 0, rowStride: 1, colStride: 2, batchStrides: [] };
  const good = { buffer: new SharedArrayBuffer(64), offset: 4, dtype: 'f64', shape: [2, 2] };
  const request = (out: unknown, info: unknown = new Int32Array(new SharedArrayBuffer(4))) => ({ op: 'cholesky', dtype: 'f64', m: 2, n: 2, batch: [], flags, a, out: [out], info });

  it.each([
    ['request.out[0]', { ...good, buffer: new ArrayBuffer(64) }],
    ['request.out[0].dtype', { ...good, dtype: 'f32' }],
    ['request.out[0].offset', { ...good, offset: -1 }],
    ['request.out[0].offset', { ...good, offset: 1.5 }],
    ['request.out[0].shape', { ...good, shape: [2, 2, 1] }],
    ['request.out[0].shape', { ...good, shape: [2, -2] }],
    ['request.out[0]', { ...good, offset: 5 }],
  ])('%s: InvalidArgument, nothing posted', async (param, out) => {
    const error = await kernels.cholesky!(ctx, request(out)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TenferroError);
    expect(error).toMatchObject({ code: 'InvalidArgument', detail: { param } });
  });

  it('info must be an Int32Array of at least the batch count', async () => {
    const error = await kernels.cholesky!(ctx, request(good, new Int32Array(new SharedArrayBuffer(4), 4, 0))).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'InvalidArgument', detail: { param: 'request.info' } });
  });
});
