/**
 * The GEMM provider over the system CBLAS: maps core's strided request onto one column-major
 * `?gemm` per batch (transposes and leading dimensions), declines what BLAS cannot express before
 * touching anything, and runs the whole (batched) product as ONE kernel task on the context's
 * worker; the BLAS runtime owns any fan-out.
 */
import {
  type CpuExecutionContext,
  type CpuGemmProvider,
  type CpuGemmRequest,
  type CpuProviderOutcome,
  type DType,
  type DeclaredSupport,
  type GemmOperand,
  type Scalar,
  EXECUTED,
  Unsupported,
  defineKernel,
  type KernelArgs,
  kernelArgs,
  kernelWords,
  validateGemmRequest,
} from '@tenferro/core';
import { MULTI_THREAD_MIN_WORK, callWork, splitCall, splitsCall } from './gemm-split.js';
import { Desc, MAX_BATCH_RANK, Trans } from './native/binding.js';
import type { BlasRuntime } from './runtime.js';

const gemmKernel = defineKernel<KernelArgs, void>(new URL('./kernels/gemm.js', import.meta.url), 'blasGemm');

const DTYPE_CODE: Partial<Record<DType, number>> = { f32: 0, f64: 1, c64: 2, c128: 3 };
const BLAS_DTYPES: readonly DType[] = Object.freeze(['f32', 'f64', 'c64', 'c128']);
const INT_MAX = 0x7fffffff;

/** A matrix view: rows × cols with element strides. */
interface View {
  readonly rows: number;
  readonly cols: number;
  readonly rs: number;
  readonly cs: number;
}

/** The leading dimension when `v` is storable column-major as is, else undefined. Extents of 1 make the other stride irrelevant. */
function columnMajorLd(v: View): number | undefined {
  const rowsOk = v.rows <= 1 || v.rs === 1;
  if (!rowsOk) return undefined;
  if (v.cols <= 1) return Math.max(1, v.rows);
  return v.cs >= Math.max(1, v.rows) ? v.cs : undefined;
}

function transposed(v: View): View {
  return { rows: v.cols, cols: v.rows, rs: v.cs, cs: v.rs };
}

type BlasOperand = { readonly trans: number; readonly ld: number } | 'layout' | 'conjugation';

/** op(X) = v (rows × cols) as a BLAS operand: NoTrans on v, or Trans on vᵀ; conj folds into the code. */
function blasOperand(v: View, conj: boolean, conjNoTrans: boolean): BlasOperand {
  const direct = columnMajorLd(v);
  const viaTranspose = columnMajorLd(transposed(v));
  if (conj) {
    if (viaTranspose !== undefined) return { trans: Trans.ConjT, ld: viaTranspose };
    if (direct !== undefined) return conjNoTrans ? { trans: Trans.ConjNo, ld: direct } : 'conjugation';
    return 'layout';
  }
  if (direct !== undefined) return { trans: Trans.No, ld: direct };
  if (viaTranspose !== undefined) return { trans: Trans.T, ld: viaTranspose };
  return 'layout';
}

function lanes(s: Scalar): [number, number] {
  return typeof s === 'number' ? [s, 0] : [s[0], s[1]];
}

/** What {@link planGemm} decides for one request: the one BLAS call that runs it (the kernel's payload), or the outcome declining it. */
/** One planned GEMM: the native descriptor and the buffers it addresses. */
export interface BlasGemmPayload {
  readonly desc: Float64Array;
  readonly a: SharedArrayBuffer;
  readonly b: SharedArrayBuffer;
  readonly c: SharedArrayBuffer;
}

export type BlasCall = { readonly ok: true; readonly payload: BlasGemmPayload } | { readonly ok: false; readonly outcome: CpuProviderOutcome };

/**
 * Plan one request (pure; exported for tests). Declines: an undeclared dtype; an output that is
 * neither column- nor row-major (`layout(output)`); an operand BLAS cannot address
 * (`layout(lhs|rhs)`, retried by core on canonical operands); conjugation without a transpose
 * when the runtime lacks a working `CblasConjNoTrans` (`conjugation`, also retried).
 */
