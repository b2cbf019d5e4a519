/**
 * tenferro's TypeScript reference kernels: the correctness oracle for every provider and the
 * fallback used when core runs alone.
 *
 * They run inside engine worker threads as kernel tasks (a worker imports this module and calls
 * an export with its payload) and directly in tests. Each is a pure function of its request: it
 * reads and writes only the storage the request names, allocates nothing proportional to the data
 * (only typed-array views and small index arrays) and never throws for a request core validated.
 *
 * Strides and offsets are in elements; a complex element at element index `e` occupies components
 * `2e` (re) and `2e + 1` (im) of a Float32Array / Float64Array view of its buffer.
 */
import { DTYPE_INFO, type DType } from '../../tensor/dtype.js';
import type { CpuGemmRequest, Scalar } from '../gemm-request.js';
import type { CpuLayoutRequest } from '../layout-request.js';

/** Writable numeric components (any typed array over numbers). */
interface NumberComponents {
  [index: number]: number;
}

type FloatComponents = Float32Array | Float64Array;
type ComponentArray = FloatComponents | Int32Array | BigInt64Array | Uint8Array;
type LaneArrayCtor = new (buffer: SharedArrayBuffer, byteOffset: number, length: number) => ComponentArray;

/** A view of the whole buffer as `dtype`'s lane array (length rounded down: never throws). */
function componentsOf(dtype: DType, buffer: SharedArrayBuffer): ComponentArray {
  const array = DTYPE_INFO[dtype].array;
  const Ctor = array as LaneArrayCtor;
  return new Ctor(buffer, 0, Math.floor(buffer.byteLength / array.BYTES_PER_ELEMENT));
}

function re(s: Scalar): number {
  return typeof s === 'number' ? s : s[0];
}

function im(s: Scalar): number {
  return typeof s === 'number' ? 0 : s[1];
}

/**
 * Call `body(a, b, c)` once per multi-index of `extents` (odometer, last axis fastest) with the
 * three lane offsets `baseX + Σ index[t]·stridesX[t]`. Returns at once if any extent is 0.
 */
function forEachBatch(
  extents: readonly number[],
  aBase: number,
  aStrides: readonly number[],
  bBase: number,
  bStrides: readonly number[],
  cBase: number,
  cStrides: readonly number[],
  body: (a: number, b: number, c: number) => void,
): void {
  const rank = extents.length;
  for (let t = 0; t < rank; t++) if (extents[t] === 0) return;
  const idx = new Array<number>(rank).fill(0);
  let a = aBase;
  let b = bBase;
  let c = cBase;
  for (;;) {
    body(a, b, c);
    let t = rank - 1;
    for (; t >= 0; t--) {
      const extent = extents[t]!;
      const as = aStrides[t]!;
      const bs = bStrides[t]!;
      const cs = cStrides[t]!;
      const next = idx[t]! + 1;
      if (next < extent) {
        idx[t] = next;
        a += as;
        b += bs;
        c += cs;
        break;
      }
      idx[t] = 0;
      a -= as * (extent - 1);
      b -= bs * (extent - 1);
      c -= cs * (extent - 1);
    }
    if (t < 0) return;
  }
}

function scaled(strides: readonly number[], components: number): number[] {
  return strides.map((s) => s * components);
}

/**
 * Batched GEMM `out = alpha·op(lhs)·op(rhs) + beta·out` for f32, f64, c64 and c128.
 *
 * One dot product over `k` per output element. Accumulation is in a local JS number (f64) for
 * every dtype; for f32/c64 the combined result `alpha·acc + beta·out` is rounded once per output
 * element (per lane) with `Math.fround` when stored. `beta = 0` overwrites the output without
 * reading it; `k = 0` yields `beta·out` (zeros when `beta = 0`) without involving `alpha`.
 * `conjLhs`/`conjRhs` are ignored for real dtypes. Summed axes (`req.summed`) run one GEMM per
 * summed item into the output (beta on the first only): for f32/c64 the output is rounded after
 * each item.
 */
