import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import { CONTRACTION_DTYPES, DTYPE_INFO, type DType, type Scalar } from '../tensor/dtype.js';
import { elementCount, layoutIsInjective, reachableSpan } from '../tensor/layout.js';
import { Tensor, tensorInternals } from '../tensor/tensor.js';
import { validateSignal } from '../util/abort-listeners.js';
import { bufferAddress } from '../util/buffer-address.js';
import { NumberKeyCache, numberKey, pushNumbers } from '../util/number-key.js';

/** Which axes contract and which are batch axes, per side: `[lhsAxes, rhsAxes]`, paired in order. */
export interface DotGeneralDims {
  readonly contracting: readonly [readonly number[], readonly number[]];
  readonly batch?: readonly [readonly number[], readonly number[]];
}

/** Options of `dotGeneral` and `matmul` (unknown keys are `InvalidArgument`). */
export interface DotGeneralOptions {
  /** Conjugate the complex lhs (no effect on real dtypes). */
  readonly conjLhs?: boolean;
  /** Conjugate the complex rhs (no effect on real dtypes). */
  readonly conjRhs?: boolean;
  /** Reuse the GEMM analysis cached in this slot of the engine's cache when shapes, strides and axes are identical (R116). */
  readonly analysisSlot?: number;
  /** Abort the operation: while it waits → `AdmissionAborted`; while it runs → `ExecutionAborted`. */
  readonly signal?: AbortSignal;
}

/** Options of `dotGeneralInto`: the dot-general options plus the scalars of `out = alpha · lhs·rhs + beta · out`. */
export interface DotGeneralIntoOptions extends DotGeneralOptions {
  /** Scales the product (default 1; `[re, im]` for complex). */
  readonly alpha?: Scalar;
  /** Scales the previous `out` (default 0: `out` is overwritten; `[re, im]` for complex). */
  readonly beta?: Scalar;
}

/** Option keys of a fresh-output dot-general (no `alpha`/`beta`: a fresh output has no previous value). */
const FRESH_OPTIONS: ReadonlySet<string> = new Set(['conjLhs', 'conjRhs', 'analysisSlot', 'signal']);
const INTO_OPTIONS: ReadonlySet<string> = new Set([...FRESH_OPTIONS, 'alpha', 'beta']);

/** A validated dot-general: everything the planner needs, nothing unchecked. */
export interface DotGeneralSpec {
  readonly dtype: DType;
  readonly lhs: Tensor;
  readonly rhs: Tensor;
  readonly lhsFree: readonly number[];
  readonly rhsFree: readonly number[];
  readonly lhsContracting: readonly number[];
  readonly rhsContracting: readonly number[];
  readonly lhsBatch: readonly number[];
  readonly rhsBatch: readonly number[];
  /** `[lhs free…, rhs free…, batch…]` (R103). */
  readonly outShape: readonly number[];
  readonly conjLhs: boolean;
  readonly conjRhs: boolean;
  readonly alpha: Scalar;
  readonly beta: Scalar;
  readonly analysisSlot: number | undefined;
  readonly signal: AbortSignal | undefined;
  /** Extents and axis lists: what the axis checks depended on (and, with strides, an analysis). */
  readonly structureKey: readonly number[];
}

/**
 * Validate a dot-general in the order of R102, before any allocation or mutation: dtypes (lhs,
 * rhs, output, alpha, beta), tensors, layouts, axes in range, no duplicates within a role,
 * contracting ∩ batch = ∅, equal counts, paired extents, the output shape — and, ours, an
 * output that aliases itself or an input (`OutputAliasing`). Integer dtypes are
 * `UnsupportedDType` (R109).
 */
