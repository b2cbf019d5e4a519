/**
 * Every linalg operation is validation, a request, and ONE `runExtension` call (#35) — this file
 * is that call: the primitive's outputs (shapes from the output convention's one table) and the
 * operation's own outputs made fresh by core, the info words (and an identity) as its scratch; the
 * bundle's `CpuLinalgKernels` extension's kernel first and the built-in after a decline (core
 * validates the extension for the domain, decides the mode, pins the inputs, admits, traces each
 * kernel call on `tenferro:provider` and guards written-then-declined); a failing `info` as a typed
 * error; the output convention after whichever kernel ran; then the operation's host step on the
 * results, inside the same operation.
 */
import { type DType, type Tensor, type TensorDescriptor, TenferroError, runExtension } from '@tenferro/core';
import { BUILTIN_KERNELS } from '../builtin.js';
import { type LinalgFlags, type LinalgOp, type LinalgOperand, type LinalgOutputDType, type LinalgRequest, linalgKernelsKey } from '../contract/index.js';
import { applyOutputConvention, linalgOutputSpecs } from '../output-convention.js';
import { type F, type LinalgTarget, batchIndex, count } from './arguments.js';
import { operand, writeIdentity } from './views.js';

/** The error an `info` word makes of a batch (the primitives without one return their info as data). */
export type FailureCode = 'NotPositiveDefinite' | 'SingularMatrix' | 'NoConvergence';

/** One primitive call, validated. */
export interface PrimitivePlan {
  readonly op: LinalgOp;
  readonly dtype: F;
  readonly m: number;
  readonly n: number;
  readonly batch: readonly number[];
  readonly flags: LinalgFlags;
  readonly a: Tensor;
  /**
   * The right-hand side, or `'identity'`: the m×m identity (every batch), written into a fresh
   * output of the operation itself — pooled storage that goes back when the call ends (#35, defect 9).
   */
  readonly b?: Tensor | 'identity';
  /** Tensors the operation's host step reads (pinned like the request's inputs, not handed to the kernel). */
  readonly also?: readonly Tensor[];
  readonly failure?: FailureCode;
}

/** What an operation's host step sees, after the primitive ran and its outputs follow the convention. */
export interface PrimitiveResult {
  /** The primitive's outputs by slot (`LinalgRequest.out`'s), undefined where it has none. */
  readonly out: readonly (TensorDescriptor | undefined)[];
  /** The operation's inputs: `a`, then `b` when it is a tensor, then `also` — possibly strided. */
  readonly inputs: readonly TensorDescriptor[];
  /** The operation's own outputs, in the order it asked for them. */
  readonly own: readonly TensorDescriptor[];
  /** `info` per batch. */
  readonly info: Int32Array;
}

/** The operation's own fresh outputs and the host step that writes them (inside the operation). */
export interface HostStep<R> {
  readonly outputs: readonly (readonly [DType, readonly number[]])[];
  finish(r: PrimitiveResult): R;
}

/** The outputs of one call: the primitive's by slot and the operation's own (the caller owns them), and the host step's value. */
export interface LinalgCall<R> {
  readonly out: (Tensor | undefined)[];
  readonly own: Tensor[];
  readonly value: R;
}

const WHAT: Readonly<Record<FailureCode, (info: number) => string>> = {
  NotPositiveDefinite: (i) => `the leading minor of order ${i} is not positive definite`,
  SingularMatrix: (i) => `U(${i}, ${i}) is exactly zero: the matrix is singular`,
  NoConvergence: (i) => `the iteration did not converge (info ${i})`,
};

/**
 * Run `plan` as operation `op` on `target`: one `runExtension` call. Promise chains rather than
 * async frames (each await is a promise more per call, two while AsyncLocalStorage's hooks are
 * on); a synchronous throw becomes the rejection.
 */
export function runLinalg<R = undefined>(target: LinalgTarget, op: string, signal: AbortSignal | undefined, plan: PrimitivePlan, host?: HostStep<R>): Promise<LinalgCall<R>> {
  try {
    return runPlanned(target, op, signal, plan, host);
  } catch (e) {
    return Promise.reject(e);
  }
}

