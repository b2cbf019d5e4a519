/**
 * provider-blas's `CpuLinalgKernels` (the `@tenferro/linalg` extension, R53/R65): every primitive
 * of the interface — Cholesky (`?potrf_`), triangular solve (`?trsm_`), LU and its unpacked form
 * (`?getrf_`), solve (`?gesv_`), QR (`?geqrf_` + `?orgqr_`/`?ungqr_`), SVD
 * (`?gesdd_`), Hermitian eigensolver (`?syevd_`/`?heevd_`), general eigensolver (`?geev_`) and
 * full-pivot LU (`?getc2_`) — in f32, f64, c64 and c128 (s, d, c, z), through the Fortran LAPACK
 * routines of the BLAS runtime already loaded for GEMM, found with dlsym in the same library.
 * Whatever the loaded runtime does not export is declined before anything is written.
 *
 * The extension key is found by name (`defineExtensionKey('tenferro.linalg.kernels')`: keys are
 * identity-by-name), so this package needs nothing of `@tenferro/linalg` at run time; the types
 * below are the subset of `@tenferro/linalg/contract`'s `LinalgRequest` it reads.
 */
import { type CpuExecutionContext, type CpuProviderOutcome, EXECUTED, type ExtensionKey, type KernelArgs, Unsupported, defineExtensionKey, defineKernel, kernelArgs, kernelWords } from '@tenferro/core';
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
  readonly flags: { readonly upper: boolean; readonly left: boolean; readonly unitDiagonal: boolean; readonly full: boolean; readonly vectors: boolean; readonly rOnly: boolean };
  readonly a: Operand;
  readonly b?: Operand;
  readonly out: readonly (SharedArrayBuffer | undefined)[];
  readonly info: Int32Array;
}

/** `@tenferro/linalg`'s op codes (its native/src/linalg.h), mirrored in native/src/lapack.cc. */
const OP = { cholesky: 0, solveTriangular: 1, luFactor: 2, lu: 3, solve: 4, qr: 5, svd: 6, eigh: 7, eig: 8, luFullPivot: 9 } as const;
type Op = keyof typeof OP;
const DTYPE: Readonly<Record<string, number>> = { f32: 0, f64: 1, c64: 2, c128: 3 };
const PREFIX = ['s', 'd', 'c', 'z'] as const;
const HEADER = 16;
const INT_MAX = 0x7fffffff;

/** The LAPACK/BLAS routines (without prefix and trailing underscore) an op calls. */
function routines(op: Op, r: LapackRequest, complex: boolean): string[] {
  switch (op) {
    case 'cholesky': return ['potrf'];
    case 'solveTriangular': return ['trsm'];
    case 'luFactor': case 'lu': return ['getrf'];
    case 'solve': return ['gesv'];
    case 'qr': return r.flags.rOnly ? ['geqrf'] : ['geqrf', complex ? 'ungqr' : 'orgqr'];
    case 'svd': return ['gesdd'];
    case 'eigh': return [complex ? 'heevd' : 'syevd'];
    case 'eig': return ['geev'];
    case 'luFullPivot': return ['getc2'];
  }
}

function pack(r: LapackRequest, op: number, dtype: number, threads: number): KernelArgs {
  const nb = r.batch.length;
  const w = kernelWords(HEADER + 3 * nb);
  const b = r.b ?? r.a;
  const f = r.flags;
  const flags = (f.upper ? 1 : 0) | (f.left ? 2 : 0) | (f.unitDiagonal ? 4 : 0) | (f.full ? 8 : 0) | (f.vectors ? 16 : 0) | (f.rOnly ? 32 : 0);
  w.set([op, dtype, r.m, r.n, flags, threads, nb, r.a.offset, r.a.rowStride, r.a.colStride, b.offset, b.rowStride, b.colStride]);
  for (let t = 0; t < nb; t++) {
    w[HEADER + t] = r.batch[t]!;
    w[HEADER + nb + t] = r.a.batchStrides[t]!;
    w[HEADER + 2 * nb + t] = b.batchStrides[t]!;
  }
  const any = r.a.buffer;
  return kernelArgs(w, [r.a.buffer, b.buffer, r.out[0] ?? any, r.out[1] ?? any, r.out[2] ?? any, r.info.buffer as SharedArrayBuffer]);
}

/** How many calls each op executed and declined (diagnostics and tests), since the kernels were made. */
export interface LapackCallCounts {
  readonly executed: Readonly<Record<string, number>>;
  readonly declined: Readonly<Record<string, number>>;
}

export function createLapackKernels(session: BlasSession, binding: BlasBinding): object {
  const executed: Record<string, number> = {};
  const declined: Record<string, number> = {};
  let symbols: Readonly<Record<string, boolean>> | undefined;
  const decline = (name: Op, detail: string): CpuProviderOutcome => {
    declined[name] = (declined[name] ?? 0) + 1;
    return Unsupported.of({ kind: 'runtimeUnavailable', detail });
  };
  const call = (name: Op) =>
    async (ctx: CpuExecutionContext, r: LapackRequest): Promise<CpuProviderOutcome> => {
      const dtype = DTYPE[r.dtype];
      if (dtype === undefined) return decline(name, `LAPACK ${name} takes f32, f64, c64 and c128, not ${r.dtype}`);
      const mx = Math.max(r.m, r.n), mn = Math.min(r.m, r.n);
      // Every per-matrix array LAPACK indexes (and gesdd's complex workspace) within 32-bit integers.
      if (mx * mx > INT_MAX || (name === 'svd' && 5 * mn * mn + 5 * mn + 2 * mx * mn > INT_MAX)) return decline(name, 'a matrix exceeds the 32-bit LAPACK integer');
      const runtime = await session.ensureLoaded(ctx);
      // The loaded runtime's routines are fixed once it is loaded: asked once, not per call.
      const present = (symbols ??= (binding.lapackSymbols() as Readonly<Record<string, boolean>> | null) ?? undefined);
      const prefix = PREFIX[dtype]!;
      const missing = routines(name, r, dtype >= 2).map((s) => `${prefix}${s}`).filter((s) => present?.[s] !== true);
      if (missing.length > 0) return decline(name, `the loaded runtime (${runtime.label}) does not export ${missing.map((s) => `${s}_`).join(', ')}`);
      const threads = runtime.setsThreads ? (ctx.parallelMode === 'inner' ? Math.max(1, ctx.threadBudget) : 1) : 0;
      await ctx.run(lapackKernel, pack(r, OP[name], dtype, threads));
      executed[name] = (executed[name] ?? 0) + 1;
      return EXECUTED;
    };
  return Object.freeze({
    name: 'LAPACK (provider-blas)',
    executionCapabilities: () => session.declared.capabilities,
    // native/src/lapack.cc writes every element of every output of an executed call (a failed
    // batch: zeros; an empty matrix: identities where the factor has entries), and every decline
    // above happens before the kernel runs: outputs may come unzeroed from the pool (R108).
    overwritesOutputs: true,
    declinesBeforeWriting: true,
    /** Calls executed and declined per op (a snapshot). */
    callCounts: (): LapackCallCounts => ({ executed: { ...executed }, declined: { ...declined } }),
    cholesky: call('cholesky'),
    solveTriangular: call('solveTriangular'),
    luFactor: call('luFactor'),
    lu: call('lu'),
    solve: call('solve'),
    qr: call('qr'),
    svd: call('svd'),
    eigh: call('eigh'),
    eig: call('eig'),
    luFullPivot: call('luFullPivot'),
  });
}