export function validateDotGeneral(
  op: string,
  lhs: unknown,
  rhs: unknown,
  dims: unknown,
  options: unknown,
  into?: { readonly out: unknown },
): DotGeneralSpec {
  // `into` says which call this is: an `out` that is undefined (or anything but a tensor) on the
  // `Into` form is a bad argument, never a fresh-output call.
  checkTensor(op, 'lhs', lhs);
  checkTensor(op, 'rhs', rhs);
  if (into !== undefined) checkTensor(op, 'out', into.out);
  const l = lhs as Tensor;
  const r = rhs as Tensor;
  const o = into?.out as Tensor | undefined;
  const opts = (options ?? NO_OPTIONS) as DotGeneralIntoOptions;
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) throw invalidArgument(op, 'options', 'an options object', options);
  const known = into === undefined ? FRESH_OPTIONS : INTO_OPTIONS;
  for (const key in opts) {
    if (Object.hasOwn(opts, key) && !known.has(key)) throw invalidArgument(op, `options.${key}`, `one of the options ${[...known].join(', ')}`, key);
  }

  // dtypes
  if (l.dtype !== r.dtype) throw dtypeMismatch(op, 'rhs', l.dtype, r.dtype);
  if (o !== undefined && o.dtype !== l.dtype) throw dtypeMismatch(op, 'out', l.dtype, o.dtype);
  const complex = DTYPE_INFO[l.dtype].complex;
  const alpha = opts.alpha === undefined && !complex ? 1 : scalar(op, 'options.alpha', opts.alpha ?? 1, l.dtype, complex);
  const beta = opts.beta === undefined && !complex ? 0 : scalar(op, 'options.beta', opts.beta ?? 0, l.dtype, complex);
  if (!CONTRACTION_DTYPES.includes(l.dtype)) {
    throw new TenferroError('UnsupportedDType', `contractions support ${CONTRACTION_DTYPES.join(', ')}; convert ${l.dtype} operands to f64`, {
      op,
      detail: { dtype: l.dtype },
    });
  }
  for (const flag of ['conjLhs', 'conjRhs'] as const) {
    if (opts[flag] !== undefined && typeof opts[flag] !== 'boolean') throw invalidArgument(op, `options.${flag}`, 'a boolean', opts[flag]);
  }
  if (opts.analysisSlot !== undefined && (!Number.isSafeInteger(opts.analysisSlot) || opts.analysisSlot < 0)) {
    throw invalidArgument(op, 'options.analysisSlot', 'a non-negative integer slot', opts.analysisSlot);
  }
  const signal = validateSignal(opts.signal, op);

  // layouts: a tensor's layout was validated when it was made and cannot change (storage never shrinks)

  // axes: the checks depend only on ranks, extents and the axis lists, so their result is cached
  if (typeof dims !== 'object' || dims === null) throw invalidArgument(op, 'dims', '{ contracting: [lhsAxes, rhsAxes], batch?: [lhsAxes, rhsAxes] }', dims);
  const d = dims as DotGeneralDims;
  const contracting = axisPair(op, 'dims.contracting', d.contracting);
  const batch = d.batch === undefined ? NO_BATCH : axisPair(op, 'dims.batch', d.batch);
  const structureKey: number[] = [];
  pushNumbers(structureKey, l.shape);
  pushNumbers(structureKey, r.shape);
  pushNumbers(structureKey, contracting[0]);
  pushNumbers(structureKey, contracting[1]);
  pushNumbers(structureKey, batch[0]);
  pushNumbers(structureKey, batch[1]);
  const key = numberKey(structureKey);
  let structure = structures.get(key);
  if (structure === undefined) {
    // The caller's axis lists are copied (frozen) once per structure, not per call.
    const copy = (axes: readonly number[]) => Object.freeze([...axes]);
    structure = checkAxes(op, l, r, d, copy(contracting[0]), copy(contracting[1]), copy(batch[0]), copy(batch[1]));
    structures.set(key, structure);
  }
  const { lhsFree, rhsFree, outShape, lc, rc, lb, rb } = structure;
  // A fresh output whose byte size is not a safe integer is refused here, before admission,
  // like every other bad input (R99), not by the allocation inside the entry.
  if (o === undefined && elementCount(outShape, op) * DTYPE_INFO[l.dtype].bytes > Number.MAX_SAFE_INTEGER) {
    throw new TenferroError('IntegerOverflow', `a fresh output of shape [${outShape.join(', ')}] (${l.dtype}) has more than 2^53-1 bytes`, { op, detail: { shape: [...outShape], dtype: l.dtype } });
  }
  if (o !== undefined) {
    if (o.rank !== outShape.length || o.shape.some((e, i) => e !== outShape[i])) {
      throw new TenferroError('ShapeMismatch', `output shape must be [${outShape.join(', ')}] but is [${o.shape.join(', ')}]`, {
        op,
        detail: { kind: 'ExpectedActual', expected: outShape, actual: [...o.shape] },
      });
    }
    if (!layoutIsInjective(o.shape, o.strides)) {
      throw new TenferroError('OutputAliasing', 'the output layout is not provably free of self-overlap (sorted by stride, each stride must cover the previous axis)', { op, detail: { role: 'out' } });
    }
    const span = reachableSpan(o);
    if (span !== undefined) {
      checkNoOverlap(op, o, span, 'lhs', l);
      checkNoOverlap(op, o, span, 'rhs', r);
    }
  }
  return Object.freeze({
    dtype: l.dtype,
    lhs: l,
    rhs: r,
    lhsFree,
    rhsFree,
    lhsContracting: lc,
    rhsContracting: rc,
    lhsBatch: lb,
    rhsBatch: rb,
    outShape,
    conjLhs: complex && opts.conjLhs === true,
    conjRhs: complex && opts.conjRhs === true,
    alpha,
    beta,
    analysisSlot: opts.analysisSlot,
    signal,
    structureKey,
  });
}

