import type { DotGeneralSpec } from './validate-dot-general.js';

/** Strides of one GEMM operand (see `GemmOperand`), without its storage. */
export interface OperandStrides {
  readonly rowStride: number;
  readonly colStride: number;
  readonly batchStrides: readonly number[];
}

/** Contracting axes summed over instead of fused into K: extents and the strides of lhs and rhs (the shape of `CpuGemmRequest.summed`). */
export interface SummedAxes {
  readonly extents: readonly number[];
  readonly lhsStrides: readonly number[];
  readonly rhsStrides: readonly number[];
}

/** A dot-general expressed as a batched GEMM over fused axis groups. */
export interface GemmPlan {
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly batch: readonly number[];
  readonly lhs: OperandStrides;
  readonly rhs: OperandStrides;
  readonly out: OperandStrides;
  /** Contracting axes summed over instead of fused into `k` (the summed plan only; see `CpuGemmRequest.summed`). */
  readonly summed?: SummedAxes;
}

/** Strides for lhs and rhs on the canonical path, and the plan over them. */
export interface CanonicalPlan {
  readonly lhsStrides: readonly number[];
  readonly rhsStrides: readonly number[];
  readonly plan: GemmPlan;
}

/**
 * The analysis of one dot-general for given operand layouts (what the GEMM-analysis cache
 * stores, R116): the direct plan when every axis group fuses on the operands as they are, and
 * the canonical layouts the retry materialises into.
 */
export interface GemmAnalysis {
  /** `undefined` when the layouts admit no direct plan. */
  readonly direct: GemmPlan | undefined;
  /** Canonical dense strides for lhs and rhs, and the plan over them; `undefined` when the output cannot be represented. */
  readonly canonical: CanonicalPlan | undefined;
  /**
   * Only when there is no direct plan: the canonical path's plans that materialise one operand
   * and use the other as it is (R105's Node reading). `lhs` keeps lhs (its strides are its own;
   * rhs is materialised dense, its contracting axes in the order of lhs's strides), `rhs` keeps
   * rhs; each is `undefined` unless the kept operand's own axis groups fuse and it is a
   * column- or row-major matrix with a leading dimension covering it (a layout every GEMM
   * provider, BLAS included, accepts).
   */
  readonly keep: { readonly lhs: CanonicalPlan | undefined; readonly rhs: CanonicalPlan | undefined };
  /**
   * Only when there is no direct plan: both operands as they are, the largest set of contracting
   * pairs that fuses on both as `k`, the other pairs summed (`plan.summed`) — for a GEMM provider
   * that declares `summedAxes`; `undefined` when M, N or the batch axes do not fuse as they are,
   * or no contracting pair does.
   */
  readonly summed: GemmPlan | undefined;
}

interface Dim {
  readonly extent: number;
  readonly a: number;
  readonly b: number;
}

/**
 * Fuse a group of axes (extents with strides on two operands) into one, in the order `order`
 * (indices into `dims`, unit extents skipped): possible iff along that order each stride is the
 * previous stride times the previous extent, on both operands.
 */
function fuseAlong(dims: readonly Dim[], order: readonly number[]): { extent: number; a: number; b: number } | undefined {
  const used = order.filter((i) => dims[i]!.extent !== 1);
  if (used.length === 0) return { extent: dims.reduce((p, d) => p * d.extent, 1), a: 0, b: 0 };
  // A group with a zero extent has no elements: it fuses whatever its strides (a contraction over
  // it is a K of 0, an output over it is empty), with the strides of its first axis as for one axis.
  if (used.some((i) => dims[i]!.extent === 0)) return { extent: 0, a: dims[used[0]!]!.a, b: dims[used[0]!]!.b };
  let extent = 1;
  for (let j = 0; j < used.length; j++) {
    const d = dims[used[j]!]!;
    if (j > 0) {
      const prev = dims[used[j - 1]!]!;
      if (d.a !== prev.a * prev.extent || d.b !== prev.b * prev.extent) return undefined;
    }
    extent *= d.extent;
  }
  const first = dims[used[0]!]!;
  return { extent, a: first.a, b: first.b };
}

/** Non-unit dims ordered by `key` stride, stable. */
function orderBy(dims: readonly Dim[], key: 'a' | 'b'): number[] {
  return dims.map((_, i) => i).sort((x, y) => dims[x]![key] - dims[y]![key] || x - y);
}

interface Layouts {
  readonly lhs: readonly number[];
  readonly rhs: readonly number[];
  readonly out: readonly number[];
}

