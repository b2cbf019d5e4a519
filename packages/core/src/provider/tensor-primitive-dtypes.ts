/**
 * Which dtypes each tensor primitive is defined for, and the dtype it writes: the one table the
 * façade validates against (before anything is allocated) and core's reference provider declines
 * by. A native provider may support fewer (it then declines with the dtype reason), never more.
 */
import type { DType } from '../tensor/dtype.js';
import type { BinaryOp, ReduceOp, UnaryOp } from './tensor-primitives.js';

const FLOAT: readonly DType[] = Object.freeze(['f32', 'f64', 'c64', 'c128']);
const NUMERIC: readonly DType[] = Object.freeze(['f32', 'f64', 'c64', 'c128', 'i32', 'i64']);
const ORDERED: readonly DType[] = Object.freeze(['f32', 'f64', 'i32', 'i64', 'bool']);
const ALL: readonly DType[] = Object.freeze(['f32', 'f64', 'c64', 'c128', 'i32', 'i64', 'bool']);

export const BINARY_OPS: readonly BinaryOp[] = Object.freeze(['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'pow', 'eq', 'lt', 'le', 'gt', 'ge']);
export const UNARY_OPS: readonly UnaryOp[] = Object.freeze(['neg', 'abs', 'exp', 'log', 'sqrt', 'sin', 'cos', 'tanh', 'conj', 'real', 'imag', 'scale', 'cast']);
export const REDUCE_OPS: readonly ReduceOp[] = Object.freeze(['sum', 'mean', 'max', 'min', 'prod', 'argmax', 'argmin', 'norm']);

/** The dtypes of each binary operation's operands (lhs and rhs have the same dtype). */
export const BINARY_DTYPES: Readonly<Record<BinaryOp, readonly DType[]>> = Object.freeze({
  add: NUMERIC,
  sub: NUMERIC,
  mul: NUMERIC,
  div: NUMERIC,
  maximum: ORDERED,
  minimum: ORDERED,
  pow: FLOAT,
  eq: ALL,
  lt: ORDERED,
  le: ORDERED,
  gt: ORDERED,
  ge: ORDERED,
});

/** The source dtypes of each unary operation (`cast` converts between any two dtypes). */
export const UNARY_DTYPES: Readonly<Record<UnaryOp, readonly DType[]>> = Object.freeze({
  neg: NUMERIC,
  abs: NUMERIC,
  exp: FLOAT,
  log: FLOAT,
  sqrt: FLOAT,
  sin: FLOAT,
  cos: FLOAT,
  tanh: FLOAT,
  conj: NUMERIC,
  real: NUMERIC,
  imag: NUMERIC,
  scale: NUMERIC,
  cast: ALL,
});

/** The source dtypes of each reduction (mean and norm of integers are not defined: cast first). */
export const REDUCE_DTYPES: Readonly<Record<ReduceOp, readonly DType[]>> = Object.freeze({
  sum: NUMERIC,
  mean: FLOAT,
  max: ORDERED,
  min: ORDERED,
  prod: NUMERIC,
  argmax: ORDERED,
  argmin: ORDERED,
  norm: FLOAT,
});

const COMPARISONS: ReadonlySet<BinaryOp> = new Set(['eq', 'lt', 'le', 'gt', 'ge']);

/** The real dtype of a complex one's parts; real dtypes map to themselves. */
export function realPart(dtype: DType): DType {
  return dtype === 'c64' ? 'f32' : dtype === 'c128' ? 'f64' : dtype;
}

export function isComparison(op: BinaryOp): boolean {
  return COMPARISONS.has(op);
}

export function binaryOutDType(op: BinaryOp, dtype: DType): DType {
  return isComparison(op) ? 'bool' : dtype;
}

/** The output dtype of a unary operation (`target` for cast). */
export function unaryOutDType(op: UnaryOp, dtype: DType, target?: DType): DType {
  if (op === 'cast') return target ?? dtype;
  return op === 'abs' || op === 'real' || op === 'imag' ? realPart(dtype) : dtype;
}

export function reduceOutDType(op: ReduceOp, dtype: DType): DType {
  if (op === 'argmax' || op === 'argmin') return 'i64';
  return op === 'norm' ? realPart(dtype) : dtype;
}

/** Reductions with no value over zero elements (the façade refuses them before allocating). */
export function needsElements(op: ReduceOp): boolean {
  return op === 'max' || op === 'min' || op === 'argmax' || op === 'argmin';
}
