import type { ValidationDomain } from '../contract/cpu-domain.js';
import type { CpuExecutionContext } from '../contract/execution-context.js';
import type { ProviderParallelMode } from '../contract/parallel-mode.js';
import { type ProviderCallFacts, type ProviderEvent, providerTracing, traceAsync, tracingActive } from '../diagnostics/channels.js';
import { TenferroError } from '../errors/tenferro-error.js';
import { dispatchMode } from '../provider/bundle-validation.js';
import { enforcedThreadLimit } from '../provider/execution-capabilities.js';
import type { ProviderSlot } from '../provider/cpu-providers.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { CpuProviderOutcome } from '../provider/provider-outcome.js';
import type { CpuGemmRequest } from '../provider/gemm-request.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { warnIfReference } from './reference-warning.js';
import type { CpuOperationEntry } from '../runtime/execution/operation-entry.js';
import { EnteredContext } from '../runtime/execution/execution-context.js';

/**
 * The provider calls of one operation kind on one bundle and domain (`ProviderDispatch.of`). Each
 * slot's dispatch mode is decided here (R61, R62): an operation asks for its first slot's mode
 * before it is admitted, so a refusal comes before any permit, allocation or output write (R99);
 * every later call of a slot runs in the mode decided for it.
 */
export class ProviderDispatch {
  readonly bundle: CpuProviderBundle;
  readonly op: string;
  readonly #domain: ValidationDomain;
  readonly #modes = new Map<ProviderSlot, ProviderParallelMode>();
  readonly #limits = new Map<ProviderSlot, number>();

  constructor(bundle: CpuProviderBundle, domain: ValidationDomain, op: string) {
    this.bundle = bundle;
    this.#domain = domain;
    this.op = op;
  }

  /**
   * The dispatch of `op` on `bundle` in `domain`, made once and kept: a bundle's capabilities are
   * sampled when it is built and a domain's budget never changes, so the modes decided for one
   * call hold for every later one (no map and object per operation).
   */
  static of(bundle: CpuProviderBundle, domain: ValidationDomain, op: string): ProviderDispatch {
    let byDomain = dispatches.get(bundle);
    if (byDomain === undefined) dispatches.set(bundle, (byDomain = new WeakMap()));
    let byOp = byDomain.get(domain);
    if (byOp === undefined) byDomain.set(domain, (byOp = new Map()));
    let dispatch = byOp.get(op);
    if (dispatch === undefined) byOp.set(op, (dispatch = new ProviderDispatch(bundle, domain, op)));
    return dispatch;
  }