export function planGemm(req: CpuGemmRequest, conjNoTrans: boolean, threads: number): BlasCall {
  const code = DTYPE_CODE[req.dtype];
  if (code === undefined) return { ok: false, outcome: Unsupported.dtype(req.dtype) };
  const complex = code >= 2;
  const conjLhs = complex && req.conjLhs;
  const conjRhs = complex && req.conjRhs;
  const { m, n, k } = req;
  if (req.batch.length > MAX_BATCH_RANK) return { ok: false, outcome: Unsupported.of({ kind: 'stridedBatch' }) };
  // Summed axes (R105's summed plan) are not declared (`declaredSupport().summedAxes`), so core never
  // sends them; a direct caller who does is declined — one ?gemm would compute a single item.
  if (req.summed !== undefined && req.summed.extents.length > 0) return { ok: false, outcome: Unsupported.of({ kind: 'stridedBatch' }) };

  // The output decides the orientation: C (m×n) column-major, or Cᵀ (n×m) = op(B)ᵀ·op(A)ᵀ.
  const out: View = { rows: m, cols: n, rs: req.out.rowStride, cs: req.out.colStride };
  let ldc = columnMajorLd(out);
  let swapped = false;
  if (ldc === undefined) {
    ldc = columnMajorLd(transposed(out));
    swapped = true;
    if (ldc === undefined) return { ok: false, outcome: Unsupported.layout('output') };
  }
  const lhsView: View = { rows: m, cols: k, rs: req.lhs.rowStride, cs: req.lhs.colStride };
  const rhsView: View = { rows: k, cols: n, rs: req.rhs.rowStride, cs: req.rhs.colStride };
  // BLAS A and B (and which request operand each comes from).
  const [A, Aop, conjA, aName] = swapped ? [transposed(rhsView), req.rhs, conjRhs, 'rhs' as const] : [lhsView, req.lhs, conjLhs, 'lhs' as const];
  const [B, Bop, conjB, bName] = swapped ? [transposed(lhsView), req.lhs, conjLhs, 'lhs' as const] : [rhsView, req.rhs, conjRhs, 'rhs' as const];
  const [M, N] = swapped ? [n, m] : [m, n];

  let pa: BlasOperand = { trans: Trans.No, ld: Math.max(1, M) };
  let pb: BlasOperand = { trans: Trans.No, ld: Math.max(1, k) };
  if (k > 0) {
    pa = blasOperand(A, conjA, conjNoTrans);
    pb = blasOperand(B, conjB, conjNoTrans);
    // Layout first (the retry fixes both at once), then conjugation.
    const first = swapped ? [pb, bName, pa, aName] : [pa, aName, pb, bName];
    for (const [p, name] of [
      [first[0], first[1]],
      [first[2], first[3]],
    ] as const) {
      if (p === 'layout') return { ok: false, outcome: Unsupported.layout(name as 'lhs' | 'rhs') };
    }
    if (pa === 'conjugation' || pb === 'conjugation') return { ok: false, outcome: Unsupported.conjugation() };
  }
  if (typeof pa === 'string' || typeof pb === 'string') return { ok: false, outcome: Unsupported.layout('lhs') }; // unreachable
  if (Math.max(M, N, k, pa.ld, pb.ld, ldc) > INT_MAX) {
    return { ok: false, outcome: Unsupported.of({ kind: 'runtimeUnavailable', detail: 'an extent or leading dimension exceeds the 32-bit BLAS integer' }) };
  }

  const rank = req.batch.length;
  const desc = kernelWords(Desc.Header + 4 * rank);
  desc[Desc.DType] = code;
  desc[Desc.TransA] = pa.trans;
  desc[Desc.TransB] = pb.trans;
  desc[Desc.M] = M;
  desc[Desc.N] = N;
  desc[Desc.K] = k;
  desc[Desc.Lda] = pa.ld;
  desc[Desc.Ldb] = pb.ld;
  desc[Desc.Ldc] = ldc;
  desc[Desc.OffA] = Aop.offset;
  desc[Desc.OffB] = Bop.offset;
  desc[Desc.OffC] = req.out.offset;
  const [ar, ai] = lanes(req.alpha);
  const [br, bi] = lanes(req.beta);
  desc[Desc.AlphaRe] = ar;
  desc[Desc.AlphaIm] = ai;
  desc[Desc.BetaRe] = br;
  desc[Desc.BetaIm] = bi;
  desc[Desc.Threads] = threads;
  desc[Desc.BatchRank] = rank;
  const strides = (op: GemmOperand, t: number) => op.batchStrides[t] ?? 0;
  for (let t = 0; t < rank; t++) {
    desc[Desc.Header + t] = req.batch[t]!;
    desc[Desc.Header + rank + t] = strides(Aop, t);
    desc[Desc.Header + 2 * rank + t] = strides(Bop, t);
    desc[Desc.Header + 3 * rank + t] = strides(req.out, t);
  }
  return { ok: true, payload: { desc, a: Aop.buffer, b: Bop.buffer, c: req.out.buffer } };
}

