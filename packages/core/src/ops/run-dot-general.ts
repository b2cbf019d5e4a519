import { type DotGeneralSpec } from '../contraction/validate-dot-general.js';
import { type GemmAnalysisCache, analysisKey } from '../contraction/gemm-analysis-cache.js';
import { type GemmAnalysis, type GemmPlan, analyseGemm } from '../contraction/gemm-plan.js';
import { summedWins } from '../contraction/summed-cost.js';
import type { CpuExecutionContext } from '../contract/execution-context.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { ProviderSlot } from '../provider/cpu-providers.js';
import type { CpuGemmRequest, GemmOperand } from '../provider/gemm-request.js';
import { trustedGemmRequest } from '../provider/validate-gemm-request.js';
import { type CpuProviderOutcome, type CpuProviderUnsupported, describeUnsupported, isRetryable } from '../provider/provider-outcome.js';
import type { CpuOperationEntry } from '../runtime/execution/operation-entry.js';
import { DTYPE_INFO } from '../tensor/dtype.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { tensorInternals } from '../tensor/tensor.js';
import { type DeclineCheck, declineCheck } from './declined-guard.js';
import { rejectedThrough } from './rejected-through.js';
import { type ProviderDispatch, gemmFacts, tensorFacts } from './provider-call.js';
import type { ProviderCallFacts } from '../diagnostics/channels.js';

/** What one dot-general runs with: an entered execution (whose engine lends buffers and the analysis cache) and its provider calls. */
export interface DotGeneralRun {
  readonly entry: CpuOperationEntry;
  /** The entered context of the GEMM call's mode. */
  readonly ctx: CpuExecutionContext;
  readonly dispatch: ProviderDispatch;
  /**
   * The output is fresh storage that was not zero-filled, because the GEMM provider declares it
   * overwrites every element (R108): usable as it is only on the direct plan; any other path
   * zero-fills it first.
   */
  readonly unzeroedOutput?: boolean;
  /** The output is the caller's and the providers do not declare they decline before writing: check it around declines. */
  readonly guardOutput?: boolean;
  /** The analysis cache to use (a session caller's, R82); the engine's when absent. */
  readonly analysisCache?: GemmAnalysisCache | undefined;
}

/**
 * R104–R107: the general-contraction provider when installed; else the direct GEMM plan when
 * the layouts admit one; a `layout(lhs)`, `layout(rhs)` or `conjugation` refusal of it — and
 * only those — retries the same GEMM provider exactly once on canonical operands materialised
 * through the layout provider (conjugation fused, flags cleared), whose buffers return to the
 * engine pool on every exit. When there was no direct plan at all and one operand's own layout
 * admits the GEMM (see `keptOperand`), that operand is used as it is and only the other one is
 * materialised. Everything else is terminal.
 *
 * The operation's own continuation rides on the provider call's: the result is `finish()` once
 * the contraction is written, and every failure goes through `fail` (which must throw: the fresh
 * output's storage goes back there) — one promise on the direct path instead of one per layer.
 */
export function runDotGeneral<T>(run: DotGeneralRun, spec: DotGeneralSpec, out: TensorDescriptor, finish: () => T, fail: (e: unknown) => never = rethrow): Promise<T> {
  try {
    if (out.shape.some((e) => e === 0)) return Promise.resolve(finish());
    // The one written-then-declined guard (R106, #35): a closure only when the output is guarded.
    const checkDecline = declineCheck(out, run.guardOutput === true, run.dispatch.op);
    if (run.dispatch.bundle.generalContraction !== undefined) return viaGeneral(run, spec, out, checkDecline).then(() => completed(finish, fail), fail);
    return planned(run, spec, out, checkDecline, finish, fail);
  } catch (e) {
    return rejectedThrough(fail, e);
  }
}

const rethrow = (e: unknown): never => {
  throw e;
};

/** `finish()`, or — should it throw — `fail`'s error. */
function completed<T>(finish: () => T, fail: (e: unknown) => never): T {
  try {
    return finish();
  } catch (e) {
    return fail(e);
  }
}