/** Try to express `spec` over the given strides as one batched GEMM. */
function planFor(spec: DotGeneralSpec, s: Layouts): { plan: GemmPlan; blocker: undefined } | { plan: undefined; blocker: 'lhs' | 'rhs' | 'output' } {
  const { lhs, rhs, lhsFree, rhsFree, lhsContracting, rhsContracting, lhsBatch, rhsBatch } = spec;
  const nl = lhsFree.length;
  const nr = rhsFree.length;
  // m: lhs free axes, on the output (a) and lhs (b); the output decides the order.
  const mDims = lhsFree.map((ax, i) => ({ extent: lhs.shape[ax]!, a: s.out[i]!, b: s.lhs[ax]! }));
  const mOrder = orderBy(mDims, 'a');
  if (fuseAlong(mDims.map((d) => ({ ...d, b: d.a })), mOrder) === undefined) return { plan: undefined, blocker: 'output' };
  const m = fuseAlong(mDims, mOrder);
  const nDims = rhsFree.map((ax, i) => ({ extent: rhs.shape[ax]!, a: s.out[nl + i]!, b: s.rhs[ax]! }));
  const nOrder = orderBy(nDims, 'a');
  if (fuseAlong(nDims.map((d) => ({ ...d, b: d.a })), nOrder) === undefined) return { plan: undefined, blocker: 'output' };
  const n = fuseAlong(nDims, nOrder);
  if (m === undefined) return { plan: undefined, blocker: 'lhs' };
  if (n === undefined) return { plan: undefined, blocker: 'rhs' };
  // k: contracting pairs on lhs (a) and rhs (b); either operand may decide the order.
  const kDims = lhsContracting.map((ax, i) => ({ extent: lhs.shape[ax]!, a: s.lhs[ax]!, b: s.rhs[rhsContracting[i]!]! }));
  const k = fuseAlong(kDims, orderBy(kDims, 'a')) ?? fuseAlong(kDims, orderBy(kDims, 'b'));
  if (k === undefined) {
    const lhsAlone = fuseAlong(kDims.map((d) => ({ ...d, b: d.a })), orderBy(kDims, 'a')) !== undefined;
    return { plan: undefined, blocker: lhsAlone ? 'rhs' : 'lhs' };
  }
  const batchAxes = lhsBatch.map((ax, i) => ({ extent: lhs.shape[ax]!, l: s.lhs[ax]!, r: s.rhs[rhsBatch[i]!]!, o: s.out[nl + nr + i]! })).filter((b) => b.extent !== 1);
  return {
    blocker: undefined,
    plan: Object.freeze({
      m: m.extent,
      n: n.extent,
      k: k.extent,
      // Frozen all the way down: the GEMM requests built from a cached plan share these arrays.
      batch: Object.freeze(batchAxes.map((b) => b.extent)),
      lhs: matrixStrides(m.extent, k.extent, m.b, k.a, batchAxes.map((b) => b.l)),
      rhs: matrixStrides(k.extent, n.extent, k.b, n.b, batchAxes.map((b) => b.r)),
      out: matrixStrides(m.extent, n.extent, m.a, n.a, batchAxes.map((b) => b.o)),
    }),
  };
}

/**
 * The strides of one `rows × cols` GEMM operand, an extent-1 side given its dense stride (#40).
 *
 * A fused group of extent 1 (a unit axis, or no axis at all: a matrix-vector product's M) is
 * never stepped along, so any stride addresses the same elements; `fuseAlong` leaves it 0. A
 * provider reasonably asks "is one of the strides 1?" or "is the leading dimension at least the
 * rows?" (the provider author guide's own check, every BLAS) — and a 1×1 operand with strides
 * (0, 0), even core's own canonical retry (R105), which is dense by construction, failed both:
 * the guide's provider declined the retry and the call ended `ProviderUnsupported`. So the
 * contract does not say "extent-1 strides may be anything" (every provider would have to learn
 * that); core gives such a side the stride a dense layout gives it instead: 1 × c with column
 * stride 1 → row stride c (row-major, leading dimension c); r × 1 with row stride 1 → column
 * stride r (column-major, leading dimension r); otherwise 1 (a 1 × 1 operand is (1, 1)). The
 * elements addressed, and every reach, are unchanged.
 */
function matrixStrides(rows: number, cols: number, rs: number, cs: number, batchStrides: readonly number[]): OperandStrides {
  let rowStride = rs;
  let colStride = cs;
  if (rows === 1) rowStride = cols !== 1 && cs === 1 ? cols : 1;
  if (cols === 1) colStride = rows !== 1 && rowStride === 1 ? rows : 1;
  return Object.freeze({ rowStride, colStride, batchStrides: Object.freeze([...batchStrides]) });
}

