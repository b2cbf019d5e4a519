import { int, seededRandom } from '@tenferro/core/testing';
import type { CpuGemmRequest, GemmOperand } from '@tenferro/core';
import { describeTask } from '../src/kernels/gemm.js';
import type { FaerBinding } from '../src/native/binding.js';
import { loadFaer } from '../src/native/load.js';

export { int, seededRandom };

export type Dt = 'f32' | 'f64' | 'c64' | 'c128';
export const DTS: readonly Dt[] = ['f32', 'f64', 'c64', 'c128'];

export function binding(): FaerBinding {
  const s = loadFaer();
  if (!s.available) throw new Error(s.reason);
  return s.binding;
}

/** Layout of a rows x cols operand: column-major, row-major, general strides, or (inputs) a broadcast axis. */
export type Layout = 'col' | 'row' | 'strided' | 'bcastRow' | 'bcastCol';

export interface Case {
  readonly dtype: Dt;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly batch?: readonly number[];
  readonly la?: Layout;
  readonly lb?: Layout;
  readonly lc?: Exclude<Layout, 'bcastRow' | 'bcastCol'>;
  readonly alpha?: number | readonly [number, number];
  readonly beta?: number | readonly [number, number];
  readonly conjA?: boolean;
  readonly conjB?: boolean;
  /** ISA id for the descriptor (-1: best). */
  readonly isa?: number;
  readonly part?: { m0: number; m1: number; n0: number; n1: number; b0: number; b1: number };
  /** Fill C with NaN first (with beta = 0 it must not be read). */
  readonly nanC?: boolean;
  readonly seed?: number;
  /** Dynamic chunks: `calls` calls (the lanes of a split, here one after another) share one counter. */
  readonly chunk?: { readonly axis: 0 | 1; readonly size: number; readonly calls: number };
}

const complexOf = (d: Dt) => d === 'c64' || d === 'c128';

/** Operand strides (elements) for `layout`, placed at `offset`, with batch strides after the matrix. */
function operand(buffer: SharedArrayBuffer, rows: number, cols: number, batch: readonly number[], layout: Layout, offset: number): { op: GemmOperand; span: number } {
  let rs: number;
  let cs: number;
  let span: number;
  switch (layout) {
    case 'col':
      rs = 1;
      cs = rows + 1;
      span = cs * cols;
      break;
    case 'row':
      cs = 1;
      rs = cols + 2;
      span = rs * rows;
      break;
    case 'strided':
      rs = 2;
      cs = 2 * rows + 3;
      span = cs * cols;
      break;
    case 'bcastRow': // every row the same (row stride 0)
      rs = 0;
      cs = 1;
      span = cols;
      break;
    case 'bcastCol': // every column the same
      rs = 1;
      cs = 0;
      span = rows;
      break;
  }
  const batchStrides: number[] = [];
  let stride = span + 1;
  for (let t = batch.length - 1; t >= 0; t--) {
    batchStrides[t] = stride;
    stride *= batch[t]!;
  }
  void buffer;
  return { op: { buffer, offset, rowStride: rs, colStride: cs, batchStrides }, span: stride };
}

function valuesOf(rand: () => number, count: number): number[] {
  return Array.from({ length: count }, () => rand() * 2 - 1);
}

export interface CaseResult {
  readonly status: number;
  /** Max over elements of |got - want| / (|alpha|·Σ|a||b| + |beta||c| + tiny). */
  readonly error: number;
  /** Number of lanes outside the output view that changed. */
  readonly guardViolations: number;
  readonly tolerance: number;
}