/** The general-contraction provider first; its decline falls back to the GEMM plans unless it is required. */
async function viaGeneral(run: DotGeneralRun, spec: DotGeneralSpec, out: TensorDescriptor, checkDecline: DeclineCheck): Promise<void> {
  const { bundle, op } = run.dispatch;
  const general = bundle.generalContraction!;
  const outcome = await run.dispatch.call(run.entry, run.ctx, 'generalContraction', (ctx) =>
    general.dotGeneral(ctx, {
      lhs: tensorInternals.descriptor(spec.lhs),
      rhs: tensorInternals.descriptor(spec.rhs),
      out,
      contracting: [spec.lhsContracting, spec.rhsContracting],
      batch: [spec.lhsBatch, spec.rhsBatch],
      conjLhs: spec.conjLhs,
      conjRhs: spec.conjRhs,
      alpha: spec.alpha,
      beta: spec.beta,
    }),
    contractionFacts,
    { spec, out },
  );
  if (outcome.executed) return;
  checkDecline('generalContraction');
  if (bundle.generalPolicy === 'required') throw terminal(op, 'generalContraction', outcome.reason);
  await planned(run, spec, out, checkDecline, noResult, rethrow);
}

const noResult = (): void => undefined;

/**
 * The direct GEMM plan when the layouts admit one — the common case, its continuation in the
 * provider call's reaction (`callThen`) — then the summed and canonical plans.
 */
function planned<T>(run: DotGeneralRun, spec: DotGeneralSpec, out: TensorDescriptor, checkDecline: DeclineCheck, finish: () => T, fail: (e: unknown) => never): Promise<T> {
  const analysis = analyse(run, spec, out);
  if (analysis.direct === undefined) return fallbacks(run, spec, out, analysis, 0, checkDecline).then(() => completed(finish, fail), fail);
  const req = requestOnOperands(spec, analysis.direct, out);
  const provider = run.dispatch.bundle.gemm;
  return run.dispatch.callThen(
    run.entry,
    run.ctx,
    'gemm',
    (ctx) => provider.gemm(ctx, req),
    gemmFacts,
    req,
    (outcome) => {
      if (outcome.executed) return finish();
      checkDecline('gemm');
      if (!isRetryable(outcome.reason)) throw terminal(run.dispatch.op, 'gemm', outcome.reason);
      return fallbacks(run, spec, out, analysis, 1, checkDecline).then(() => completed(finish, fail), fail);
    },
    fail,
  );
}

/** What follows a missing or declined direct plan: R105's summed plan, then the canonical copy. */
async function fallbacks(run: DotGeneralRun, spec: DotGeneralSpec, out: TensorDescriptor, analysis: GemmAnalysis, calls: number, checkDecline: DeclineCheck): Promise<void> {
  const { bundle, op } = run.dispatch;
  let gemmCalls = calls;
  // R105's summed plan: no direct plan, both operands as they are, the contracting pairs that
  // do not fuse summed by a GEMM provider that declares it — when the cost model prefers it to a
  // copy. A decline of it (of any reason) falls back to the copy below, warned once per provider.
  const summed = analysis.summed;
  if (summed !== undefined && bundle.gemmSummedAxes && summedWins(summed, copiedElements(spec, analysis))) {
    gemmCalls++;
    const outcome = await gemm(run, requestOnOperands(spec, summed, out));
    if (outcome.executed) return;
    checkDecline('gemm');
    warnSummedDeclined(op, bundle.gemm.name, outcome.reason);
  }
  const canonical = analysis.canonical;
  if (run.unzeroedOutput === true) zeroFill(out);
  if (canonical === undefined) {
    throw new TenferroError('ProviderUnsupported', 'cannot represent the canonical contraction for this output layout', {
      op,
      detail: { slot: 'gemm', reason: 'layout of output' },
    });
  }
  // Without a direct plan, one operand may be used as it is and only the other materialised (R105's Node reading).
  const kept = analysis.direct === undefined ? keptOperand(spec, analysis) : undefined;
  const chosen = kept === 'lhs' ? analysis.keep.lhs! : kept === 'rhs' ? analysis.keep.rhs! : canonical;
  await run.entry.engine.bufferPool.withLoans(async (take) => {
    const temporary = (side: 'lhs' | 'rhs'): TensorDescriptor => {
      const t = spec[side];
      const loan = take(spec.dtype, t.size, { zeroed: false, op });
      return Object.freeze({ dtype: spec.dtype, shape: t.shape, strides: side === 'lhs' ? chosen.lhsStrides : chosen.rhsStrides, offset: loan.offset, buffer: loan.buffer });
    };
    const lhs = kept === 'lhs' ? tensorInternals.descriptor(spec.lhs) : temporary('lhs');
    const rhs = kept === 'rhs' ? tensorInternals.descriptor(spec.rhs) : temporary('rhs');
    if (kept !== 'lhs') await materialize(run, tensorInternals.descriptor(spec.lhs), lhs, spec.conjLhs);
    if (kept !== 'rhs') await materialize(run, tensorInternals.descriptor(spec.rhs), rhs, spec.conjRhs);
    gemmCalls++;
    const outcome = await gemm(run, request(spec, chosen.plan, lhs, rhs, out, false, false));
    if (!outcome.executed) {
      checkDecline('gemm');
      throw terminal(op, 'gemm', outcome.reason, gemmCalls > 1 ? 'a second unsupported result' : undefined);
    }
  });
}