/** Dense column-major strides for `shape` with axes laid out in `order`. */
function denseInOrder(shape: readonly number[], order: readonly number[]): number[] {
  const strides = new Array<number>(shape.length).fill(0);
  let running = 1;
  for (const ax of order) {
    strides[ax] = running;
    running *= Math.max(1, shape[ax]!);
  }
  return strides;
}

/** Whether a `rows × cols` operand with these strides is column-major, or row-major, with a leading dimension covering it. */
function blasExpressible(rows: number, cols: number, rs: number, cs: number): boolean {
  const columnMajor = (r: number, c: number, unit: number, ld: number) => (r <= 1 || unit === 1) && (c <= 1 || ld >= Math.max(1, r));
  return columnMajor(rows, cols, rs, cs) || columnMajor(cols, rows, cs, rs);
}

/**
 * The axis order of an operand materialised for the kept-operand path: its two groups
 * `[first, second]` (rows, columns of its GEMM matrix) column-major, unless the source's
 * innermost axis (smallest non-zero stride among extents > 1) leads `second` and not `first`:
 * then row-major (`second` innermost), so that the copy keeps the source's contiguous runs.
 */
function copyFriendly(src: { readonly shape: readonly number[]; readonly strides: readonly number[] }, [first, second]: readonly [readonly number[], readonly number[]], batch: readonly number[]): number[] {
  let inner = -1;
  for (let ax = 0; ax < src.shape.length; ax++) {
    if (src.shape[ax]! <= 1 || src.strides[ax] === 0) continue;
    if (inner < 0 || src.strides[ax]! < src.strides[inner]!) inner = ax;
  }
  const lead = (group: readonly number[]) => group.find((ax) => src.shape[ax]! > 1);
  const rowMajor = inner >= 0 && lead(second) === inner && lead(first) !== inner;
  return rowMajor ? [...second, ...first, ...batch] : [...first, ...second, ...batch];
}

/** Indices of the contracting pairs in ascending order of `strides` on the side whose axes are `axes` (stable). */
function pairsByStride(axes: readonly number[], strides: readonly number[]): number[] {
  return axes.map((_, i) => i).sort((x, y) => strides[axes[x]!]! - strides[axes[y]!]! || x - y);
}

/** At most this many non-unit contracting pairs are searched (every subset) for the summed plan. */
const SUMMED_SEARCH_MAX_PAIRS = 8;

/** The summed plan of `spec` (see `GemmAnalysis.summed`), searched over every subset of its non-unit contracting pairs. */
function summedPlan(spec: DotGeneralSpec, outStrides: readonly number[]): GemmPlan | undefined {
  const extent = (i: number) => spec.lhs.shape[spec.lhsContracting[i]!]!;
  const pairs = spec.lhsContracting.map((_, i) => i).filter((i) => extent(i) !== 1);
  if (pairs.length < 2 || pairs.length > SUMMED_SEARCH_MAX_PAIRS || pairs.some((i) => extent(i) === 0)) return undefined;
  const units = spec.lhsContracting.map((_, i) => i).filter((i) => extent(i) === 1);
  // The largest k; of equal ones, the plan with more operands a BLAS could address (a unit
  // stride along rows or columns: packing then reads contiguous runs, not single elements).
  const score = (p: GemmPlan) => p.k * 4 + Number(blasExpressible(p.m, p.k, p.lhs.rowStride, p.lhs.colStride)) + Number(blasExpressible(p.k, p.n, p.rhs.rowStride, p.rhs.colStride));
  let best: { plan: GemmPlan; rest: number[]; score: number } | undefined;
  for (let mask = 1; mask < (1 << pairs.length) - 1; mask++) {
    const fused = [...units, ...pairs.filter((_, t) => (mask >> t) & 1)];
    const rest = pairs.filter((_, t) => !((mask >> t) & 1));
    const k = fused.reduce((p, i) => p * extent(i), 1);
    if (best !== undefined && k < best.plan.k) continue;
    const sub: DotGeneralSpec = { ...spec, lhsContracting: fused.map((i) => spec.lhsContracting[i]!), rhsContracting: fused.map((i) => spec.rhsContracting[i]!) };
    const found = planFor(sub, { lhs: spec.lhs.strides, rhs: spec.rhs.strides, out: outStrides });
    if (found.plan !== undefined) {
      const s = score(found.plan);
      if (best === undefined || s > best.score) best = { plan: found.plan, rest, score: s };
    } else if (found.blocker === 'output') return undefined;
  }
  if (best === undefined) return undefined;
  const summed: SummedAxes = Object.freeze({
    extents: Object.freeze(best.rest.map(extent)),
    lhsStrides: Object.freeze(best.rest.map((i) => spec.lhs.strides[spec.lhsContracting[i]!]!)),
    rhsStrides: Object.freeze(best.rest.map((i) => spec.rhs.strides[spec.rhsContracting[i]!]!)),
  });
  return Object.freeze({ ...best.plan, summed });
}

