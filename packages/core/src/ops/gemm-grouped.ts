import type { CpuExecutionContext } from '../contract/execution-context.js';
import { type GroupedJobSpec, validateGroupedGemm } from '../contraction/validate-grouped-gemm.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuGemmProvider } from '../provider/cpu-providers.js';
import type { CpuGemmRequest, GemmOperand } from '../provider/gemm-request.js';
import { trustedGemmRequest } from '../provider/validate-gemm-request.js';
import type { CpuGroupedGemmRequest } from '../provider/grouped-gemm-request.js';
import { type CpuProviderOutcome, EXECUTED, describeUnsupported } from '../provider/provider-outcome.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { acceptsMode } from '../provider/execution-capabilities.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import type { CpuOperationEntry } from '../runtime/execution/operation-entry.js';
import type { Tensor } from '../tensor/tensor.js';
import { tensorInternals } from '../tensor/tensor.js';
import { auditGroupedLedger } from './grouped-job-audit.js';
import { assertReadable } from './host-access.js';
import { ProviderDispatch } from './provider-call.js';

/**
 * A grouped GEMM (R110): independent jobs `out = alpha · op(lhs) · op(rhs) + beta · out` into
 * caller-owned outputs (R98), validated together before admission (R99): one dtype, outputs
 * pairwise disjoint and overlapping no input.
 *
 * With `engineOuter` grouped scheduling, on a handle outside any entered session or scope, with
 * more than one job, a budget above 1 and an executor with outer parallelism, the engine fans out:
 * `L = min(jobs, budget)` lanes, lane k runs jobs k, k+L, … — each one Sequential single-job
 * `gemm` call — and the executor's submit is audited for every job running exactly once
 * (`Scheduling`). After a passing audit the first job error recorded is returned; jobs that start
 * after a failure skip their provider call. Otherwise the whole group is one provider-owned call in
 * the GEMM's dispatch mode: the provider's `groupedGemm` when it has one (its ledger audited), else
 * core runs the jobs one after another through `gemm` on that call's context. A decline there is
 * terminal (`ProviderUnsupported`); with core's sequential form, jobs before the declining one have
 * been written.
 */
export async function gemmGrouped(runner: OperationRunner, bundle: CpuProviderBundle, jobs: unknown, options: unknown, op: string): Promise<void> {
  const spec = validateGroupedGemm(op, jobs, options);
  assertReadable(runner, spec.tensors, op);
  const dispatch = ProviderDispatch.of(bundle, runner.domain, op);
  // R61, R62: the GEMM's mode is decided (or refused) before any permit or write.
  const mode = dispatch.mode('gemm');
  if (spec.jobs.length === 0) return;
  const storages = spec.tensors.map((t) => tensorInternals.storage(t));
  for (const s of storages) s.retain();
  try {
    const requests = spec.jobs.map(jobRequest);
    const gemm = bundle.gemm;
    const providerOwned = async (entry: CpuOperationEntry, ctx: CpuExecutionContext): Promise<void> => {
      const ledger = new Int32Array(new SharedArrayBuffer(requests.length * Int32Array.BYTES_PER_ELEMENT));
      const request: CpuGroupedGemmRequest = Object.freeze({ dtype: spec.dtype, jobs: requests, ledger });
      const outcome = await dispatch.call(entry, ctx, 'gemm', (c) => (gemm.groupedGemm !== undefined ? gemm.groupedGemm(c, request) : jobByJob(gemm, c, request)));
      if (!outcome.executed) {
        const job = (outcome as { job?: number }).job;
        throw declined(op, outcome, job === undefined ? undefined : spec.jobs[job]!.index);
      }
      auditGroupedLedger(ledger, op);
    };
    // A GEMM that does not accept Outer is never engine-scheduled: strict bundles are refused at
    // install (R58), and the providerDefaultCompatibility policy skips that check (R54).
    if (bundle.groupedScheduling !== 'engineOuter' || !acceptsMode(bundle.capabilities('gemm')!, 'outer')) {
      await runner.run(op, mode, providerOwned, spec.signal);
      return;
    }
    let failure: { error: unknown } | undefined;
    const outerJob = async (ctx: CpuExecutionContext, i: number): Promise<void> => {
      if (failure !== undefined) return; // a job that starts after a failure skips its provider call
      try {
        const outcome = await callProvider(op, () => gemm.gemm(ctx, requests[i]!));
        if (!outcome.executed) throw declined(op, outcome, spec.jobs[i]!.index);
      } catch (error) {
        failure ??= { error };
      }
    };
    const how = await runner.runOuterOr(op, requests.length, outerJob, mode, providerOwned, spec.signal);
    // The audit of submitOuter passed (it throws `Scheduling` otherwise): now the first job error.
    if (how === 'outer' && failure !== undefined) throw failure.error;
  } finally {
    for (const s of storages) s.release();
  }
}