/**
 * Which operand the canonical path uses as it is, or undefined (both materialised): only when
 * there was no direct plan (a declined direct plan retries on both operands canonical, R105), and
 * only an operand without requested conjugation (the materialising copy is where conjugation is
 * fused). Of two candidates the larger is kept — the smaller one is copied; lhs on a tie.
 */
function keptOperand(spec: DotGeneralSpec, analysis: GemmAnalysis): 'lhs' | 'rhs' | undefined {
  const lhs = analysis.keep.lhs !== undefined && !spec.conjLhs;
  const rhs = analysis.keep.rhs !== undefined && !spec.conjRhs;
  if (lhs && rhs) return spec.rhs.size > spec.lhs.size ? 'rhs' : 'lhs';
  return lhs ? 'lhs' : rhs ? 'rhs' : undefined;
}

const warnedSummed = new Set<string>();

/** Never silently slow: the first time a GEMM provider declines a summed plan the process is told (`TENFERRO_SUMMED_FALLBACK`), once per provider name. */
function warnSummedDeclined(op: string, provider: string, reason: CpuProviderUnsupported): void {
  if (warnedSummed.has(provider)) return;
  warnedSummed.add(provider);
  process.emitWarning(`${provider} declares summedAxes but declined a summed GEMM in ${op} (${describeUnsupported(reason)}): an operand was copied instead, which is slower`, {
    type: 'TenferroWarning',
    code: 'TENFERRO_SUMMED_FALLBACK',
  });
}

/** Elements the canonical path (without a direct plan) copies: the operand it does not keep, or both. */
function copiedElements(spec: DotGeneralSpec, analysis: GemmAnalysis): number {
  const kept = keptOperand(spec, analysis);
  return kept === 'lhs' ? spec.rhs.size : kept === 'rhs' ? spec.lhs.size : spec.lhs.size + spec.rhs.size;
}

function analyse(run: DotGeneralRun, spec: DotGeneralSpec, out: TensorDescriptor): GemmAnalysis {
  const cache = run.analysisCache ?? run.entry.engine.analysisCache;
  cache.bind(run.dispatch.bundle);
  const key = analysisKey(spec, out.strides);
  const slot = spec.analysisSlot;
  const cached = slot === undefined ? cache.lookupAuto(key) : cache.lookup(slot, key);
  if (cached !== undefined) return cached;
  const analysis = analyseGemm(spec, out.strides);
  if (slot === undefined) cache.storeAuto(key, analysis);
  else cache.store(slot, key, analysis);
  return analysis;
}