const NO_OPTIONS: DotGeneralIntoOptions = Object.freeze({});

function checkTensor(op: string, name: string, t: unknown): void {
  if (!Tensor.isTensor(t)) throw invalidArgument(op, name, 'a Tensor', t);
  tensorInternals.check(t, op, name);
}

/** What the axis checks derive: the free axes and the output shape, and the (copied) axis lists they checked. */
interface Structure {
  readonly lhsFree: readonly number[];
  readonly rhsFree: readonly number[];
  readonly outShape: readonly number[];
  readonly lc: readonly number[];
  readonly rc: readonly number[];
  readonly lb: readonly number[];
  readonly rb: readonly number[];
}

/** `OutputAliasing` when the output's reachable bytes overlap those of input `name`. */
function checkNoOverlap(op: string, o: Tensor, span: { first: number; last: number }, name: 'lhs' | 'rhs', t: Tensor): void {
  const other = reachableSpan(t);
  if (other !== undefined && sameMemoryOverlap(tensorInternals.buffer(o), bytes(span, o.dtype), tensorInternals.buffer(t), bytes(other, t.dtype))) {
    throw new TenferroError('OutputAliasing', `the output overlaps the storage of ${name}`, { op, detail: { role: 'out', input: name } });
  }
}

/** Axis checks already passed, by extents and axis lists. */
const structures = new NumberKeyCache<Structure>(256);
const NO_BATCH: readonly [readonly number[], readonly number[]] = Object.freeze([Object.freeze([]), Object.freeze([])]);

/** Axes in range, no duplicates within a role, contracting ∩ batch = ∅, equal counts, paired extents (R102). */
function checkAxes(op: string, l: Tensor, r: Tensor, d: DotGeneralDims, lc: readonly number[], rc: readonly number[], lb: readonly number[], rb: readonly number[]): Structure {
  for (const [axes, t, role] of [
    [lc, l, 'dims.contracting[0]'],
    [rc, r, 'dims.contracting[1]'],
    [lb, l, 'dims.batch[0]'],
    [rb, r, 'dims.batch[1]'],
  ] as const) {
    for (const a of axes) {
      if (a < 0 || a >= t.rank) {
        throw new TenferroError('AxisOutOfBounds', `axis ${a} in ${role} is out of bounds for rank ${t.rank}`, { op, detail: { axis: a, rank: t.rank, role } });
      }
    }
  }
  for (const [axes, role] of [
    [lc, 'dims.contracting[0]'],
    [rc, 'dims.contracting[1]'],
    [lb, 'dims.batch[0]'],
    [rb, 'dims.batch[1]'],
  ] as const) {
    const seen = new Set<number>();
    for (const a of axes) {
      if (seen.has(a)) throw new TenferroError('DuplicateAxis', `axis ${a} appears twice in ${role}`, { op, detail: { axis: a, role } });
      seen.add(a);
    }
  }
  for (const [c, b, side] of [
    [lc, lb, 'lhs'],
    [rc, rb, 'rhs'],
  ] as const) {
    const both = c.find((a) => b.includes(a));
    if (both !== undefined) {
      throw new TenferroError('AxisRoleConflict', `${side} axis ${both} is both contracting and batch`, {
        op,
        detail: { axis: both, side, firstRole: 'contracting', secondRole: 'batch' },
      });
    }
  }
  if (lc.length !== rc.length) throw invalidArgument(op, 'dims.contracting', 'the same number of lhs and rhs contracting axes', d.contracting);
  if (lb.length !== rb.length) throw invalidArgument(op, 'dims.batch', 'the same number of lhs and rhs batch axes', d.batch);
  for (const [la, ra, role] of [
    ...lc.map((a, i) => [a, rc[i]!, 'contracted'] as const),
    ...lb.map((a, i) => [a, rb[i]!, 'batch'] as const),
  ]) {
    if (l.shape[la] !== r.shape[ra]) {
      throw new TenferroError('ShapeMismatch', `${role} extents differ: lhs axis ${la} has ${l.shape[la]}, rhs axis ${ra} has ${r.shape[ra]}`, {
        op,
        detail: { kind: role === 'contracted' ? 'ContractedDimensions' : 'BatchDimensions', lhsAxis: la, rhsAxis: ra, lhsExtent: l.shape[la], rhsExtent: r.shape[ra] },
      });
    }
  }
  const lhsFree = range(l.rank).filter((a) => !lc.includes(a) && !lb.includes(a));
  const rhsFree = range(r.rank).filter((a) => !rc.includes(a) && !rb.includes(a));
  const outShape = [...lhsFree.map((a) => l.shape[a]!), ...rhsFree.map((a) => r.shape[a]!), ...lb.map((a) => l.shape[a]!)];
  return Object.freeze({ lhsFree: Object.freeze(lhsFree), rhsFree: Object.freeze(rhsFree), outShape: Object.freeze(outShape), lc, rc, lb, rb });
}