export function referenceGemm(req: CpuGemmRequest): void {
  const summed = req.summed;
  if (summed === undefined || summed.extents.length === 0) {
    gemmItem(req);
    return;
  }
  // Summed axes: one GEMM per summed item, accumulating (beta applies to the first only); an
  // empty sum is a GEMM with k = 0 (beta·out).
  if (summed.extents.some((e) => e === 0)) {
    gemmItem({ ...req, k: 0 });
    return;
  }
  let first = true;
  forEachBatch(summed.extents, req.lhs.offset, summed.lhsStrides, req.rhs.offset, summed.rhsStrides, 0, summed.extents.map(() => 0), (lhsOffset, rhsOffset) => {
    gemmItem({ ...req, lhs: { ...req.lhs, offset: lhsOffset }, rhs: { ...req.rhs, offset: rhsOffset }, beta: first ? req.beta : 1 });
    first = false;
  });
}

/** {@link referenceGemm} without summed axes. */
function gemmItem(req: CpuGemmRequest): void {
  const { dtype, m, n, k, batch } = req;
  if (m === 0 || n === 0) return;
  const info = DTYPE_INFO[dtype];
  const components = info.components;
  const L = componentsOf(dtype, req.lhs.buffer) as FloatComponents;
  const R = componentsOf(dtype, req.rhs.buffer) as FloatComponents;
  const O = componentsOf(dtype, req.out.buffer) as FloatComponents;
  const f32 = dtype === 'f32' || dtype === 'c64';
  const lhs = req.lhs;
  const rhs = req.rhs;
  const out = req.out;
  const lRs = lhs.rowStride * components;
  const lCs = lhs.colStride * components;
  const rRs = rhs.rowStride * components;
  const rCs = rhs.colStride * components;
  const oRs = out.rowStride * components;
  const oCs = out.colStride * components;

  if (!info.complex) {
    const alpha = re(req.alpha);
    const beta = re(req.beta);
    const readOut = beta !== 0;
    forEachBatch(
      batch,
      lhs.offset,
      lhs.batchStrides,
      rhs.offset,
      rhs.batchStrides,
      out.offset,
      out.batchStrides,
      (lBase, rBase, oBase) => {
        for (let i = 0; i < m; i++) {
          const lRow = lBase + i * lRs;
          const oRow = oBase + i * oRs;
          for (let j = 0; j < n; j++) {
            const o = oRow + j * oCs;
            let v: number;
            if (k === 0) {
              v = 0;
            } else {
              let acc = 0;
              let a = lRow;
              let b = rBase + j * rCs;
              for (let p = 0; p < k; p++) {
                acc += L[a]! * R[b]!;
                a += lCs;
                b += rRs;
              }
              v = alpha * acc;
            }
            if (readOut) v += beta * O[o]!;
            O[o] = f32 ? Math.fround(v) : v;
          }
        }
      },
    );
    return;
  }

  const aRe = re(req.alpha);
  const aIm = im(req.alpha);
  const bRe = re(req.beta);
  const bIm = im(req.beta);
  const readOut = bRe !== 0 || bIm !== 0;
  // Conjugation flips the sign of the imaginary lane (exact).
  const lSign = req.conjLhs ? -1 : 1;
  const rSign = req.conjRhs ? -1 : 1;
  forEachBatch(
    batch,
    lhs.offset * 2,
    scaled(lhs.batchStrides, 2),
    rhs.offset * 2,
    scaled(rhs.batchStrides, 2),
    out.offset * 2,
    scaled(out.batchStrides, 2),
    (lBase, rBase, oBase) => {
      for (let i = 0; i < m; i++) {
        const lRow = lBase + i * lRs;
        const oRow = oBase + i * oRs;
        for (let j = 0; j < n; j++) {
          const o = oRow + j * oCs;
          let vRe = 0;
          let vIm = 0;
          if (k !== 0) {
            let accRe = 0;
            let accIm = 0;
            let a = lRow;
            let b = rBase + j * rCs;
            for (let p = 0; p < k; p++) {
              const xr = L[a]!;
              const xi = lSign * L[a + 1]!;
              const yr = R[b]!;
              const yi = rSign * R[b + 1]!;
              accRe += xr * yr - xi * yi;
              accIm += xr * yi + xi * yr;
              a += lCs;
              b += rRs;
            }
            vRe = aRe * accRe - aIm * accIm;
            vIm = aRe * accIm + aIm * accRe;
          }
          if (readOut) {
            const zr = O[o]!;
            const zi = O[o + 1]!;
            vRe += bRe * zr - bIm * zi;
            vIm += bRe * zi + bIm * zr;
          }
          O[o] = f32 ? Math.fround(vRe) : vRe;
          O[o + 1] = f32 ? Math.fround(vIm) : vIm;
        }
      }
    },
  );
}

