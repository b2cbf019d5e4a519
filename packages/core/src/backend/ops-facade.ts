/**
 * `ops(backend | session)`: the tensor primitives — element-wise, reductions and layout — as one
 * object of operations, each a one-line call into `ops/` (one file per family), so `CpuBackend`
 * does not grow a method per operation. On a backend handle every operation is admitted on its
 * own (a permit and an executor entry per call); on a session it runs on the session's entry.
 */
import { invalidArgument } from '../errors/tenferro-error.js';
import { binary } from '../ops/elementwise-binary.js';
import { unary } from '../ops/elementwise-unary.js';
import { type ContiguousOptions, type CopyIntoOptions, broadcastTo, contiguous, copyInto, permute } from '../ops/layout-transforms.js';
import type { PrimitiveOptions } from '../ops/primitive-arguments.js';
import { type ReduceOptions, reduce } from '../ops/reduction.js';
import { referenceFallbacks } from '../ops/run-primitive.js';
import type { BinaryOp, ReduceOp, UnaryOp } from '../provider/tensor-primitives.js';
import type { DType, Scalar } from '../tensor/dtype.js';
import type { Tensor } from '../tensor/tensor.js';
import type { CpuExecSession } from './backend-session.js';
import type { CpuBackend } from './cpu-backend.js';
import { operationTargets } from './operation-targets.js';

/** The dtype of a complex dtype's parts; real dtypes map to themselves. */
export type RealDType<D extends DType> = D extends 'c64' ? 'f32' : D extends 'c128' ? 'f64' : D;

type Binary = <D extends DType>(lhs: Tensor<D>, rhs: Tensor<D>, options?: PrimitiveOptions<D>) => Promise<Tensor<D>>;
type Compare = <D extends DType>(lhs: Tensor<D>, rhs: Tensor<D>, options?: PrimitiveOptions<'bool'>) => Promise<Tensor<'bool'>>;
type Unary = <D extends DType>(t: Tensor<D>, options?: PrimitiveOptions<D>) => Promise<Tensor<D>>;
type ToReal = <D extends DType>(t: Tensor<D>, options?: PrimitiveOptions<RealDType<D>>) => Promise<Tensor<RealDType<D>>>;
type Reduce = <D extends DType>(t: Tensor<D>, options?: ReduceOptions<D>) => Promise<Tensor<D>>;
type ReduceToReal = <D extends DType>(t: Tensor<D>, options?: ReduceOptions<RealDType<D>>) => Promise<Tensor<RealDType<D>>>;
type ArgReduce = <D extends DType>(t: Tensor<D>, options?: ReduceOptions<'i64'>) => Promise<Tensor<'i64'>>;

/** The operations of `ops(backend | session)`; see docs/operations.md. */
export interface TensorOps {
  readonly add: Binary;
  readonly sub: Binary;
  readonly mul: Binary;
  readonly div: Binary;
  readonly maximum: Binary;
  readonly minimum: Binary;
  readonly pow: Binary;
  readonly eq: Compare;
  readonly lt: Compare;
  readonly le: Compare;
  readonly gt: Compare;
  readonly ge: Compare;
  readonly neg: Unary;
  readonly abs: ToReal;
  readonly exp: Unary;
  readonly log: Unary;
  readonly sqrt: Unary;
  readonly sin: Unary;
  readonly cos: Unary;
  readonly tanh: Unary;
  readonly conj: Unary;
  readonly real: ToReal;
  readonly imag: ToReal;
  /** `alpha · t` (alpha a number for real dtypes, `[re, im]` for complex). */
  scale<D extends DType>(t: Tensor<D>, alpha: Scalar, options?: PrimitiveOptions<D>): Promise<Tensor<D>>;
  /** `t` converted to `dtype` (integers saturate; NaN becomes 0). */
  cast<D extends DType, T extends DType>(t: Tensor<D>, dtype: T, options?: PrimitiveOptions<T>): Promise<Tensor<T>>;
  readonly sum: Reduce;
  readonly mean: Reduce;
  readonly max: Reduce;
  readonly min: Reduce;
  readonly prod: Reduce;
  readonly argmax: ArgReduce;
  readonly argmin: ArgReduce;
  readonly norm: ReduceToReal;
  /** A view with axis `i` being axis `axes[i]` of `t` (no copy). */
  permute<D extends DType>(t: Tensor<D>, axes: readonly number[]): Tensor<D>;
  /** A view of `t` with `shape`: leading axes aligned, size-1 axes stretched with stride 0 (no copy). */
  broadcastTo<D extends DType>(t: Tensor<D>, shape: readonly number[]): Tensor<D>;
  /** A fresh dense copy of any view, column-major (default) or row-major, conjugated when asked. */
  contiguous<D extends DType>(t: Tensor<D>, options?: ContiguousOptions): Promise<Tensor<D>>;
  /** Copy `src` (broadcast to `out`'s shape, same dtype) into `out`; resolves to `out`. */
  copyInto<D extends DType>(out: Tensor<D>, src: Tensor<D>, options?: CopyIntoOptions): Promise<Tensor<D>>;
  /** How many operations on this bundle ran core's reference implementation because the provider declined. */
  referenceFallbacks(): number;
}

const BINARY: readonly BinaryOp[] = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'pow', 'eq', 'lt', 'le', 'gt', 'ge'];
const UNARY: readonly UnaryOp[] = ['neg', 'abs', 'exp', 'log', 'sqrt', 'sin', 'cos', 'tanh', 'conj', 'real', 'imag'];
const REDUCE: readonly ReduceOp[] = ['sum', 'mean', 'max', 'min', 'prod', 'argmax', 'argmin', 'norm'];

/**
 * The tensor operations of a backend handle or of a session (`InvalidArgument` for anything
 * else). Builds nothing and admits nothing until an operation is called.
 */
export function ops(target: CpuBackend | CpuExecSession): TensorOps {
  const where = typeof target === 'object' && target !== null ? operationTargets.get(target) : undefined;
  if (where === undefined) throw invalidArgument('ops', 'target', 'a CpuBackend or a CpuExecSession', target);
  const { runner, bundle } = where;
  const table: Record<string, unknown> = {};
  for (const k of BINARY) table[k] = (l: Tensor, r: Tensor, o?: unknown) => binary(runner, bundle, k, l, r, o, `ops.${k}`);
  for (const k of UNARY) table[k] = (t: Tensor, o?: unknown) => unary(runner, bundle, k, t, undefined, o, `ops.${k}`);
  for (const k of REDUCE) table[k] = (t: Tensor, o?: unknown) => reduce(runner, bundle, k, t, o, `ops.${k}`);
  table.scale = (t: Tensor, alpha: unknown, o?: unknown) => unary(runner, bundle, 'scale', t, alpha, o, 'ops.scale');
  table.cast = (t: Tensor, dtype: unknown, o?: unknown) => unary(runner, bundle, 'cast', t, dtype, o, 'ops.cast');
  table.permute = (t: Tensor, axes: readonly number[]) => permute(t, axes, 'ops.permute');
  table.broadcastTo = (t: Tensor, shape: readonly number[]) => broadcastTo(t, shape, 'ops.broadcastTo');
  table.contiguous = (t: Tensor, o?: unknown) => contiguous(runner, bundle, t, o, 'ops.contiguous');
  table.copyInto = (out: Tensor, src: Tensor, o?: unknown) => copyInto(runner, bundle, out, src, o, 'ops.copyInto');
  table.referenceFallbacks = () => referenceFallbacks(bundle);
  return Object.freeze(table) as unknown as TensorOps;
}