/** The caller's `[lhsAxes, rhsAxes]`, checked to be two arrays of integers (not copied). */
function axisPair(op: string, param: string, value: unknown): readonly [readonly number[], readonly number[]] {
  if (!Array.isArray(value) || value.length !== 2 || !Array.isArray(value[0]) || !Array.isArray(value[1])) {
    throw invalidArgument(op, param, '[lhsAxes, rhsAxes]', value);
  }
  for (let side = 0; side < 2; side++) {
    const axes = value[side] as unknown[];
    for (let i = 0; i < axes.length; i++) {
      const a = axes[i];
      if (typeof a !== 'number' || !Number.isInteger(a)) throw invalidArgument(op, `${param}[${side}][${i}]`, 'an integer axis', a);
    }
  }
  return value as [number[], number[]];
}

function scalar(op: string, param: string, value: unknown, dtype: DType, complex: boolean): Scalar {
  if (typeof value === 'number') return complex ? Object.freeze([value, 0] as const) : value;
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'number' && typeof value[1] === 'number') {
    if (!complex) throw dtypeMismatch(op, param, dtype, 'complex');
    return Object.freeze([value[0], value[1]] as const);
  }
  throw invalidArgument(op, param, complex ? 'a number or [re, im]' : 'a number', value);
}

function dtypeMismatch(op: string, role: string, expected: string, actual: string): TenferroError {
  return new TenferroError('DTypeMismatch', `${role} must be ${expected} but is ${actual}`, { op, detail: { role, expected, actual } });
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

/**
 * Whether two byte ranges of two buffers overlap in memory: of one buffer, by offset; of two
 * distinct buffer objects, by the addresses of their memory (two objects can share one store —
 * a buffer that went through `postMessage` and back). Without the OS binding only identical
 * objects are compared.
 */
function sameMemoryOverlap(a: SharedArrayBuffer, ra: { lo: number; hi: number }, b: SharedArrayBuffer, rb: { lo: number; hi: number }): boolean {
  if (a === b) return ra.lo < rb.hi && rb.lo < ra.hi;
  const baseA = bufferAddress(a);
  const baseB = bufferAddress(b);
  if (baseA === undefined || baseB === undefined || a.byteLength === 0 || b.byteLength === 0) return false;
  return baseA + ra.lo < baseB + rb.hi && baseB + rb.lo < baseA + ra.hi;
}

function bytes(span: { first: number; last: number }, dtype: DType): { lo: number; hi: number } {
  const b = DTYPE_INFO[dtype].bytes;
  return { lo: span.first * b, hi: (span.last + 1) * b };
}