function gemm(run: DotGeneralRun, req: CpuGemmRequest): Promise<CpuProviderOutcome> {
  const provider = run.dispatch.bundle.gemm;
  return run.dispatch.call(run.entry, run.ctx, 'gemm', (ctx) => provider.gemm(ctx, req), gemmFacts, req);
}

async function materialize(run: DotGeneralRun, src: TensorDescriptor, dst: TensorDescriptor, conjugate: boolean): Promise<void> {
  const provider = run.dispatch.bundle.layoutTransform;
  const outcome = await run.dispatch.call(run.entry, run.ctx, 'layoutTransform', (ctx) => provider.materialize(ctx, { src, dst, conjugate }), tensorFacts, {
    inputs: [src],
    out: dst,
  });
  if (!outcome.executed) throw terminal(run.dispatch.op, 'layoutTransform', outcome.reason);
}

/** A general contraction's facts for `tenferro:provider` (asked only when someone listens). */
function contractionFacts(s: { readonly spec: DotGeneralSpec; readonly out: TensorDescriptor }): ProviderCallFacts {
  return tensorFacts({ inputs: [tensorInternals.descriptor(s.spec.lhs), tensorInternals.descriptor(s.spec.rhs)], out: s.out });
}

/** Zero a fresh dense output (R108: the decline of a direct plan falls back to a zero-filled output). */
function zeroFill(out: TensorDescriptor): void {
  const bytes = DTYPE_INFO[out.dtype].bytes;
  const size = out.shape.reduce((a, b) => a * b, 1);
  new Uint8Array(out.buffer, out.offset * bytes, size * bytes).fill(0);
}

function operand(buffer: SharedArrayBuffer, offset: number, s: GemmPlan['lhs']): GemmOperand {
  return Object.freeze({ buffer, offset, rowStride: s.rowStride, colStride: s.colStride, batchStrides: s.batchStrides });
}

/** The GEMM of `plan` on the spec's own operands (no descriptor objects for them) into `out`. */
function requestOnOperands(spec: DotGeneralSpec, plan: GemmPlan, out: TensorDescriptor): CpuGemmRequest {
  const lhs = operand(tensorInternals.buffer(spec.lhs), spec.lhs.offset, plan.lhs);
  const rhs = operand(tensorInternals.buffer(spec.rhs), spec.rhs.offset, plan.rhs);
  return gemmRequest(spec, plan, lhs, rhs, out, spec.conjLhs, spec.conjRhs);
}

function request(spec: DotGeneralSpec, plan: GemmPlan, lhs: TensorDescriptor, rhs: TensorDescriptor, out: TensorDescriptor, conjLhs: boolean, conjRhs: boolean): CpuGemmRequest {
  return gemmRequest(spec, plan, operand(lhs.buffer, lhs.offset, plan.lhs), operand(rhs.buffer, rhs.offset, plan.rhs), out, conjLhs, conjRhs);
}

function gemmRequest(spec: DotGeneralSpec, plan: GemmPlan, lhs: GemmOperand, rhs: GemmOperand, out: TensorDescriptor, conjLhs: boolean, conjRhs: boolean): CpuGemmRequest {
  // Built from validated tensors and a frozen plan, and frozen itself: providers' validateGemmRequest takes it as checked.
  const r: CpuGemmRequest = {
    dtype: spec.dtype,
    m: plan.m,
    n: plan.n,
    k: plan.k,
    batch: plan.batch,
    lhs,
    rhs,
    out: operand(out.buffer, out.offset, plan.out),
    alpha: spec.alpha,
    beta: spec.beta,
    conjLhs,
    conjRhs,
  };
  return trustedGemmRequest(plan.summed === undefined ? r : { ...r, summed: plan.summed });
}

function terminal(op: string, slot: ProviderSlot, reason: CpuProviderUnsupported, why?: string): TenferroError {
  return new TenferroError('ProviderUnsupported', `configured CPU ${slot} provider reported unsupported: ${describeUnsupported(reason)}${why ? ` (${why})` : ''}`, {
    op,
    detail: { slot, reason },
  });
}
