/**
 * provider-blas's `CpuLinalgKernels` (the `@tenferro/linalg` extension, R53/R65): Cholesky, LU
 * and solve through the Fortran LAPACK routines (`?potrf_`, `?getrf_`, `?getrs_`) of the BLAS
 * runtime already loaded for GEMM, found with dlsym in the same library. f32 and f64; everything
 * else, and whatever the loaded runtime does not export, is declined before anything is written.
 *
 * The extension key is found by name (`defineExtensionKey('tenferro.linalg.kernels')`: keys are
 * identity-by-name), so this package needs nothing of `@tenferro/linalg` at run time; the types
 * below are the subset of `@tenferro/linalg/contract`'s `LinalgRequest` it reads.
 */
import { type CpuExecutionContext, type CpuProviderOutcome, EXECUTED, type ExtensionKey, type KernelArgs, Unsupported, defineExtensionKey, defineKernel, kernelArgs } from '@tenferro/core';
import type { BlasSession } from './gemm-provider.js';
import type { BlasBinding } from './native/binding.js';

const lapackKernel = defineKernel<KernelArgs, void>(new URL('./kernels/lapack.js', import.meta.url), 'blasLapack');

/** The name `@tenferro/linalg/contract` defines its key under. */
export const LINALG_KERNELS_KEY_NAME = 'tenferro.linalg.kernels';

export function linalgKey(): ExtensionKey<unknown> {
  return defineExtensionKey<unknown>(LINALG_KERNELS_KEY_NAME);
}

interface Operand {
  readonly buffer: SharedArrayBuffer;
  readonly offset: number;
  readonly rowStride: number;
  readonly colStride: number;
  readonly batchStrides: readonly number[];
}

/** The fields of `@tenferro/linalg`'s LinalgRequest this provider reads. */
export interface LapackRequest {
  readonly op: string;
  readonly dtype: string;
  readonly m: number;
  readonly n: number;
  readonly batch: readonly number[];
  readonly flags: { readonly upper: boolean };
  readonly a: Operand;
  readonly b?: Operand;
  readonly out: readonly (SharedArrayBuffer | undefined)[];
  readonly info: Int32Array;
}

const OP = { cholesky: 0, luFactor: 2, solve: 4 } as const;
const HEADER = 16;
const INT_MAX = 0x7fffffff;

function pack(r: LapackRequest, op: number, threads: number): KernelArgs {
  const nb = r.batch.length;
  const w = new Float64Array(HEADER + 3 * nb);
  const b = r.b ?? r.a;
  w.set([op, r.dtype === 'f32' ? 0 : 1, r.m, r.n, r.flags.upper ? 1 : 0, threads, nb, r.a.offset, r.a.rowStride, r.a.colStride, b.offset, b.rowStride, b.colStride]);
  for (let t = 0; t < nb; t++) {
    w[HEADER + t] = r.batch[t]!;
    w[HEADER + nb + t] = r.a.batchStrides[t]!;
    w[HEADER + 2 * nb + t] = b.batchStrides[t]!;
  }
  const any = r.a.buffer;
  return kernelArgs(w, [r.a.buffer, b.buffer, r.out[0] ?? any, r.out[1] ?? any, r.info.buffer as SharedArrayBuffer]);
}

export function createLapackKernels(session: BlasSession, binding: BlasBinding): object {
  const call = (name: keyof typeof OP, symbols: (s: string) => readonly string[]) =>
    async (ctx: CpuExecutionContext, r: LapackRequest): Promise<CpuProviderOutcome> => {
      if (r.dtype !== 'f32' && r.dtype !== 'f64') return Unsupported.of({ kind: 'runtimeUnavailable', detail: `LAPACK ${name} is wired for f32 and f64 only` });
      if (Math.max(r.m, r.n) > INT_MAX) return Unsupported.of({ kind: 'runtimeUnavailable', detail: 'an extent exceeds the 32-bit LAPACK integer' });
      const runtime = await session.ensureLoaded(ctx);
      const present = binding.lapackSymbols();
      const prefix = r.dtype === 'f32' ? 's' : 'd';
      const missing = symbols(prefix).filter((s) => present === null || present[s as keyof typeof present] !== true);
      if (missing.length > 0) return Unsupported.of({ kind: 'runtimeUnavailable', detail: `the loaded runtime (${runtime.label}) does not export ${missing.map((s) => `${s}_`).join(', ')}` });
      const threads = runtime.setsThreads ? (ctx.parallelMode === 'inner' ? Math.max(1, ctx.threadBudget) : 1) : 0;
      await ctx.run(lapackKernel, pack(r, OP[name], threads));
      return EXECUTED;
    };
  return Object.freeze({
    name: 'LAPACK (provider-blas)',
    executionCapabilities: () => session.declared.capabilities,
    cholesky: call('cholesky', (p) => [`${p}potrf`]),
    luFactor: call('luFactor', (p) => [`${p}getrf`]),
    solve: call('solve', (p) => [`${p}getrf`, `${p}getrs`]),
  });
}
