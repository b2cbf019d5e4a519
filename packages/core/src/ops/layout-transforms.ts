/**
 * Layout operations: `permute` and `broadcastTo` are views (no copy, no admission);
 * `contiguous` materialises any view densely (column- or row-major, conjugation fused) and
 * `copyInto` copies a view (broadcast to the output's shape) into a caller-owned output, both
 * through the bundle's layout-transform provider (core's reference one when it declines).
 */
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { referenceLayoutProvider as reference } from '../provider/reference/reference-providers.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import { checkShape, elementCount } from '../tensor/layout.js';
import { type Tensor, tensorInternals } from '../tensor/tensor.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { broadcastDescriptor, broadcastsTo } from './broadcast.js';
import { checkOptions, checkSignal, checkTensor, checkWritable } from './primitive-arguments.js';
import { runPrimitive } from './run-primitive.js';

/** Options of `contiguous`: the dense order of the copy, conjugation fused into it, `signal`. */
export interface ContiguousOptions {
  /** `col` (column-major, the default) or `row`. */
  readonly order?: 'col' | 'row';
  /** Conjugate complex values while copying (default false; no effect on real dtypes). */
  readonly conjugate?: boolean;
  readonly signal?: AbortSignal;
}

/** Options of `copyInto`: conjugation fused into the copy, `signal`. */
export interface CopyIntoOptions {
  /** Conjugate complex values while copying (default false). */
  readonly conjugate?: boolean;
  readonly signal?: AbortSignal;
}

/** A view with axis `i` being axis `axes[i]` of `t` (no copy). */
export function permute<T extends Tensor>(t: T, axes: readonly number[], op: string): T {
  checkTensor(op, 'tensor', t);
  return t.permute(axes) as T;
}

/** A view of `t` with `shape` (leading-axis alignment, size-1 axes stretched with stride 0; no copy). */
export function broadcastTo<T extends Tensor>(t: T, shape: readonly number[], op: string): T {
  checkTensor(op, 'tensor', t);
  checkShape(shape, op, 'shape');
  elementCount(shape, op);
  if (!broadcastsTo(t.shape, shape)) {
    throw new TenferroError('ShapeMismatch', `shape [${t.shape.join(', ')}] does not broadcast to [${shape.join(', ')}] (operands align at their leading axes; only extents of 1 stretch)`, {
      op,
      detail: { kind: 'Broadcast', from: [...t.shape], to: [...shape] },
    });
  }
  const d = broadcastDescriptor(tensorInternals.descriptor(t), shape);
  return tensorInternals.view(t, d.shape, d.strides, d.offset) as T;
}

function checkConjugate(op: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw invalidArgument(op, 'options.conjugate', 'a boolean', value);
  return value === true;
}

/** A fresh dense copy of `t` in `order`, conjugated when asked. */
export async function contiguous<T extends Tensor>(runner: OperationRunner, bundle: CpuProviderBundle, t: T, options: unknown, op: string): Promise<T> {
  const s = checkTensor(op, 'tensor', t);
  const o = checkOptions(op, options, ['order', 'conjugate', 'signal']);
  if (o.order !== undefined && o.order !== 'col' && o.order !== 'row') throw invalidArgument(op, 'options.order', '"col" or "row"', o.order);
  const conjugate = checkConjugate(op, o.conjugate);
  const signal = checkSignal(op, o);
  // Row-major of a shape is column-major of the reversed shape: materialise the reversed view, reverse back.
  const reverse = s.shape.map((_, i) => s.rank - 1 - i);
  const src = o.order === 'row' ? s.permute(reverse) : s;
  try {
    const dense = await materialize(runner, bundle, src, undefined, conjugate, signal, op);
    if (o.order !== 'row') return dense as T;
    const view = dense.permute(reverse);
    dense.dispose();
    return view as T;
  } finally {
    if (src !== s) src.dispose();
  }
}

/** Copy `src` (broadcast to `out`'s shape) into `out`, conjugated when asked; returns `out`. */
export async function copyInto<T extends Tensor>(runner: OperationRunner, bundle: CpuProviderBundle, out: T, src: Tensor, options: unknown, op: string): Promise<T> {
  const d = checkTensor(op, 'out', out);
  const s = checkTensor(op, 'src', src);
  const o = checkOptions(op, options, ['conjugate', 'signal']);
  const conjugate = checkConjugate(op, o.conjugate);
  const signal = checkSignal(op, o);
  if (s.dtype !== d.dtype) {
    throw new TenferroError('DTypeMismatch', `src must be ${d.dtype} (the dtype of out) but is ${s.dtype}; convert it with cast`, { op, detail: { role: 'src', expected: d.dtype, actual: s.dtype } });
  }
  if (!broadcastsTo(s.shape, d.shape)) {
    throw new TenferroError('ShapeMismatch', `src shape [${s.shape.join(', ')}] does not broadcast to the shape of out [${d.shape.join(', ')}]`, {
      op,
      detail: { kind: 'Broadcast', from: [...s.shape], to: [...d.shape] },
    });
  }
  const sd = broadcastDescriptor(tensorInternals.descriptor(s), d.shape);
  checkWritable(op, 'out', d, [['src', sd]]);
  await materialize(runner, bundle, s, d, conjugate, signal, op, sd);
  return out;
}

async function materialize(runner: OperationRunner, bundle: CpuProviderBundle, s: Tensor, out: Tensor | undefined, conjugate: boolean, signal: AbortSignal | undefined, op: string, srcDesc?: TensorDescriptor): Promise<Tensor> {
  const sd = srcDesc ?? tensorInternals.descriptor(s);
  const provider = bundle.layoutTransform;
  return runPrimitive(runner, bundle, op, {
    slot: 'layoutTransform',
    providerIsReference: provider === reference,
    declinesBeforeWriting: declinesBeforeWriting(provider),
    provider: (ctx, dst) => provider.materialize(ctx, { src: sd, dst, conjugate }),
    reference: (ctx, dst) => reference.materialize(ctx, { src: sd, dst, conjugate }),
    inputs: [s],
    out: out ?? { dtype: s.dtype, shape: s.shape },
    signal,
  });
}

function declinesBeforeWriting(provider: { declaredSupport?(): { declinesBeforeWriting?: boolean } }): boolean {
  try {
    return provider.declaredSupport?.().declinesBeforeWriting === true;
  } catch {
    return false;
  }
}
