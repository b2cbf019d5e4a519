/**
 * Element-wise binary operations with broadcasting (`ops/broadcast.ts`): add, sub, mul, div,
 * maximum, minimum, pow, and the comparisons eq, lt, le, gt, ge (→ bool). Validation (operands,
 * dtypes, broadcast, options, output) comes before admission and allocation.
 */
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { referenceTensorPrimitivesProvider as reference } from '../provider/reference/reference-tensor-primitives.js';
import { BINARY_DTYPES, binaryOutDType } from '../provider/tensor-primitive-dtypes.js';
import type { BinaryOp, CpuBinaryRequest } from '../provider/tensor-primitives.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { DType } from '../tensor/dtype.js';
import { type Tensor, tensorInternals } from '../tensor/tensor.js';
import { broadcastDescriptor, broadcastShapes } from './broadcast.js';
import { type PrimitiveOptions, checkOptions, checkOut, checkSignal, checkTensor, unsupportedDType } from './primitive-arguments.js';
import { runPrimitive } from './run-primitive.js';

export type BinaryOptions<D extends DType = DType> = PrimitiveOptions<D>;

export async function binary(runner: OperationRunner, bundle: CpuProviderBundle, kind: BinaryOp, lhs: Tensor, rhs: Tensor, options: unknown, op: string): Promise<Tensor> {
  const l = checkTensor(op, 'lhs', lhs);
  const r = checkTensor(op, 'rhs', rhs);
  const o = checkOptions(op, options, ['out', 'signal']);
  const signal = checkSignal(op, o);
  if (l.dtype !== r.dtype) {
    throw new TenferroError('DTypeMismatch', `rhs must be ${l.dtype} (the dtype of lhs) but is ${r.dtype}`, { op, detail: { role: 'rhs', expected: l.dtype, actual: r.dtype } });
  }
  if (!BINARY_DTYPES[kind].includes(l.dtype)) throw unsupportedDType(op, 'lhs', l.dtype, BINARY_DTYPES[kind]);
  const shape = broadcastShapes(op, l.shape, r.shape);
  const ld = broadcastDescriptor(tensorInternals.descriptor(l), shape);
  const rd = broadcastDescriptor(tensorInternals.descriptor(r), shape);
  const dtype = binaryOutDType(kind, l.dtype);
  const out = checkOut(op, o.out, shape, dtype, [['lhs', ld], ['rhs', rd]]);
  const request = (outDesc: CpuBinaryRequest['out']): CpuBinaryRequest => Object.freeze({ op: kind, lhs: ld, rhs: rd, out: outDesc });
  const provider = bundle.tensorPrimitives;
  return runPrimitive(runner, bundle, op, {
    slot: 'tensorPrimitives',
    providerIsReference: provider === reference,
    declinesBeforeWriting: bundle.tensorPrimitivesDeclinesBeforeWriting,
    provider: (ctx, d) => provider.binary(ctx, request(d)),
    reference: (ctx, d) => reference.binary(ctx, request(d)),
    inputs: [l, r],
    out: out ?? { dtype, shape },
    signal,
  });
}