/** Run one case through the binding (in this thread) and compare with a naive loop in f64. */
export function runCase(c: Case): CaseResult {
  const rand = seededRandom(c.seed ?? 1);
  const { dtype, m, n, k } = c;
  const batch = c.batch ?? [];
  const batches = batch.reduce((a, b) => a * b, 1);
  const cplx = complexOf(dtype);
  const lanes = cplx ? 2 : 1;
  const f32 = dtype === 'f32' || dtype === 'c64';
  const Arr = (f32 ? Float32Array : Float64Array) as unknown as new (buffer: SharedArrayBuffer) => Float32Array | Float64Array;
  const bytes = (f32 ? 4 : 8) * lanes;
  const pad = 5;
  const sizeA = operand(new SharedArrayBuffer(8), m, k, batch, c.la ?? 'col', pad).span + 2 * pad;
  const sizeB = operand(new SharedArrayBuffer(8), k, n, batch, c.lb ?? 'col', pad).span + 2 * pad;
  const sizeC = operand(new SharedArrayBuffer(8), m, n, batch, c.lc ?? 'col', pad).span + 2 * pad;
  const bufA = new SharedArrayBuffer(sizeA * bytes);
  const bufB = new SharedArrayBuffer(sizeB * bytes);
  const bufC = new SharedArrayBuffer(sizeC * bytes);
  const A = new Arr(bufA);
  const B = new Arr(bufB);
  const C = new Arr(bufC);
  A.set(valuesOf(rand, A.length));
  B.set(valuesOf(rand, B.length));
  C.set(c.nanC ? new Array(C.length).fill(Number.NaN) : valuesOf(rand, C.length));
  const C0 = Float64Array.from(C);
  const a = operand(bufA, m, k, batch, c.la ?? 'col', pad).op;
  const b = operand(bufB, k, n, batch, c.lb ?? 'col', pad).op;
  const o = operand(bufC, m, n, batch, c.lc ?? 'col', pad).op;
  const alpha = c.alpha ?? (cplx ? ([1, 0] as const) : 1);
  const beta = c.beta ?? (cplx ? ([0, 0] as const) : 0);
  const request: CpuGemmRequest = { dtype, m, n, k, batch, lhs: a, rhs: b, out: o, alpha, beta, conjLhs: c.conjA ?? false, conjRhs: c.conjB ?? false };
  const part = c.part ?? { m0: 0, m1: m, n0: 0, n1: n, b0: 0, b1: batches };
  const desc = describeTask({ request, isa: c.isa ?? -1, ...part });
  let status = 0;
  if (c.chunk === undefined) status = binding().gemm(desc, A, B, C);
  else {
    const counter = new Int32Array(new SharedArrayBuffer(4));
    for (let call = 0; call < c.chunk.calls && status === 0; call++) status = binding().gemm(desc, A, B, C, undefined, counter, c.chunk.axis, c.chunk.size);
  }

  const [ar, ai] = typeof alpha === 'number' ? [alpha, 0] : alpha;
  const [br, bi] = typeof beta === 'number' ? [beta, 0] : beta;
  const sa = c.conjA ? -1 : 1;
  const sb = c.conjB ? -1 : 1;
  const touched = new Uint8Array(C.length);
  let error = 0;
  // Batch offsets, last axis fastest.
  const idx = new Array<number>(batch.length).fill(0);
  for (let l = 0; l < batches; l++) {
    let rem = l;
    for (let t = batch.length - 1; t >= 0; t--) {
      idx[t] = rem % batch[t]!;
      rem = Math.floor(rem / batch[t]!);
    }
    const off = (op: GemmOperand) => op.offset + idx.reduce((s, v, t) => s + v * op.batchStrides[t]!, 0);
    const inPart = l >= part.b0 && l < part.b1;
    for (let j = 0; j < n; j++) {
      for (let i = 0; i < m; i++) {
        const ic = (off(o) + i * o.rowStride + j * o.colStride) * lanes;
        if (!(inPart && i >= part.m0 && i < part.m1 && j >= part.n0 && j < part.n1)) continue;
        let sr = 0;
        let si = 0;
        let mag = 0;
        for (let p = 0; p < k; p++) {
          const ia = (off(a) + i * a.rowStride + p * a.colStride) * lanes;
          const ib = (off(b) + p * b.rowStride + j * b.colStride) * lanes;
          if (!cplx) {
            sr += A[ia]! * B[ib]!;
            mag += Math.abs(A[ia]! * B[ib]!);
          } else {
            const xr = A[ia]!;
            const xi = sa * A[ia + 1]!;
            const yr = B[ib]!;
            const yi = sb * B[ib + 1]!;
            sr += xr * yr - xi * yi;
            si += xr * yi + xi * yr;
            mag += Math.hypot(xr, xi) * Math.hypot(yr, yi);
          }
        }
        const readC = br !== 0 || bi !== 0;
        const cr = readC ? C0[ic]! : 0;
        const ci = readC && cplx ? C0[ic + 1]! : 0;
        const wr = k === 0 ? br * cr - bi * ci : ar * sr - ai * si + br * cr - bi * ci;
        const wi = k === 0 ? br * ci + bi * cr : ar * si + ai * sr + br * ci + bi * cr;
        const scale = Math.hypot(ar, ai) * mag + Math.hypot(br, bi) * (Math.abs(cr) + Math.abs(ci)) + 1e-30;
        error = Math.max(error, Math.abs(C[ic]! - wr) / scale);
        touched[ic] = 1;
        if (cplx) {
          error = Math.max(error, Math.abs(C[ic + 1]! - wi) / scale);
          touched[ic + 1] = 1;
        }
        if (Number.isNaN(C[ic]!) || (cplx && Number.isNaN(C[ic + 1]!))) error = Infinity;
      }
    }
  }
  let guardViolations = 0;
  for (let e = 0; e < C.length; e++) {
    if (touched[e]) continue;
    const same = Number.isNaN(C0[e]!) ? Number.isNaN(C[e]!) : C[e] === C0[e];
    if (!same) guardViolations++;
  }
  const eps = f32 ? 2 ** -23 : 2 ** -52;
  return { status, error, guardViolations, tolerance: 4 * eps * (Math.sqrt(k) + 4) };
}
