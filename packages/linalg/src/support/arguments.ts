/**
 * What every linalg operation validates before anything runs (typed errors, #35: before any hop,
 * allocation or write): its options, its matrix operands, their batch axes.
 */
import { type CpuBackend, type CpuExecSession, Tensor, TenferroError } from '@tenferro/core';
import type { LinalgDType, LinalgFlags } from '../contract/index.js';
import { MAX_BATCH_AXES } from '../native/binding.js';

/** What `linalg()` runs on: a backend handle (one execution per call) or a session (its entry). */
export type LinalgTarget = CpuBackend | CpuExecSession;

/** The option every linalg method takes (besides its own). */
export interface LinalgRunOptions {
  /** Abort the call: while it waits → `AdmissionAborted`; while it runs → `ExecutionAborted`. */
  readonly signal?: AbortSignal;
}

export type F = LinalgDType;
export type RealOf<D extends F> = D extends 'f32' | 'c64' ? 'f32' : 'f64';
export type ComplexOf<D extends F> = D extends 'f32' | 'c64' ? 'c64' : 'c128';

const FLOAT: readonly string[] = ['f32', 'f64', 'c64', 'c128'];
export const realOf = (d: F): 'f32' | 'f64' => (d === 'f32' || d === 'c64' ? 'f32' : 'f64');
export const complexOf = (d: F): 'c64' | 'c128' => (d === 'f32' || d === 'c64' ? 'c64' : 'c128');
export const isComplex = (d: F): boolean => d === 'c64' || d === 'c128';
/** The machine epsilon of `d`'s real type. */
export const epsOf = (d: F): number => (realOf(d) === 'f32' ? 2 ** -23 : 2 ** -52);

export const NO_FLAGS: LinalgFlags = Object.freeze({ upper: false, left: true, unitDiagonal: false, full: false, vectors: true, rOnly: false });

/** The options object, its keys among `known`, its `signal` an AbortSignal. */
export function checkOptions(op: string, options: unknown, known: readonly string[]): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) throw TenferroError.invalidArgument(op, 'options', 'an options object', options);
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw TenferroError.invalidArgument(op, `options.${key}`, `one of ${known.join(', ')}`, key);
  }
  const o = options as Record<string, unknown>;
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw TenferroError.invalidArgument(op, 'options.signal', 'an AbortSignal', o.signal);
  return o;
}

export function signalOf(o: Record<string, unknown>): AbortSignal | undefined {
  return o.signal as AbortSignal | undefined;
}

export function bool(op: string, o: Record<string, unknown>, key: string, dflt: boolean): boolean {
  const v = o[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw TenferroError.invalidArgument(op, `options.${key}`, 'a boolean', v);
  return v;
}

/** A live float tensor of rank ≥ 2 with at most 16 batch axes. */
export function matrix(op: string, param: string, t: unknown): Tensor<F> {
  if (!Tensor.isTensor(t)) throw TenferroError.invalidArgument(op, param, 'a Tensor', t);
  if (t.disposed) throw new TenferroError('TensorDisposed', `${op}: ${param} was disposed`, { op, detail: { param } });
  if (!FLOAT.includes(t.dtype)) {
    throw new TenferroError('UnsupportedDType', `${op}: ${param} has dtype ${t.dtype}; linear algebra takes f32, f64, c64 and c128`, { op, detail: { param, dtype: t.dtype } });
  }
  if (t.rank < 2 || t.rank - 2 > MAX_BATCH_AXES) {
    throw new TenferroError('RankMismatch', `${op}: ${param} must have rank 2 to ${2 + MAX_BATCH_AXES} (matrix axes first, batch axes trailing) but has rank ${t.rank}`, { op, detail: { param, rank: t.rank } });
  }
  return t as Tensor<F>;
}

export function square(op: string, param: string, t: Tensor<F>): void {
  if (t.shape[0] !== t.shape[1]) throw new TenferroError('ShapeMismatch', `${op}: ${param} must be square in its first two axes but is ${t.shape[0]}×${t.shape[1]}`, { op, detail: { param, shape: t.shape } });
}

export function sameBatch(op: string, a: Tensor<F>, b: Tensor<F>): void {
  if (a.dtype !== b.dtype) throw new TenferroError('DTypeMismatch', `${op}: a is ${a.dtype} but b is ${b.dtype}`, { op, detail: { a: a.dtype, b: b.dtype } });
  const ba = a.shape.slice(2), bb = b.shape.slice(2);
  if (ba.length !== bb.length || ba.some((e, i) => e !== bb[i])) {
    throw new TenferroError('ShapeMismatch', `${op}: the batch axes of a [${ba.join(', ')}] and b [${bb.join(', ')}] differ`, { op, detail: { a: a.shape, b: b.shape } });
  }
}

export const count = (batch: readonly number[]): number => batch.reduce((p, e) => p * e, 1);

/** The index of flat batch `flat` along each batch axis (first fastest). */
export function batchIndex(batch: readonly number[], flat: number): number[] {
  const idx: number[] = [];
  for (const e of batch) {
    idx.push(flat % e);
    flat = Math.floor(flat / e);
  }
  return idx;
}