/** The grouped call core makes for a provider without `groupedGemm`: the jobs in order through `gemm`, each recorded once. */
async function jobByJob(gemm: CpuGemmProvider, ctx: CpuExecutionContext, request: CpuGroupedGemmRequest): Promise<CpuProviderOutcome & { job?: number }> {
  for (let i = 0; i < request.jobs.length; i++) {
    const outcome = await gemm.gemm(ctx, request.jobs[i]!);
    // A malformed outcome goes back as it is (the dispatch reports it); a decline names its job.
    if (typeof outcome !== 'object' || outcome === null || outcome.executed !== true) return typeof outcome === 'object' && outcome !== null ? { ...outcome, job: i } : outcome;
    Atomics.add(request.ledger, i, 1);
  }
  return EXECUTED;
}

/** A provider call outside `ProviderDispatch` (an outer lane's Sequential context): its own exception is `ProviderFailed`, a non-outcome too. */
async function callProvider(op: string, fn: () => Promise<CpuProviderOutcome>): Promise<CpuProviderOutcome> {
  let outcome: CpuProviderOutcome;
  try {
    outcome = await fn();
  } catch (e) {
    if (TenferroError.is(e)) throw e;
    throw new TenferroError('ProviderFailed', `the gemm provider failed: ${e instanceof Error ? e.message : String(e)}`, { op, cause: e, detail: { slot: 'gemm' } });
  }
  if (typeof outcome !== 'object' || outcome === null || typeof outcome.executed !== 'boolean') {
    throw new TenferroError('ProviderFailed', 'the gemm provider returned no outcome', { op, detail: { slot: 'gemm' } });
  }
  return outcome;
}

function declined(op: string, outcome: CpuProviderOutcome, job: number | undefined): TenferroError {
  const reason = outcome.executed ? undefined : outcome.reason;
  return new TenferroError('ProviderUnsupported', `configured CPU gemm provider reported unsupported for a grouped GEMM: ${reason === undefined ? 'unknown' : describeUnsupported(reason)}`, {
    op,
    detail: { slot: 'gemm', reason, ...(job === undefined ? {} : { job }) },
  });
}

const NO_AXES: readonly number[] = Object.freeze([]);

/** One job's operand: the tensor's storage, offset and strides. */
function operand(t: Tensor): GemmOperand {
  const d = tensorInternals.descriptor(t);
  return Object.freeze({ buffer: d.buffer, offset: d.offset, rowStride: d.strides[0]!, colStride: d.strides[1]!, batchStrides: NO_AXES });
}

/** One job as an unbatched GEMM request over the tensors' storage; built from validated tensors, so providers take it as checked. */
function jobRequest(job: GroupedJobSpec): CpuGemmRequest {
  return trustedGemmRequest({
    dtype: job.out.dtype,
    m: job.m,
    n: job.n,
    k: job.k,
    batch: NO_AXES,
    lhs: operand(job.lhs),
    rhs: operand(job.rhs),
    out: operand(job.out),
    alpha: job.alpha,
    beta: job.beta,
    conjLhs: job.conjLhs,
    conjRhs: job.conjRhs,
  });
}
