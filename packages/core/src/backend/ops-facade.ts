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

/**
 * The operations of `ops(backend | session)`; see docs/operations.md. Every computing operation
 * takes `{ out?, signal? }` (reductions add `axes` and `keepDims`) and resolves to a fresh tensor
 * (or `out`); `permute` and `broadcastTo` return views synchronously.
 */
export interface TensorOps {
  /**
   * `lhs + rhs`, broadcasting (leading axes aligned), in the operands' dtype.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * console.log((await o.add(x, y)).toArray()); // prints: [ 5, 2.5, 6 ]
   * await backend.close();
   * ```
   */
  readonly add: Binary;
  /**
   * `lhs - rhs`, broadcasting, in the operands' dtype.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * console.log((await o.sub(x, y)).toArray()); // prints: [ -3, 1.5, 0 ]
   * await backend.close();
   * ```
   */
  readonly sub: Binary;
  /**
   * `lhs · rhs` element-wise (complex: the complex product), broadcasting.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const m = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
   * const column = Tensor.fromArray('f64', [2], [10, 100]); // broadcast along axis 1
   * console.log((await o.mul(m, column)).toArray()); // prints: [ 10, 200, 30, 400 ]
   * await backend.close();
   * ```
   */
  readonly mul: Binary;
  /**
   * `lhs / rhs` element-wise, broadcasting (integer division truncates; IEEE results for floats).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * console.log((await o.div(x, y)).toArray()); // prints: [ 0.25, 4, 1 ]
   * await backend.close();
   * ```
   */
  readonly div: Binary;
  /**
   * The element-wise maximum, broadcasting (real dtypes).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * console.log((await o.maximum(x, y)).toArray()); // prints: [ 4, 2, 3 ]
   * await backend.close();
   * ```
   */
  readonly maximum: Binary;
  /**
   * The element-wise minimum, broadcasting (real dtypes).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * console.log((await o.minimum(x, y)).toArray()); // prints: [ 1, 0.5, 3 ]
   * await backend.close();
   * ```
   */
  readonly minimum: Binary;
  /**
   * `lhs` raised to `rhs` element-wise, broadcasting.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const two = Tensor.fromArray('f64', [1], [2]);
   * console.log((await o.pow(x, two)).toArray()); // prints: [ 1, 4, 9 ]
   * await backend.close();
   * ```
   */
  readonly pow: Binary;
  /**
   * `lhs == rhs` element-wise, broadcasting: a `bool` tensor (0/1).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * const r = await o.eq(x, y);
   * console.log(r.dtype, r.toArray()); // prints: bool [ 0, 0, 1 ]
   * await backend.close();
   * ```
   */
  readonly eq: Compare;
  /**
   * `lhs < rhs` element-wise, broadcasting: a `bool` tensor (0/1).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * console.log((await o.lt(x, y)).toArray()); // prints: [ 1, 0, 0 ]
   * await backend.close();
   * ```
   */
  readonly lt: Compare;
  /**
   * `lhs ≤ rhs` element-wise, broadcasting: a `bool` tensor (0/1).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * console.log((await o.le(x, y)).toArray()); // prints: [ 1, 0, 1 ]
   * await backend.close();
   * ```
   */
  readonly le: Compare;
  /**
   * `lhs > rhs` element-wise, broadcasting: a `bool` tensor (0/1).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * console.log((await o.gt(x, y)).toArray()); // prints: [ 0, 1, 0 ]
   * await backend.close();
   * ```
   */
  readonly gt: Compare;
  /**
   * `lhs ≥ rhs` element-wise, broadcasting: a `bool` tensor (0/1).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * const y = Tensor.fromArray('f64', [3], [4, 0.5, 3]);
   * console.log((await o.ge(x, y)).toArray()); // prints: [ 0, 1, 1 ]
   * await backend.close();
   * ```
   */
  readonly ge: Compare;
  /**
   * `-t` element-wise.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
   * console.log((await o.neg(x)).toArray()); // prints: [ -1, -2, -3 ]
   * await backend.close();
   * ```
   */
  readonly neg: Unary;
  /**
   * `|t|` element-wise; the modulus of a complex dtype, as its real dtype (c128 → f64).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const z = Tensor.fromArray('c128', [2], [3, 4, 0, -1]); // 3+4i, -i
   * const r = await o.abs(z);
   * console.log(r.dtype, r.toArray()); // prints: f64 [ 5, 1 ]
   * await backend.close();
   * ```
   */
  readonly abs: ToReal;
  /**
   * `eᵗ` element-wise.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const t = Tensor.fromArray('f64', [2], [0, 1]);
   * console.log((await o.exp(t)).toArray()); // prints: [ 1, 2.718281828459045 ]
   * await backend.close();
   * ```
   */
  readonly exp: Unary;
  /**
   * The natural logarithm element-wise.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const t = Tensor.fromArray('f64', [2], [1, Math.E]);
   * console.log((await o.log(t)).toArray()); // prints: [ 0, 1 ]
   * await backend.close();
   * ```
   */
  readonly log: Unary;
  /**
   * The square root element-wise (principal root for complex).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const t = Tensor.fromArray('f64', [3], [1, 4, 9]);
   * console.log((await o.sqrt(t)).toArray()); // prints: [ 1, 2, 3 ]
   * await backend.close();
   * ```
   */
  readonly sqrt: Unary;
  /**
   * The sine element-wise (radians).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const t = Tensor.fromArray('f64', [2], [0, Math.PI / 2]);
   * console.log((await o.sin(t)).toArray()); // prints: [ 0, 1 ]
   * await backend.close();
   * ```
   */
  readonly sin: Unary;
  /**
   * The cosine element-wise (radians).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const t = Tensor.fromArray('f64', [2], [0, Math.PI]);
   * console.log((await o.cos(t)).toArray()); // prints: [ 1, -1 ]
   * await backend.close();
   * ```
   */
  readonly cos: Unary;
  /**
   * The hyperbolic tangent element-wise.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const t = Tensor.fromArray('f64', [2], [0, 100]);
   * console.log((await o.tanh(t)).toArray()); // prints: [ 0, 1 ]
   * await backend.close();
   * ```
   */
  readonly tanh: Unary;
  /**
   * The complex conjugate element-wise (a copy for real dtypes).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const z = Tensor.fromArray('c128', [2], [3, 4, 0, -1]); // 3+4i, -i
   * console.log((await o.conj(z)).toArray()); // prints: [ 3, -4, 0, 1 ]
   * await backend.close();
   * ```
   */
  readonly conj: Unary;
  /**
   * The real part element-wise, as the real dtype (c128 → f64; real dtypes: a copy).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const z = Tensor.fromArray('c128', [2], [3, 4, 0, -1]); // 3+4i, -i
   * console.log((await o.real(z)).toArray()); // prints: [ 3, 0 ]
   * await backend.close();
   * ```
   */
  readonly real: ToReal;
  /**
   * The imaginary part element-wise, as the real dtype (c128 → f64; real dtypes: zeros).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const z = Tensor.fromArray('c128', [2], [3, 4, 0, -1]); // 3+4i, -i
   * console.log((await o.imag(z)).toArray()); // prints: [ 4, -1 ]
   * await backend.close();
   * ```
   */
  readonly imag: ToReal;
  /**
   * `alpha · t` (alpha a number for real dtypes, `[re, im]` for complex).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [2], [1, 2]);
   * console.log((await o.scale(x, 3)).toArray()); // prints: [ 3, 6 ]
   * const z = Tensor.fromArray('c128', [1], [1, 0]);
   * console.log((await o.scale(z, [0, 1])).toArray()); // prints: [ 0, 1 ]
   * await backend.close();
   * ```
   */
  scale<D extends DType>(t: Tensor<D>, alpha: Scalar, options?: PrimitiveOptions<D>): Promise<Tensor<D>>;
  /**
   * `t` converted to `dtype` (integers saturate; NaN becomes 0).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const x = Tensor.fromArray('f64', [3], [1.7, -2.5, 1e12]);
   * console.log((await o.cast(x, 'i32')).toArray()); // prints: [ 1, -2, 2147483647 ]
   * await backend.close();
   * ```
   */
  cast<D extends DType, T extends DType>(t: Tensor<D>, dtype: T, options?: PrimitiveOptions<T>): Promise<Tensor<T>>;
  /**
   * The sum over `axes` (default every axis), keeping them with extent 1 when `keepDims`.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6], { order: 'row' });
   * console.log((await o.sum(m, { axes: [1] })).toArray()); // prints: [ 6, 15 ]
   * console.log((await o.sum(m)).toArray()); // prints: [ 21 ]
   * await backend.close();
   * ```
   */
  readonly sum: Reduce;
  /**
   * The mean over `axes` (default every axis).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6], { order: 'row' });
   * console.log((await o.mean(m, { axes: [0] })).toArray()); // prints: [ 2.5, 3.5, 4.5 ]
   * await backend.close();
   * ```
   */
  readonly mean: Reduce;
  /**
   * The maximum over `axes` (default every axis; real dtypes).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const m = Tensor.fromArray('f64', [2, 3], [1, 9, 3, 4, 5, 6], { order: 'row' });
   * console.log((await o.max(m, { axes: [1] })).toArray()); // prints: [ 9, 6 ]
   * await backend.close();
   * ```
   */
  readonly max: Reduce;
  /**
   * The minimum over `axes` (default every axis; real dtypes).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const m = Tensor.fromArray('f64', [2, 3], [1, 9, 3, 4, 5, 0], { order: 'row' });
   * console.log((await o.min(m, { axes: [1] })).toArray()); // prints: [ 1, 0 ]
   * await backend.close();
   * ```
   */
  readonly min: Reduce;
  /**
   * The product over `axes` (default every axis).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6], { order: 'row' });
   * console.log((await o.prod(m, { axes: [1] })).toArray()); // prints: [ 6, 120 ]
   * await backend.close();
   * ```
   */
  readonly prod: Reduce;
  /**
   * The index of the maximum along `axes` (first of equal ones), as `i64`.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const m = Tensor.fromArray('f64', [2, 3], [1, 9, 3, 4, 5, 6], { order: 'row' });
   * const i = await o.argmax(m, { axes: [1], keepDims: true });
   * console.log(i.dtype, i.shape, i.toArray()); // prints: i64 [ 2, 1 ] [ 1n, 2n ]
   * await backend.close();
   * ```
   */
  readonly argmax: ArgReduce;
  /**
   * The index of the minimum along `axes` (first of equal ones), as `i64`.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const v = Tensor.fromArray('f64', [4], [3, -1, 2, -1]);
   * console.log((await o.argmin(v)).toArray()); // prints: [ 1n ]
   * await backend.close();
   * ```
   */
  readonly argmin: ArgReduce;
  /**
   * The Euclidean (Frobenius) norm over `axes` (default every axis), as the real dtype.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const v = Tensor.fromArray('f64', [2], [3, 4]);
   * console.log((await o.norm(v)).toArray()); // prints: [ 5 ]
   * await backend.close();
   * ```
   */
  readonly norm: ReduceToReal;
  /**
   * A view with axis `i` being axis `axes[i]` of `t` (no copy, no execution).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const t = Tensor.zeros('f64', [2, 3, 4]);
   * console.log(o.permute(t, [2, 0, 1]).shape); // prints: [ 4, 2, 3 ]
   * await backend.close();
   * ```
   */
  permute<D extends DType>(t: Tensor<D>, axes: readonly number[]): Tensor<D>;
  /**
   * A view of `t` with `shape`: leading axes aligned, size-1 axes stretched with stride 0 (no copy).
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const column = Tensor.fromArray('f64', [2], [1, 2]);
   * const b = o.broadcastTo(column, [2, 3]);
   * console.log(b.strides, b.toArray({ order: 'row' })); // prints: [ 1, 0 ] [ 1, 1, 1, 2, 2, 2 ]
   * await backend.close();
   * ```
   */
  broadcastTo<D extends DType>(t: Tensor<D>, shape: readonly number[]): Tensor<D>;
  /**
   * A fresh dense copy of any view, column-major (default) or row-major, conjugated when asked.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const m = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]);
   * const t = await o.contiguous(m.transpose());
   * console.log(t.strides, t.toArray()); // prints: [ 1, 3 ] [ 1, 3, 5, 2, 4, 6 ]
   * await backend.close();
   * ```
   */
  contiguous<D extends DType>(t: Tensor<D>, options?: ContiguousOptions): Promise<Tensor<D>>;
  /**
   * Copy `src` (broadcast to `out`'s shape, same dtype) into `out`; resolves to `out`.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * const out = Tensor.zeros('f64', [2, 2]);
   * await o.copyInto(out, Tensor.fromArray('f64', [2], [5, 6]));
   * console.log(out.toArray()); // prints: [ 5, 6, 5, 6 ]
   * await backend.close();
   * ```
   */
  copyInto<D extends DType>(out: Tensor<D>, src: Tensor<D>, options?: CopyIntoOptions): Promise<Tensor<D>>;
  /**
   * How many operations on this bundle ran core's reference implementation because the provider declined.
   *
   * @example
   * ```ts
   * import { CpuBackend, Tensor, ops } from '@tenferro/core';
   *
   * const backend = await CpuBackend.create({ threads: 1 });
   * const o = ops(backend);
   * await o.add(Tensor.fromArray('f64', [1], [1]), Tensor.fromArray('f64', [1], [2]));
   * console.log(o.referenceFallbacks()); // e.g. 0 with a native tensor-primitives provider
   * await backend.close();
   * ```
   */
  referenceFallbacks(): number;
}

const BINARY: readonly BinaryOp[] = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'pow', 'eq', 'lt', 'le', 'gt', 'ge'];
const UNARY: readonly UnaryOp[] = ['neg', 'abs', 'exp', 'log', 'sqrt', 'sin', 'cos', 'tanh', 'conj', 'real', 'imag'];
const REDUCE: readonly ReduceOp[] = ['sum', 'mean', 'max', 'min', 'prod', 'argmax', 'argmin', 'norm'];

/**
 * The tensor operations of a backend handle or of a session (`InvalidArgument` for anything
 * else). Builds nothing and admits nothing until an operation is called.
 *
 * @example
 * ```ts
 * import { CpuBackend, Tensor, ops } from '@tenferro/core';
 *
 * const backend = await CpuBackend.create({ threads: 1 });
 * const o = ops(backend);
 * const a = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6], { order: 'row' });
 * const column = Tensor.fromArray('f64', [2], [10, 20]);
 * const b = await o.add(a, column); // [[11, 12, 13], [24, 25, 26]]
 * console.log((await o.sum(b, { axes: [1] })).toArray()); // prints: [ 36, 75 ]
 * await backend.close();
 * ```
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