  mode(slot: ProviderSlot): ProviderParallelMode {
    let mode = this.#modes.get(slot);
    if (mode === undefined) {
      mode = dispatchMode(this.bundle, slot, this.#domain, this.op);
      this.#modes.set(slot, mode);
    }
    return mode;
  }

  /**
   * The most threads a provider of `slot` may be given (R55, R75): its enforced thread limit — 1
   * for `sequential`/`binaryClampToOne` thread control and for providers that run on the calling
   * thread — else the domain's budget. A context handed to it never offers a wider pool.
   */
  threadLimit(slot: ProviderSlot): number {
    let limit = this.#limits.get(slot);
    if (limit === undefined) {
      const caps = this.bundle.capabilities(slot)!;
      limit = caps.placement === 'callingThread' ? 1 : (enforcedThreadLimit(caps, this.#domain.threadBudget) ?? this.#domain.threadBudget);
      this.#limits.set(slot, limit);
    }
    return limit;
  }

  /**
   * Call a provider of `slot` in its mode on the operation's entry: on `ctx` when the modes
   * agree, else on a fresh context of the entry (no executor call); with no entry, on `ctx` as it
   * is — an outer lane's Sequential context, the mode the engine's schedule decided for the call
   * (R70, R110). A provider's own exception
   * becomes `ProviderFailed`; a non-outcome too. With a `tenferro:provider` subscriber the call is
   * traced, with what `facts(subject)` says of it (dtype, shapes, FLOPs) — asked only then.
   */
  call<S>(
    entry: CpuOperationEntry | undefined,
    ctx: CpuExecutionContext,
    slot: ProviderSlot,
    fn: (ctx: CpuExecutionContext) => Promise<CpuProviderOutcome>,
    facts?: (subject: S) => ProviderCallFacts,
    subject?: S,
  ): Promise<CpuProviderOutcome> {
    return this.callThen(entry, ctx, slot, fn, facts, subject, identity, rethrow);
  }

  /**
   * `call`, continued by `onOutcome` (the checked outcome) or `onFailure` (the provider's exception
   * as `ProviderFailed`, a missing outcome, or what `onOutcome` threw) in the same reaction: one
   * promise per provider call for the operation's own continuation (each costs more while
   * AsyncLocalStorage's hooks are on). `onFailure` must throw.
   */
  callThen<S, T>(
    entry: CpuOperationEntry | undefined,
    ctx: CpuExecutionContext,
    slot: ProviderSlot,
    fn: (ctx: CpuExecutionContext) => Promise<CpuProviderOutcome>,
    facts: ((subject: S) => ProviderCallFacts) | undefined,
    subject: S | undefined,
    onOutcome: (outcome: CpuProviderOutcome) => T | Promise<T>,
    onFailure: (e: unknown) => never,
  ): Promise<T> {
    if (slot !== 'gemm') warnIfReference(this.bundle, slot, this.op);
    const op = this.op;
    const checked = (outcome: CpuProviderOutcome): CpuProviderOutcome => {
      if (typeof outcome !== 'object' || outcome === null || typeof outcome.executed !== 'boolean') {
        throw new TenferroError('ProviderFailed', `the ${slot} provider returned no outcome`, { op, detail: { slot } });
      }
      return outcome;
    };
    const providerError = (e: unknown): unknown =>
      TenferroError.is(e) ? e : new TenferroError('ProviderFailed', `the ${slot} provider failed: ${e instanceof Error ? e.message : String(e)}`, { op, cause: e, detail: { slot } });
    if (!tracingActive(providerTracing())) {
      return this.#call(entry, ctx, slot, fn).then(
        (outcome) => {
          try {
            return onOutcome(checked(outcome));
          } catch (e) {
            return onFailure(e);
          }
        },
        (e: unknown) => onFailure(providerError(e)),
      );
    }
    const known = facts?.(subject as S);
    const event: ProviderEvent = {
      op: this.op,
      slot,
      provider: known?.provider ?? providerName(this.bundle, slot),
      mode: entry === undefined ? ctx.parallelMode : this.mode(slot),
      threadLimit: entry === undefined ? 1 : this.threadLimit(slot),
      dtype: known?.dtype ?? 'unknown',
      shapes: known?.shapes ?? [],
      flops: known?.flops ?? null,
      startTime: process.hrtime.bigint(),
    };
    const traced = traceAsync(
      providerTracing(),
      event,
      async () => {
        let outcome: CpuProviderOutcome;
        try {
          outcome = await this.#call(entry, ctx, slot, fn);
        } catch (e) {
          throw providerError(e);
        }
        const known = checked(outcome);
        if (!known.executed) event.declineReason = known.reason;
        return outcome;
      },
      (outcome) => (outcome.executed ? 'executed' : 'declined'),
      'failed',
    );
    return traced.then((outcome) => {
      try {
        return onOutcome(outcome);
      } catch (e) {
        return onFailure(e);
      }
    }, onFailure);
  }

  /** The provider's own promise (a plain outcome accepted as before), in its mode on the operation's entry (on an outer lane's `ctx` without one); a synchronous throw as a rejection. */
  #call(entry: CpuOperationEntry | undefined, ctx: CpuExecutionContext, slot: ProviderSlot, fn: (ctx: CpuExecutionContext) => Promise<CpuProviderOutcome>): Promise<CpuProviderOutcome> {
    try {
      // A provider that starts threads on first use gets a context of its own whose kernel tasks
      // are never narrowed (#36): its threads must inherit the whole domain set, not one CPU.
      const spawns = this.bundle.capabilities(slot)!.spawnsThreadsOnFirstUse === true;
      if (entry === undefined) return Promise.resolve(fn(spawns ? spawningThreads(ctx) : ctx));
      const mode = this.mode(slot);
      const limit = this.threadLimit(slot);
      return Promise.resolve(!spawns && mode === ctx.parallelMode && limit >= ctx.threadBudget ? fn(ctx) : entry.reuse(mode, fn, this.op, limit, spawns));
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

/** `ctx` for a provider that starts threads on first use (#36): an outer lane's context, its kernel tasks never narrowed. */
export function spawningThreads(ctx: CpuExecutionContext): CpuExecutionContext {
  if (ctx instanceof EnteredContext) return ctx.spawningThreads();
  throw new TenferroError('Scheduling', 'a provider that starts threads on first use was handed a context tenferro did not enter', { op: 'CpuExecutionContext.run' });
}

const dispatches = new WeakMap<CpuProviderBundle, WeakMap<ValidationDomain, Map<string, ProviderDispatch>>>();

const identity = <T>(value: T): T => value;
const rethrow = (e: unknown): never => {
  throw e;
};

/** The diagnostic name of the bundle's provider of `slot`. */
function providerName(bundle: CpuProviderBundle, slot: ProviderSlot): string {
  switch (slot) {
    case 'gemm':
      return bundle.gemm.name;
    case 'layoutTransform':
      return bundle.layoutTransform.name;
    case 'generalContraction':
      return bundle.generalContraction?.name ?? 'none';
    case 'tensorPrimitives':
      return bundle.tensorPrimitives.name;
  }
}

/** A GEMM request's facts: batch dims first, FLOPs 2·m·n·k per matrix (8·m·n·k complex). */
export function gemmFacts(r: CpuGemmRequest): ProviderCallFacts {
  const batch = r.batch;
  const count = batch.reduce((a, b) => a * b, 1);
  const complex = r.dtype === 'c64' || r.dtype === 'c128';
  return {
    dtype: r.dtype,
    shapes: [
      [...batch, r.m, r.k],
      [...batch, r.k, r.n],
      [...batch, r.m, r.n],
    ],
    flops: (complex ? 8 : 2) * r.m * r.n * r.k * count,
  };
}

/** The facts of a call that reads `inputs` and writes `out` (FLOPs not defined). */
export function tensorFacts(t: { readonly inputs: readonly TensorDescriptor[]; readonly out: TensorDescriptor; readonly provider?: string }): ProviderCallFacts {
  return { provider: t.provider, dtype: t.out.dtype, shapes: [...t.inputs.map((d) => d.shape), t.out.shape], flops: null };
}
