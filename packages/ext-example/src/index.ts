/**
 * `@tenferro/ext-example`: a tiny operation family built on `@tenferro/core`'s public
 * `runExtension` and nothing else — "scale rows", out(i, j) = s(i) · a(i, j) — with an optional
 * provider kernel under its own extension key and a built-in kernel that runs on the engine's
 * worker. It exists to show (and test, #35) that a third-party family gets core's whole operation
 * path: validation first, its extension validated against the domain, one mode, pinned inputs,
 * admission (handles, sessions, scopes), pooled outputs, `tenferro:provider` tracing and the
 * written-then-declined guard.
 */
import {
  type CpuBackend,
  type CpuExecSession,
  type CpuExecutionContext,
  type CpuExtensionProvider,
  type CpuProviderOutcome,
  type ExtensionKey,
  type KernelArgs,
  type Tensor,
  type TensorDescriptor,
  TenferroError,
  defineExtensionKey,
  defineKernel,
  kernelArgs,
  kernelWords,
  runExtension,
} from '@tenferro/core';

/** The name of the family's extension key. */
export const SCALE_ROWS_KEY_NAME = 'example.scaleRows';

/** One scale-rows call as a provider kernel receives it: descriptors, never tensors. */
export interface ScaleRowsRequest {
  readonly a: TensorDescriptor;
  readonly s: TensorDescriptor;
  /** Dense column-major, m×n. */
  readonly out: TensorDescriptor;
}

/** A provider's scale-rows kernel, stored in its bundle under {@link scaleRowsKey}. */
export interface ScaleRowsKernels extends CpuExtensionProvider {
  readonly name: string;
  scaleRows?(ctx: CpuExecutionContext, request: ScaleRowsRequest): CpuProviderOutcome | Promise<CpuProviderOutcome>;
}

/** The family's extension key (identity-by-name: the same object on every call). */
export function scaleRowsKey(): ExtensionKey<ScaleRowsKernels> {
  return defineExtensionKey<ScaleRowsKernels>(SCALE_ROWS_KEY_NAME);
}

const kernel = defineKernel<KernelArgs, void>(new URL('./kernels/scale-rows.js', import.meta.url), 'scaleRowsKernel');

/** What the kernel keeps busy: its own worker's thread (it starts none), said on `ctx.run` so that the main thread waits for it as for a one-thread task. */
const ONE_THREAD = Object.freeze({ threads: 1 });

/** The built-in kernel: one task on the context's worker. */
export const BUILTIN_SCALE_ROWS = Object.freeze({
  name: 'ext-example built-in scale rows',
  run(ctx: CpuExecutionContext, r: ScaleRowsRequest): Promise<void> {
    const w = kernelWords(9);
    w.set([r.a.dtype === 'f32' ? 0 : 1, r.a.shape[0]!, r.a.shape[1]!, r.a.offset, r.a.strides[0]!, r.a.strides[1]!, r.s.offset, r.s.strides[0]!, r.out.offset]);
    return ctx.run(kernel, kernelArgs(w, [r.a.buffer, r.s.buffer, r.out.buffer]), ONE_THREAD);
  },
});

/** What {@link scaleRows} takes besides its operands. */
export interface ScaleRowsOptions {
  readonly signal?: AbortSignal;
}

/**
 * out(i, j) = s(i) · a(i, j): `a` m×n, `s` of length m, both f32 or both f64, any strides; a
 * fresh dense column-major result. Validation, then one `runExtension` call: the installed
 * extension's `scaleRows` first, the built-in after a decline (or when none is installed).
 */
export async function scaleRows<D extends 'f32' | 'f64'>(target: CpuBackend | CpuExecSession, a: Tensor<D>, s: Tensor<D>, options: ScaleRowsOptions = {}): Promise<Tensor<D>> {
  const op = 'example.scaleRows';
  if (typeof options !== 'object' || options === null) throw TenferroError.invalidArgument(op, 'options', 'an options object', options);
  for (const k of Object.keys(options)) if (k !== 'signal') throw TenferroError.invalidArgument(op, `options.${k}`, 'signal', k);
  if (a?.rank !== 2 || s?.rank !== 1) throw TenferroError.invalidArgument(op, 'a, s', 'a matrix and a vector', [a?.shape, s?.shape]);
  if (a.dtype !== s.dtype || (a.dtype !== 'f32' && a.dtype !== 'f64')) throw new TenferroError('DTypeMismatch', `${op}: a is ${a.dtype}, s is ${s.dtype}; both f32 or both f64`, { op, detail: { a: a.dtype, s: s.dtype } });
  if (s.shape[0] !== a.shape[0]) throw new TenferroError('ShapeMismatch', `${op}: a has ${a.shape[0]} rows but s has ${s.shape[0]} entries`, { op, detail: { a: a.shape, s: s.shape } });
  const { outputs } = await runExtension(
    target,
    scaleRowsKey(),
    { op, inputs: [a, s], outputs: [[a.dtype, [...a.shape]]], signal: options.signal, builtinOverwrites: true },
    (ctx, { inputs, outputs: [out], extension, kernel: call }) => {
      const request: ScaleRowsRequest = Object.freeze({ a: inputs[0]!, s: inputs[1]!, out: out! });
      const own = extension?.scaleRows;
      return call({
        name: 'scaleRows',
        extension: own === undefined ? undefined : (c) => own.call(extension, c, request),
        builtin: { name: BUILTIN_SCALE_ROWS.name, run: (c) => BUILTIN_SCALE_ROWS.run(c, request) },
        facts: { flops: a.size },
      });
    },
  );
  return outputs[0] as Tensor<D>;
}