/**
 * Walk every multi-index of `shape` (odometer over all axes but the last, no recursion) and call
 * `run(s, d, count, sStep, dStep)` once per innermost run, with lane offsets already scaled.
 */
function forEachRun(
  shape: readonly number[],
  sBase: number,
  sStrides: readonly number[],
  dBase: number,
  dStrides: readonly number[],
  components: number,
  run: (s: number, d: number, count: number, sStep: number, dStep: number) => void,
): void {
  const rank = shape.length;
  for (let t = 0; t < rank; t++) if (shape[t] === 0) return;
  let s = sBase * components;
  let d = dBase * components;
  if (rank === 0) {
    run(s, d, 1, 0, 0);
    return;
  }
  const inner = shape[rank - 1]!;
  const sStep = sStrides[rank - 1]! * components;
  const dStep = dStrides[rank - 1]! * components;
  const outer = rank - 1;
  const idx = new Array<number>(outer).fill(0);
  for (;;) {
    run(s, d, inner, sStep, dStep);
    let t = outer - 1;
    for (; t >= 0; t--) {
      const extent = shape[t]!;
      const ss = sStrides[t]! * components;
      const ds = dStrides[t]! * components;
      const next = idx[t]! + 1;
      if (next < extent) {
        idx[t] = next;
        s += ss;
        d += ds;
        break;
      }
      idx[t] = 0;
      s -= ss * (extent - 1);
      d -= ds * (extent - 1);
    }
    if (t < 0) return;
  }
}

const TILE = 32;

/**
 * A transposing copy — the destination's fastest axis is not the source's — done in 32×32 tiles of
 * those two axes, so both sides stay in cache; `false` (nothing done) for any other copy.
 */
function tiledTranspose(req: CpuLayoutRequest): boolean {
  const { src, dst, conjugate } = req;
  const shape = dst.shape;
  const rank = shape.length;
  const smallest = (strides: readonly number[]) => {
    let best = -1;
    for (let t = 0; t < rank; t++) if (shape[t]! >= TILE && (best < 0 || strides[t]! < strides[best]!)) best = t;
    return best;
  };
  const p = smallest(dst.strides);
  const q = smallest(src.strides);
  if (p < 0 || q < 0 || p === q || shape.includes(0)) return false;
  const info = DTYPE_INFO[src.dtype];
  const c = info.components;
  const S = componentsOf(src.dtype, src.buffer) as unknown as { [i: number]: number | bigint };
  const D = componentsOf(dst.dtype, dst.buffer) as unknown as { [i: number]: number | bigint };
  const flip = info.complex && conjugate;
  const [np, nq] = [shape[p]!, shape[q]!];
  const [ssp, ssq, dsp, dsq] = [src.strides[p]! * c, src.strides[q]! * c, dst.strides[p]! * c, dst.strides[q]! * c];
  const rest = shape.map((e, t) => (t === p || t === q ? 1 : e));
  forEachBatch(rest, src.offset * c, scaled(src.strides, c), dst.offset * c, scaled(dst.strides, c), 0, new Array<number>(rank).fill(0), (sBase, dBase) => {
    for (let j0 = 0; j0 < nq; j0 += TILE) {
      const j1 = Math.min(nq, j0 + TILE);
      for (let i0 = 0; i0 < np; i0 += TILE) {
        const i1 = Math.min(np, i0 + TILE);
        for (let j = j0; j < j1; j++) {
          let sIdx = sBase + i0 * ssp + j * ssq;
          let dIdx = dBase + i0 * dsp + j * dsq;
          for (let i = i0; i < i1; i++, sIdx += ssp, dIdx += dsp) {
            D[dIdx] = S[sIdx]!;
            if (c === 2) D[dIdx + 1] = flip ? -(S[sIdx + 1] as number) : S[sIdx + 1]!;
          }
        }
      }
    }
  });
  return true;
}

