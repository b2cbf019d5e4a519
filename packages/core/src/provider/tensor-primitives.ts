import type { CpuExecutionContext } from '../contract/execution-context.js';
import type { Scalar } from '../tensor/dtype.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import type { ProviderBase } from './cpu-providers.js';
import type { CpuProviderOutcome } from './provider-outcome.js';

/** Element-wise binary operations; the last five compare and write `bool`. */
export type BinaryOp = 'add' | 'sub' | 'mul' | 'div' | 'maximum' | 'minimum' | 'pow' | 'eq' | 'lt' | 'le' | 'gt' | 'ge';
/** Element-wise unary operations (`scale` takes `alpha`, `cast` writes `out.dtype`). */
export type UnaryOp = 'neg' | 'abs' | 'exp' | 'log' | 'sqrt' | 'sin' | 'cos' | 'tanh' | 'conj' | 'real' | 'imag' | 'scale' | 'cast';
/** Reductions over a set of axes. */
export type ReduceOp = 'sum' | 'mean' | 'max' | 'min' | 'prod' | 'argmax' | 'argmin' | 'norm';

/**
 * `out[i] = op(lhs[i], rhs[i])`. lhs, rhs and out all have out's shape: broadcasting is already
 * expressed as stride 0 on the inputs. Every reachable element of every operand is inside its
 * buffer (core validated it); out never overlaps itself or an input. `lhs.dtype === rhs.dtype`;
 * `out.dtype` is the same, or `'bool'` for eq/lt/le/gt/ge.
 */
export interface CpuBinaryRequest {
  readonly op: BinaryOp;
  readonly lhs: TensorDescriptor;
  readonly rhs: TensorDescriptor;
  readonly out: TensorDescriptor;
}

/**
 * `out[i] = op(src[i])`, same shape. `out.dtype = src.dtype`, except abs/real/imag of c64/c128 →
 * f32/f64, and cast → the target dtype. `alpha` only for `'scale'` (a number for real dtypes,
 * `[re, im]` for complex).
 */
export interface CpuUnaryRequest {
  readonly op: UnaryOp;
  readonly src: TensorDescriptor;
  readonly out: TensorDescriptor;
  readonly alpha?: Scalar;
}

/**
 * A reduction of `src` over `axes` (sorted ascending, distinct, non-empty). `out` has src's shape
 * with every reduced axis of extent 1 (the keepDims form; the façade views it without them).
 * `out.dtype = src.dtype`, except argmax/argmin → `'i64'` and norm of c64/c128 → f32/f64. mean
 * of integers is declined (dtype reason).
 */
export interface CpuReduceRequest {
  readonly op: ReduceOp;
  readonly src: TensorDescriptor;
  readonly axes: readonly number[];
  readonly out: TensorDescriptor;
}

/**
 * The tensor-primitives slot: element-wise and reduction kernels over arbitrary validated strided
 * views. Runs inside an entered context like the GEMM slot (kernel tasks through `ctx.run`,
 * fan-out only through `ctx.workerPool()`). Declines, all before writing anything (R66): an
 * unsupported dtype → `Unsupported.dtype(d)`; an alpha whose dtype does not match →
 * `Unsupported.of({ kind: 'accumulation' })`; an output layout it cannot describe →
 * `Unsupported.layout('output')`. Core then runs its reference implementation.
 */
export interface CpuTensorPrimitivesProvider extends ProviderBase {
  /** Element-wise `out = lhs op rhs` over out's shape (broadcast inputs have stride 0), or a decline before writing. */
  binary(ctx: CpuExecutionContext, request: CpuBinaryRequest): Promise<CpuProviderOutcome>;
  /** Element-wise `out = op(src)` (`scale` with `alpha`, `cast` to out's dtype), or a decline before writing. */
  unary(ctx: CpuExecutionContext, request: CpuUnaryRequest): Promise<CpuProviderOutcome>;
  /** `out = op` over `axes` of `src` (out keeps them with extent 1), or a decline before writing. */
  reduce(ctx: CpuExecutionContext, request: CpuReduceRequest): Promise<CpuProviderOutcome>;
}