/** Analyse `spec` with output strides `outStrides` (R104 steps 2 and 3). */
export function analyseGemm(spec: DotGeneralSpec, outStrides: readonly number[]): GemmAnalysis {
  const none = Object.freeze({ lhs: undefined, rhs: undefined });
  const direct = planFor(spec, { lhs: spec.lhs.strides, rhs: spec.rhs.strides, out: outStrides });
  if (direct.blocker === 'output') return Object.freeze({ direct: undefined, canonical: undefined, keep: none, summed: undefined });
  // Canonical operands: lhs [free in the output's m order, contracting in pair order, batch],
  // rhs [contracting in pair order, free in the output's n order, batch], dense column-major.
  const nl = spec.lhsFree.length;
  const mOrder = spec.lhsFree.map((ax, i) => [ax, outStrides[i]!] as const).sort((x, y) => x[1] - y[1]).map(([ax]) => ax);
  const nOrder = spec.rhsFree.map((ax, i) => [ax, outStrides[nl + i]!] as const).sort((x, y) => x[1] - y[1]).map(([ax]) => ax);
  const lhsStrides = denseInOrder(spec.lhs.shape, [...mOrder, ...spec.lhsContracting, ...spec.lhsBatch]);
  const rhsStrides = denseInOrder(spec.rhs.shape, [...spec.rhsContracting, ...nOrder, ...spec.rhsBatch]);
  const canonical = planFor(spec, { lhs: lhsStrides, rhs: rhsStrides, out: outStrides });
  let keep: GemmAnalysis['keep'] = none;
  if (direct.plan === undefined && canonical.plan !== undefined) {
    // Keep lhs: rhs dense with its contracting axes in the order of lhs's strides — k×n
    // column-major, or row-major when that keeps rhs's own unit-stride axis innermost (the copy
    // then moves whole rows instead of transposing).
    const byLhs = pairsByStride(spec.lhsContracting, spec.lhs.strides).map((i) => spec.rhsContracting[i]!);
    const rhsForLhs = denseInOrder(spec.rhs.shape, copyFriendly(spec.rhs, [byLhs, nOrder], spec.rhsBatch));
    const keepLhs = planFor(spec, { lhs: spec.lhs.strides, rhs: rhsForLhs, out: outStrides }).plan;
    // Keep rhs: lhs dense with its contracting axes in the order of rhs's strides (m×k, column- or row-major as above).
    const byRhs = pairsByStride(spec.rhsContracting, spec.rhs.strides).map((i) => spec.lhsContracting[i]!);
    const lhsForRhs = denseInOrder(spec.lhs.shape, copyFriendly(spec.lhs, [mOrder, byRhs], spec.lhsBatch));
    const keepRhs = planFor(spec, { lhs: lhsForRhs, rhs: spec.rhs.strides, out: outStrides }).plan;
    keep = Object.freeze({
      lhs:
        keepLhs !== undefined && blasExpressible(keepLhs.m, keepLhs.k, keepLhs.lhs.rowStride, keepLhs.lhs.colStride)
          ? Object.freeze({ lhsStrides: spec.lhs.strides, rhsStrides: rhsForLhs, plan: keepLhs })
          : undefined,
      rhs:
        keepRhs !== undefined && blasExpressible(keepRhs.k, keepRhs.n, keepRhs.rhs.rowStride, keepRhs.rhs.colStride)
          ? Object.freeze({ lhsStrides: lhsForRhs, rhsStrides: spec.rhs.strides, plan: keepRhs })
          : undefined,
    });
  }
  return Object.freeze({
    direct: direct.plan,
    canonical: canonical.plan === undefined ? undefined : Object.freeze({ lhsStrides, rhsStrides, plan: canonical.plan }),
    keep,
    summed: direct.plan === undefined ? summedPlan(spec, outStrides) : undefined,
  });
}
