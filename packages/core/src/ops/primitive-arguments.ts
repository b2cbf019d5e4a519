/**
 * Argument checks shared by the tensor-primitive operations (R102 style: every error of bad input
 * here, before any permit, allocation or write): input tensors, option bags with known keys only,
 * and caller-owned outputs (shape, dtype, self-overlap, overlap with an input).
 */
import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { DType } from '../tensor/dtype.js';
import { layoutIsInjective } from '../tensor/layout.js';
import { Tensor, tensorInternals } from '../tensor/tensor.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { viewsOverlap } from '../tensor/views-overlap.js';
import { validateSignal } from '../util/abort-listeners.js';

/** The options every primitive takes: a caller-owned output and an abort signal. */
export interface PrimitiveOptions<D extends DType = DType> {
  /** Write the result here instead of a fresh tensor: its shape and dtype must be the result's, it must not overlap itself or an input. */
  readonly out?: Tensor<D>;
  readonly signal?: AbortSignal;
}

/** A live tensor, else `InvalidArgument` / `TensorDisposed`. */
export function checkTensor(op: string, name: string, t: unknown): Tensor {
  if (!Tensor.isTensor(t)) throw invalidArgument(op, name, 'a Tensor', t);
  tensorInternals.check(t, op, name);
  return t;
}

/** The option bag as a record, every key among `known` (`InvalidArgument` naming the first unknown key). */
export function checkOptions(op: string, options: unknown, known: readonly string[]): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidArgument(op, 'options', 'an options object', options);
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw invalidArgument(op, `options.${key}`, `one of the options ${known.join(', ')}`, key);
  }
  return options as Record<string, unknown>;
}

export function checkSignal(op: string, o: Record<string, unknown>): AbortSignal | undefined {
  return validateSignal(o.signal, op);
}

/**
 * The caller-owned output `o.out` when given: a live tensor of exactly `shape` and `dtype`, free
 * of self-overlap, sharing no memory with any of `inputs` (`ShapeMismatch`, `DTypeMismatch`,
 * `OutputAliasing`).
 */
export function checkOut(op: string, value: unknown, shape: readonly number[], dtype: DType, inputs: readonly (readonly [string, TensorDescriptor])[]): Tensor | undefined {
  if (value === undefined) return undefined;
  const out = checkTensor(op, 'options.out', value);
  if (out.rank !== shape.length || out.shape.some((e, i) => e !== shape[i])) {
    throw new TenferroError('ShapeMismatch', `options.out must have shape [${shape.join(', ')}] but has [${out.shape.join(', ')}]`, {
      op,
      detail: { kind: 'ExpectedActual', expected: [...shape], actual: [...out.shape] },
    });
  }
  if (out.dtype !== dtype) {
    throw new TenferroError('DTypeMismatch', `options.out must be ${dtype} but is ${out.dtype}`, { op, detail: { role: 'out', expected: dtype, actual: out.dtype } });
  }
  checkWritable(op, 'options.out', out, inputs);
  return out;
}

/** `OutputAliasing` when `out` may write an element twice or shares memory with an input. */
export function checkWritable(op: string, name: string, out: Tensor, inputs: readonly (readonly [string, TensorDescriptor])[]): void {
  if (!layoutIsInjective(out.shape, out.strides)) {
    throw new TenferroError('OutputAliasing', `${name} is not provably free of self-overlap (sorted by stride, each stride must cover the previous axis)`, { op, detail: { role: 'out' } });
  }
  const d = tensorInternals.descriptor(out);
  for (const [input, desc] of inputs) {
    if (viewsOverlap(d, desc)) throw new TenferroError('OutputAliasing', `${name} overlaps the storage of ${input}`, { op, detail: { role: 'out', input } });
  }
}

export function unsupportedDType(op: string, role: string, dtype: DType, supported: readonly DType[]): TenferroError {
  return new TenferroError('UnsupportedDType', `${op.replace(/^.*\./, '')} is defined for ${supported.join(', ')}, not for ${role} of dtype ${dtype}`, {
    op,
    detail: { param: role, dtype, supported: [...supported] },
  });
}
