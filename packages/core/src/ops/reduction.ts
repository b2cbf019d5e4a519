/**
 * Reductions over `axes` (all when omitted), with `keepDims`: sum, mean, max, min, prod, argmax,
 * argmin (→ i64) and norm (the 2-norm; of complex tensors a real one). The provider always sees the
 * keepDims form (reduced axes of extent 1); without keepDims the result is a view that drops them.
 * Reducing over no axis (`axes: []`, or a rank-0 tensor) is the element-wise identity of the
 * reduction, done by reducing an appended extent-1 axis. max, min, argmax and argmin over zero
 * elements have no value: `EmptyReduction`, before anything is allocated.
 */
import { TenferroError, describeValue, invalidArgument } from '../errors/tenferro-error.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { referenceTensorPrimitivesProvider as reference } from '../provider/reference/reference-tensor-primitives.js';
import { REDUCE_DTYPES, needsElements, reduceOutDType } from '../provider/tensor-primitive-dtypes.js';
import type { CpuReduceRequest, ReduceOp } from '../provider/tensor-primitives.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import type { DType } from '../tensor/dtype.js';
import { type Tensor, tensorInternals } from '../tensor/tensor.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { type PrimitiveOptions, checkOptions, checkOut, checkSignal, checkTensor, unsupportedDType } from './primitive-arguments.js';
import { runPrimitive } from './run-primitive.js';

export interface ReduceOptions<D extends DType = DType> extends PrimitiveOptions<D> {
  /** The axes to reduce, distinct, in any order (default: every axis). */
  readonly axes?: readonly number[];
  /** Keep the reduced axes with extent 1 (default false). */
  readonly keepDims?: boolean;
}

/** Distinct axes in range, sorted ascending (`InvalidArgument`, `AxisOutOfBounds`, `DuplicateAxis`). */
function checkAxes(op: string, axes: unknown, rank: number): number[] {
  if (axes === undefined) return Array.from({ length: rank }, (_, i) => i);
  if (!Array.isArray(axes)) throw invalidArgument(op, 'options.axes', 'an array of axes', axes);
  const seen = new Set<number>();
  axes.forEach((a: unknown, i: number) => {
    if (typeof a !== 'number' || !Number.isInteger(a)) throw invalidArgument(op, `options.axes[${i}]`, 'an integer axis', a);
    if (a < 0 || a >= rank) {
      throw new TenferroError('AxisOutOfBounds', `expected an axis in [0, ${rank}) for options.axes[${i}] but received ${describeValue(a)}`, { op, detail: { param: `options.axes[${i}]`, axis: a, rank } });
    }
    if (seen.has(a)) throw new TenferroError('DuplicateAxis', `expected distinct axes for options.axes but received ${describeValue([...axes])}`, { op, detail: { axis: a, axes: [...axes] } });
    seen.add(a);
  });
  return [...seen].sort((x, y) => x - y);
}

export async function reduce(runner: OperationRunner, bundle: CpuProviderBundle, kind: ReduceOp, src: Tensor, options: unknown, op: string): Promise<Tensor> {
  const s = checkTensor(op, 'tensor', src);
  const o = checkOptions(op, options, ['axes', 'keepDims', 'out', 'signal']);
  const axes = checkAxes(op, o.axes, s.rank);
  if (o.keepDims !== undefined && typeof o.keepDims !== 'boolean') throw invalidArgument(op, 'options.keepDims', 'a boolean', o.keepDims);
  const keepDims = o.keepDims === true;
  const signal = checkSignal(op, o);
  if (!REDUCE_DTYPES[kind].includes(s.dtype)) throw unsupportedDType(op, 'tensor', s.dtype, REDUCE_DTYPES[kind]);
  const kept = s.shape.map((e, t) => (axes.includes(t) ? 1 : e));
  const resultShape = keepDims ? kept : s.shape.filter((_, t) => !axes.includes(t));
  if (needsElements(kind) && axes.some((a) => s.shape[a] === 0) && !kept.includes(0)) {
    throw new TenferroError('EmptyReduction', `${kind} over axes [${axes.join(', ')}] of shape [${s.shape.join(', ')}] has no element to choose`, {
      op,
      detail: { axes, shape: [...s.shape] },
    });
  }
  const dtype = reduceOutDType(kind, s.dtype);
  let sd = tensorInternals.descriptor(s);
  const out = checkOut(op, o.out, resultShape, dtype, [['tensor', sd]]);
  // The request: the keepDims form; no axis → reduce an appended extent-1 axis.
  let requestAxes = axes;
  let outShape = kept;
  if (axes.length === 0) {
    sd = Object.freeze({ ...sd, shape: [...sd.shape, 1], strides: [...sd.strides, 0] });
    requestAxes = [s.rank];
    outShape = [...kept, 1];
  }
  const keepForm = (d: TensorDescriptor): TensorDescriptor => (d.shape.length === outShape.length ? d : Object.freeze({ ...d, shape: outShape, strides: insertUnitStrides(d.strides, outShape, resultShape, requestAxes, keepDims) }));
  const request = (d: TensorDescriptor): CpuReduceRequest => Object.freeze({ op: kind, src: sd, axes: Object.freeze(requestAxes), out: keepForm(d) });
  const provider = bundle.tensorPrimitives;
  const result = await runPrimitive(runner, bundle, op, {
    slot: 'tensorPrimitives',
    providerIsReference: provider === reference,
    declinesBeforeWriting: bundle.tensorPrimitivesDeclinesBeforeWriting,
    provider: (ctx, d) => provider.reduce(ctx, request(d)),
    reference: (ctx, d) => reference.reduce(ctx, request(d)),
    inputs: [s],
    out: out ?? { dtype, shape: outShape },
    signal,
  });
  if (out !== undefined || outShape.length === resultShape.length) return result;
  // A fresh keepDims-form tensor: the result is its view without the reduced axes (dense, metadata-only).
  const view = tensorInternals.view(result, resultShape, result.strides.filter((_, t) => !requestAxes.includes(t)), result.offset);
  result.dispose();
  return view;
}

/** Strides of an output of `resultShape` (without the reduced axes, unless keepDims) for the keepDims form `outShape`: the reduced axes get stride 0. */
function insertUnitStrides(strides: readonly number[], outShape: readonly number[], resultShape: readonly number[], axes: readonly number[], keepDims: boolean): number[] {
  if (keepDims && resultShape.length === outShape.length) return [...strides];
  const full: number[] = [];
  let k = 0;
  for (let t = 0; t < outShape.length; t++) full.push(axes.includes(t) ? 0 : strides[k++]!);
  return full;
}

