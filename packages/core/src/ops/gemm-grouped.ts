import type { CpuExecutionContext } from '../contract/execution-context.js';
import { type GroupedGemmSpec, type GroupedJobSpec, validateGroupedGemm } from '../contraction/validate-grouped-gemm.js';
import type { ProviderCallFacts } from '../diagnostics/channels.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuGemmRequest, GemmOperand } from '../provider/gemm-request.js';
import { trustedGemmRequest } from '../provider/validate-gemm-request.js';
import type { CpuGroupedGemmRequest } from '../provider/grouped-gemm-request.js';
import { type CpuProviderUnsupported, describeUnsupported } from '../provider/provider-outcome.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { acceptsMode } from '../provider/execution-capabilities.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import type { CpuOperationEntry } from '../runtime/execution/operation-entry.js';
import type { Tensor } from '../tensor/tensor.js';
import { tensorInternals } from '../tensor/tensor.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { checkDeclined, guardMark, writtenThenDeclined } from './declined-guard.js';
import { auditGroupedLedger } from './grouped-job-audit.js';
import { assertReadable } from './host-access.js';
import { ProviderDispatch, gemmFacts } from './provider-call.js';
import { runOperation, runOperationOuterOr } from './run-operation.js';

/**
 * A grouped GEMM (R110): independent jobs `out = alpha · op(lhs) · op(rhs) + beta · out` into
 * caller-owned outputs (R98), every job validated together before admission (R99): one dtype,
 * outputs pairwise disjoint and overlapping no input — nothing runs until every job passed.
 *
 * With `engineOuter` grouped scheduling, on a handle outside any entered session or scope, with
 * more than one job, a budget above 1 and an executor with outer parallelism, the engine fans out:
 * `L = min(jobs, budget)` lanes, lane k runs jobs k, k+L, … — each one Sequential single-job
 * `gemm` call on the lane's context — and the executor's submit is audited for every job running
 * exactly once (`Scheduling`). Otherwise the whole group is one provider-owned call in the GEMM's
 * dispatch mode: the provider's `groupedGemm` when it has one (its ledger audited), else core runs
 * the jobs one after another through `gemm` on that call's context.
 *
 * Every provider call goes through `ProviderDispatch` (one `tenferro:provider` event each) and the
 * one written-then-declined guard (`declined-guard.ts`: each output is fingerprinted around its
 * call unless the GEMM declares `declinesBeforeWriting`). Failures (#35): a job's provider error
 * is `ProviderFailed`; a provider that wrote an output and then declined is
 * `ProviderContractViolation`; a decline with no job written is `ProviderUnsupported` (every
 * output untouched); a decline after other jobs wrote — possible only where core runs the jobs
 * one by one, as a `gemm` decides each request when it gets it — is `PartialGroupedGemm`, whose
 * `detail.writtenJobs` lists exactly the jobs written (caller indexes; every other output is
 * untouched). On the engine-scheduled path the error comes after a passing audit, a provider
 * error before a decline; jobs a lane starts after a failure skip their provider call.
 */
export async function gemmGrouped(runner: OperationRunner, bundle: CpuProviderBundle, jobs: unknown, options: unknown, op: string): Promise<void> {
  const spec = validateGroupedGemm(op, jobs, options);
  assertReadable(runner, spec.tensors, op);
  const dispatch = ProviderDispatch.of(bundle, runner.domain, op);
  // R61, R62: the GEMM's mode is decided (or refused) before any permit or write.
  const mode = dispatch.mode('gemm');
  if (spec.jobs.length === 0) return;
  {
    const group = new GroupRun(dispatch, spec, !bundle.declinesBeforeWriting);
    const providerOwned = (entry: CpuOperationEntry, ctx: CpuExecutionContext): Promise<void> =>
      bundle.gemm.groupedGemm !== undefined ? group.grouped(entry, ctx) : group.jobByJob(entry, ctx);
    // A GEMM that does not accept Outer is never engine-scheduled: strict bundles are refused at
    // install (R58), and the providerDefaultCompatibility policy skips that check (R54).
    if (bundle.groupedScheduling !== 'engineOuter' || !acceptsMode(bundle.capabilities('gemm')!, 'outer')) {
      await runOperation(runner, op, mode, spec.tensors, providerOwned, spec.signal);
      return;
    }
    const how = await runOperationOuterOr(runner, op, group.requests.length, (ctx, i) => group.outerJob(ctx, i), mode, spec.tensors, providerOwned, spec.signal);
    // The audit of submitOuter passed (it throws `Scheduling` otherwise): now the recorded failure.
    if (how === 'outer') group.settle();
  }
}

/** A job's decline, recorded until the group settles. */
interface Decline {
  /** The job's position in the group (not the caller's index). */
  readonly job: number;
  readonly reason: CpuProviderUnsupported;
}

/** One grouped GEMM's provider calls: which jobs were written, and the failure to report. */
class GroupRun {
  readonly #dispatch: ProviderDispatch;
  readonly #spec: GroupedGemmSpec;
  /** The outputs, when each is fingerprinted around its call (the GEMM does not declare `declinesBeforeWriting`). */
  readonly #outs: readonly TensorDescriptor[] | undefined;
  readonly requests: readonly CpuGemmRequest[];
  /** 1 once job i's call returned executed. */
  readonly #written: Uint8Array;
  /** The first error that is not a decline (a provider error, a contract violation). */
  #error: { readonly error: unknown } | undefined;
  #decline: Decline | undefined;

