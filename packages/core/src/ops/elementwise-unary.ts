/**
 * Element-wise unary operations: neg, abs, exp, log, sqrt, sin, cos, tanh, conj, real, imag,
 * `scale(t, alpha)` and `cast(t, dtype)`. abs, real and imag of complex tensors are real tensors
 * of the parts' dtype. Validation (operand, dtype, alpha, target dtype, options, output) comes
 * before admission and allocation.
 */
import { invalidArgument } from '../errors/tenferro-error.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { referenceTensorPrimitivesProvider as reference } from '../provider/reference/reference-tensor-primitives.js';
import { UNARY_DTYPES, unaryOutDType } from '../provider/tensor-primitive-dtypes.js';
import type { CpuUnaryRequest, UnaryOp } from '../provider/tensor-primitives.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import { DTYPE_INFO, type DType, type Scalar } from '../tensor/dtype.js';
import { checkDType } from '../tensor/layout.js';
import { type Tensor, tensorInternals } from '../tensor/tensor.js';
import { checkOptions, checkOut, checkSignal, checkTensor, unsupportedDType } from './primitive-arguments.js';
import { runPrimitive } from './run-primitive.js';

/**
 * `alpha` as the request carries it for `dtype`: a number for real dtypes (an integer in range for
 * i32 and i64: i64 takes safe integers), `[re, im]` for complex ones (a number is `[alpha, 0]`).
 */
function checkAlpha(op: string, dtype: DType, alpha: unknown): Scalar {
  if (DTYPE_INFO[dtype].complex) {
    if (typeof alpha === 'number') return Object.freeze([alpha, 0]) as readonly [number, number];
    if (Array.isArray(alpha) && alpha.length === 2 && typeof alpha[0] === 'number' && typeof alpha[1] === 'number') return Object.freeze([alpha[0], alpha[1]]) as readonly [number, number];
    throw invalidArgument(op, 'alpha', `a number or a [re, im] pair of numbers for ${dtype}`, alpha);
  }
  if (dtype === 'i32') {
    if (typeof alpha === 'number' && Number.isInteger(alpha) && alpha >= -(2 ** 31) && alpha < 2 ** 31) return alpha;
    throw invalidArgument(op, 'alpha', 'an integer in [-2^31, 2^31) for i32', alpha);
  }
  if (dtype === 'i64') {
    if (typeof alpha === 'number' && Number.isSafeInteger(alpha)) return alpha;
    throw invalidArgument(op, 'alpha', 'a safe integer for i64', alpha);
  }
  if (typeof alpha === 'number') return alpha;
  throw invalidArgument(op, 'alpha', `a number for ${dtype}`, alpha);
}

export async function unary(runner: OperationRunner, bundle: CpuProviderBundle, kind: UnaryOp, src: Tensor, extra: unknown, options: unknown, op: string): Promise<Tensor> {
  const s = checkTensor(op, 'tensor', src);
  const o = checkOptions(op, options, ['out', 'signal']);
  const signal = checkSignal(op, o);
  if (!UNARY_DTYPES[kind].includes(s.dtype)) throw unsupportedDType(op, 'tensor', s.dtype, UNARY_DTYPES[kind]);
  let alpha: Scalar | undefined;
  let target: DType | undefined;
  if (kind === 'scale') alpha = checkAlpha(op, s.dtype, extra);
  if (kind === 'cast') {
    checkDType(extra, op, 'dtype');
    target = extra;
  }
  const sd = tensorInternals.descriptor(s);
  const dtype = unaryOutDType(kind, s.dtype, target);
  const out = checkOut(op, o.out, s.shape, dtype, [['tensor', sd]]);
  const request = (d: CpuUnaryRequest['out']): CpuUnaryRequest => Object.freeze(alpha === undefined ? { op: kind, src: sd, out: d } : { op: kind, src: sd, out: d, alpha });
  const provider = bundle.tensorPrimitives;
  return runPrimitive(runner, bundle, op, {
    slot: 'tensorPrimitives',
    providerIsReference: provider === reference,
    declinesBeforeWriting: bundle.tensorPrimitivesDeclinesBeforeWriting,
    provider: (ctx, d) => provider.unary(ctx, request(d)),
    reference: (ctx, d) => reference.unary(ctx, request(d)),
    inputs: [s],
    out: out ?? { dtype, shape: s.shape },
    signal,
  });
}