/** The thread count to give the runtime for one call under `ctx` (0: leave it alone). */
function threadsFor(ctx: CpuExecutionContext, runtime: BlasRuntime): number {
  if (!runtime.setsThreads) return 0;
  return ctx.parallelMode === 'inner' ? Math.max(1, ctx.threadBudget) : 1;
}

/** The runtime behind the provider: described before loading, loaded on the first GEMM. */
export interface BlasSession {
  /** What the provider declares (fixed: sampled into bundles when they are built, R52). */
  readonly declared: BlasRuntime;
  /** The loaded runtime when it is loaded in this process, else the declared one. */
  current(): BlasRuntime;
  /** Load the runtime on `ctx`'s engine worker (once per process) and describe it. */
  ensureLoaded(ctx: CpuExecutionContext): Promise<BlasRuntime>;
  /** The loaded runtime once it is loaded (no promise: the per-call path), else undefined. */
  loaded(): BlasRuntime | undefined;
}

/** `splitMinWork`: see `BlasProviderOptions.splitMinWork` (`undefined`: the default, `splitsCall`). */
export function createGemmProvider(session: BlasSession, splitMinWork: number | undefined): CpuGemmProvider {
  // Every decline comes from planning the call (planGemm), before the kernel is started.
  const support = (conjugation: boolean): DeclaredSupport =>
    Object.freeze({ dtypes: BLAS_DTYPES, stridedOperands: false, conjugation, overwritesOutput: true, declinesBeforeWriting: true, family: 'blas' as const });
  const supports = [support(false), support(true)] as const;
  const provider: CpuGemmProvider = {
    get name() {
      return session.current().label;
    },
    executionCapabilities: () => session.declared.capabilities,
    declaredSupport: () => supports[session.current().conjNoTrans ? 1 : 0],
    async gemm(ctx, request) {
      // Every number is checked before anything else: a malformed request is a typed error here
      // and never reaches the addon (which checks the descriptor again itself).
      validateGemmRequest('gemm', request);
      // The first call loads the runtime on this context's pinned worker (inside its admission).
      const runtime = session.loaded() ?? (await session.ensureLoaded(ctx));
      const call = planGemm(request, runtime.conjNoTrans, threadsFor(ctx, runtime));
      if (!call.ok) return call.outcome;
      const { desc, a, b, c } = call.payload;
      const pool = ctx.workerPool();
      const work = callWork(desc);
      const parts = pool === undefined || !splitsCall(work, splitMinWork) ? undefined : splitCall(desc, pool.size);
      if (parts !== undefined) await pool!.map(gemmKernel, parts.map((part) => kernelArgs(part, [a, b, c])));
      else if (desc[Desc.Threads]! > 1 && work < MULTI_THREAD_MIN_WORK) {
        // A small call: one BLAS thread, and core waits for it as for a one-thread task.
        desc[Desc.Threads] = 1;
        await ctx.run(gemmKernel, kernelArgs(desc, [a, b, c]), { threads: 1 });
      } else await ctx.run(gemmKernel, kernelArgs(desc, [a, b, c]));
      return EXECUTED;
    },
  };
  return Object.freeze(provider);
}