  constructor(dispatch: ProviderDispatch, spec: GroupedGemmSpec, guarded: boolean) {
    this.#dispatch = dispatch;
    this.#spec = spec;
    this.#outs = guarded ? spec.jobs.map((job) => tensorInternals.descriptor(job.out)) : undefined;
    this.requests = spec.jobs.map(jobRequest);
    this.#written = new Uint8Array(spec.jobs.length);
  }

  /** One job through `ProviderDispatch` and the guard: written, or its decline recorded (a provider error throws). */
  async #job(entry: CpuOperationEntry | undefined, ctx: CpuExecutionContext, i: number): Promise<boolean> {
    const req = this.requests[i]!;
    const gemm = this.#dispatch.bundle.gemm;
    const outs = this.#outs;
    const mark = outs === undefined ? undefined : guardMark(outs[i]!, true);
    const outcome = await this.#dispatch.call(entry, ctx, 'gemm', (c) => gemm.gemm(c, req), gemmFacts, req);
    if (outcome.executed) {
      this.#written[i] = 1;
      return true;
    }
    if (outs !== undefined) checkDeclined(outs[i]!, mark, this.#dispatch.op, 'gemm', { job: this.#spec.jobs[i]!.index });
    this.#decline ??= { job: i, reason: outcome.reason };
    return false;
  }

  /** Core's grouped call for a GEMM without `groupedGemm`: the jobs in order, each its own provider call; the first decline ends it. */
  async jobByJob(entry: CpuOperationEntry, ctx: CpuExecutionContext): Promise<void> {
    for (let i = 0; i < this.requests.length; i++) {
      if (!(await this.#job(entry, ctx, i))) break;
    }
    this.settle();
  }

  /** Job `i` on an outer lane's Sequential context (R70): skipped after a failure; its failure recorded. */
  async outerJob(ctx: CpuExecutionContext, i: number): Promise<void> {
    if (this.#error !== undefined || this.#decline !== undefined) return;
    try {
      await this.#job(undefined, ctx, i);
    } catch (error) {
      this.#error ??= { error };
    }
  }

  /** The provider's `groupedGemm`: one call for every job; a decline must come before any job ran (all outputs guarded), success is audited. */
  async grouped(entry: CpuOperationEntry, ctx: CpuExecutionContext): Promise<void> {
    const { op } = this.#dispatch;
    const gemm = this.#dispatch.bundle.gemm;
    const spec = this.#spec;
    const ledger = new Int32Array(new SharedArrayBuffer(this.requests.length * Int32Array.BYTES_PER_ELEMENT));
    const request: CpuGroupedGemmRequest = Object.freeze({ dtype: spec.dtype, jobs: this.requests, ledger });
    const outs = this.#outs;
    const marks = outs?.map((out) => guardMark(out, true));
    const outcome = await this.#dispatch.call(entry, ctx, 'gemm', (c) => gemm.groupedGemm!(c, request), groupFacts, this.requests);
    if (outcome.executed) {
      auditGroupedLedger(ledger, op);
      return;
    }
    for (let i = 0; i < spec.jobs.length; i++) {
      if (outs !== undefined) checkDeclined(outs[i]!, marks![i], op, 'gemm', { job: spec.jobs[i]!.index });
      if (Atomics.load(ledger, i) !== 0) throw writtenThenDeclined(op, 'gemm', { job: spec.jobs[i]!.index });
    }
    throw declined(op, outcome.reason, undefined);
  }

  /** Throw what the group's calls recorded: a provider error first, then a decline (`PartialGroupedGemm` once a job was written). */
  settle(): void {
    if (this.#error !== undefined) throw this.#error.error;
    const decline = this.#decline;
    if (decline === undefined) return;
    const written: number[] = [];
    for (let i = 0; i < this.#written.length; i++) if (this.#written[i] === 1) written.push(this.#spec.jobs[i]!.index);
    const job = this.#spec.jobs[decline.job]!.index;
    if (written.length === 0) throw declined(this.#dispatch.op, decline.reason, job);
    throw new TenferroError(
      'PartialGroupedGemm',
      `configured CPU gemm provider reported unsupported for job ${job} of a grouped GEMM after job${written.length === 1 ? '' : 's'} ${written.join(', ')} had been written: ${describeUnsupported(decline.reason)}`,
      { op: this.#dispatch.op, detail: { slot: 'gemm', reason: decline.reason, job, writtenJobs: written } },
    );
  }
}

/** A decline with no output written: every output untouched. */
function declined(op: string, reason: CpuProviderUnsupported, job: number | undefined): TenferroError {
  return new TenferroError('ProviderUnsupported', `configured CPU gemm provider reported unsupported for a grouped GEMM: ${describeUnsupported(reason)}`, {
    op,
    detail: { slot: 'gemm', reason, ...(job === undefined ? {} : { job }) },
  });
}

/** A whole group's facts for `tenferro:provider`: its jobs' shapes and summed FLOPs. */
function groupFacts(requests: readonly CpuGemmRequest[]): ProviderCallFacts {
  let flops = 0;
  const shapes: number[][] = [];
  for (const r of requests) {
    const f = gemmFacts(r);
    flops += f.flops ?? 0;
    shapes.push(...(f.shapes as number[][]));
  }
  return { dtype: requests[0]?.dtype ?? 'unknown', shapes, flops };
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