/** `src` and `dst` with the axes reordered so the last one has the smallest destination stride among axes longer than 1. */
function innermostByDestination<T extends { readonly shape: readonly number[]; readonly strides: readonly number[] }>(src: T, dst: T): [T, T] {
  const rank = dst.shape.length;
  let best = -1;
  for (let t = 0; t < rank; t++) if (dst.shape[t]! > 1 && (best < 0 || dst.strides[t]! < dst.strides[best]!)) best = t;
  if (best < 0 || best === rank - 1) return [src, dst];
  const order = [...Array.from({ length: rank }, (_, t) => t).filter((t) => t !== best), best];
  const move = (d: T): T => ({ ...d, shape: order.map((t) => d.shape[t]!), strides: order.map((t) => d.strides[t]!) });
  return [move(src), move(dst)];
}

/**
 * Copy `src` into `dst` element by element over their shared shape (any rank, any non-negative
 * strides; `dst` does not overlap `src`), conjugating complex values when `conjugate`. All
 * dtypes; values are copied lane by lane (i64 as BigInt, bool as its raw byte).
 */
export function referenceMaterialize(req: CpuLayoutRequest): void {
  const { conjugate } = req;
  // Walk lines along the destination's smallest stride: sequential writes (the order is free, dst never overlaps itself).
  if (tiledTranspose(req)) return;
  const [src, dst] = innermostByDestination(req.src, req.dst);
  const dtype = src.dtype;
  const info = DTYPE_INFO[dtype];
  if (dtype === 'i64') {
    const S = componentsOf(dtype, src.buffer) as BigInt64Array;
    const D = componentsOf(dtype, dst.buffer) as BigInt64Array;
    forEachRun(src.shape, src.offset, src.strides, dst.offset, dst.strides, 1, (s, d, count, sStep, dStep) => {
      for (let i = 0; i < count; i++, s += sStep, d += dStep) D[d] = S[s]!;
    });
    return;
  }
  const S = componentsOf(dtype, src.buffer) as NumberComponents;
  const D = componentsOf(dtype, dst.buffer) as NumberComponents;
  if (!info.complex) {
    forEachRun(src.shape, src.offset, src.strides, dst.offset, dst.strides, 1, (s, d, count, sStep, dStep) => {
      for (let i = 0; i < count; i++, s += sStep, d += dStep) D[d] = S[s]!;
    });
  } else if (conjugate) {
    forEachRun(src.shape, src.offset, src.strides, dst.offset, dst.strides, 2, (s, d, count, sStep, dStep) => {
      for (let i = 0; i < count; i++, s += sStep, d += dStep) {
        D[d] = S[s]!;
        D[d + 1] = -S[s + 1]!;
      }
    });
  } else {
    forEachRun(src.shape, src.offset, src.strides, dst.offset, dst.strides, 2, (s, d, count, sStep, dStep) => {
      for (let i = 0; i < count; i++, s += sStep, d += dStep) {
        D[d] = S[s]!;
        D[d + 1] = S[s + 1]!;
      }
    });
  }
}