function runPlanned<R>(target: LinalgTarget, op: string, signal: AbortSignal | undefined, plan: PrimitivePlan, host: HostStep<R> | undefined): Promise<LinalgCall<R>> {
  const { dtype, m, n, batch, flags } = plan;
  const nb = count(batch);
  const specs = linalgOutputSpecs(plan.op, dtype, m, n, batch, flags);
  const outputs: (readonly [DType, readonly number[]])[] = [];
  for (const s of specs) if (s !== undefined) outputs.push(s);
  const ownAt = outputs.length;
  if (host !== undefined) outputs.push(...host.outputs);
  // The info words and the identity: the operation's own scratch, back to the pool when it ends.
  const scratch: (readonly [DType, readonly number[]])[] = plan.b === 'identity' ? [['i32', [nb]], [dtype, [m, m]]] : [['i32', [nb]]];
  const rhs = plan.b !== undefined && plan.b !== 'identity';
  const inputs = rhs ? [plan.a, plan.b as Tensor, ...(plan.also ?? [])] : plan.also === undefined ? [plan.a] : [plan.a, ...plan.also];
  return runExtension(
    target,
    linalgKernelsKey(),
    // The built-in kernels write every element of every output they are given (and the host steps
    // write theirs): with an extension that declares the same, nothing is zero-filled (R108).
    { op, inputs, outputs, signal, builtinOverwrites: true, scratch },
    (_ctx, { inputs: given, outputs: fresh, scratch: work, extension, kernel }) => {
      let next = 0;
      const out = specs.map((s) => (s === undefined ? undefined : fresh[next++]!));
      const infoWords = work[0]!;
      const info = new Int32Array(infoWords.buffer, infoWords.offset * 4, nb).fill(0);
      let b: LinalgOperand | undefined;
      if (plan.b === 'identity') {
        const eye = work[1]!;
        writeIdentity(eye, m);
        b = Object.freeze({ buffer: eye.buffer, offset: eye.offset, rowStride: 1, colStride: m, batchStrides: Object.freeze(batch.map(() => 0)) });
      } else if (rhs) b = operand(given[1]!);
      const request: LinalgRequest = Object.freeze({
        op: plan.op,
        dtype,
        m,
        n,
        batch,
        flags,
        a: operand(given[0]!),
        ...(b === undefined ? {} : { b }),
        out: Object.freeze(out.map((d) => (d === undefined ? undefined : Object.freeze({ buffer: d.buffer, offset: d.offset, dtype: d.dtype as LinalgOutputDType, shape: d.shape })))),
        info,
      });
      const kernelOf = extension?.[plan.op];
      return kernel({
        name: plan.op,
        extension: typeof kernelOf === 'function' ? (ctx) => kernelOf.call(extension, ctx, request) : undefined,
        builtin: { name: BUILTIN_KERNELS.name, run: (ctx) => BUILTIN_KERNELS[plan.op]!(ctx, request) },
        // Built only when tenferro:provider has subscribers.
        facts: () => ({ dtype, shapes: [...given.slice(0, rhs ? 2 : 1).map((d) => d.shape), ...out.filter((d) => d !== undefined).map((d) => d.shape)] }),
      }).then(() => {
        if (plan.failure !== undefined) {
          for (let k = 0; k < nb; k++) {
            if (info[k] !== 0) {
              const where = batchIndex(batch, k);
              throw new TenferroError(plan.failure, `${op}: batch ${k} [${where.join(', ')}]: ${WHAT[plan.failure](info[k]!)}`, { op, detail: { batchIndex: k, batch: where, info: info[k] } });
            }
          }
        }
        // The output convention, once, after whichever kernel ran (batches that failed are left alone).
        applyOutputConvention(request);
        return host?.finish({ out, inputs: given, own: fresh.slice(ownAt), info }) as R;
      });
    },
  ).then(({ outputs: made, value }) => {
    let next = 0;
    const out = specs.map((s) => (s === undefined ? undefined : made[next++]!));
    return { out, own: made.slice(ownAt), value };
  });
}
