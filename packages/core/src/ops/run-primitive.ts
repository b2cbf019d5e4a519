import type { CpuExecutionContext } from '../contract/execution-context.js';
import type { ProviderCallFacts } from '../diagnostics/channels.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { ProviderSlot } from '../provider/cpu-providers.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { type CpuProviderOutcome, describeUnsupported } from '../provider/provider-outcome.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import type { DType } from '../tensor/dtype.js';
import { Tensor, tensorInternals } from '../tensor/tensor.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { freshOutput } from './fresh-output.js';
import { checkDeclined, guardMark } from './declined-guard.js';
import { assertReadable } from './host-access.js';
import { runOperation } from './run-operation.js';
import { ProviderDispatch, tensorFacts } from './provider-call.js';

/** A provider call of one primitive: the bundle's provider of the slot, or core's reference provider. */
export type PrimitiveCall = (ctx: CpuExecutionContext, out: TensorDescriptor) => Promise<CpuProviderOutcome>;

/** What a validated primitive runs: its slot, the provider call, the reference call, and where the result goes. */
export interface PrimitivePlan {
  readonly slot: ProviderSlot;
  /** Whether the slot's provider is core's reference one (a decline is then terminal). */
  readonly providerIsReference: boolean;
  /** The slot's provider declares it declines before writing (else the output is fingerprinted around a decline). */
  readonly declinesBeforeWriting: boolean;
  readonly provider: PrimitiveCall;
  readonly reference: PrimitiveCall;
  /** The tensors the operation reads (held until it is done). */
  readonly inputs: readonly Tensor[];
  /** A caller-owned output, or the dtype and shape of a fresh one. */
  readonly out: Tensor | { readonly dtype: DType; readonly shape: readonly number[] };
  readonly signal: AbortSignal | undefined;
}

const fallbacks = new WeakMap<CpuProviderBundle, number>();

/** How many operations on `bundle` ran core's reference implementation because its provider declined. */
export function referenceFallbacks(bundle: CpuProviderBundle): number {
  return fallbacks.get(bundle) ?? 0;
}

const warnedSlots = new Set<ProviderSlot>();

/**
 * Never silently slow: the first time a slot's provider declines and core's reference runs
 * instead, the process is told once per slot (`TENFERRO_PRIMITIVE_FALLBACK`); later fallbacks are
 * only counted ({@link referenceFallbacks}).
 */
function warnFallback(op: string, slot: ProviderSlot, bundle: CpuProviderBundle, outcome: CpuProviderOutcome): void {
  if (warnedSlots.has(slot) || outcome.executed) return;
  warnedSlots.add(slot);
  const provider = (bundle[slot as keyof CpuProviderBundle] as { name?: string } | undefined)?.name ?? slot;
  process.emitWarning(`${provider} declined ${op} (${describeUnsupported(outcome.reason)}): core's TypeScript reference ran instead, sequential and slower; further fallbacks of the ${slot} slot are counted by ops(backend).referenceFallbacks()`, {
    type: 'TenferroWarning',
    code: 'TENFERRO_PRIMITIVE_FALLBACK',
  });
}

/**
 * Run one tensor primitive: the provider's mode is decided before admission (R61, R62), then one
 * admitted execution writes a fresh pool output (or the caller's `out`) through the slot's
 * provider; when it declines before writing (R64, R66), core's reference implementation runs on
 * the same entry (counted in {@link referenceFallbacks}). A provider that wrote then declined is
 * `ProviderContractViolation`; a decline of the reference itself is `ProviderUnsupported`.
 */
export async function runPrimitive(runner: OperationRunner, bundle: CpuProviderBundle, op: string, plan: PrimitivePlan): Promise<Tensor> {
  assertReadable(runner, plan.inputs, op);
  const dispatch = ProviderDispatch.of(bundle, runner.domain, op);
  const mode = dispatch.mode(plan.slot);
  return runOperation(
    runner,
    op,
    mode,
    Tensor.isTensor(plan.out) ? [...plan.inputs, plan.out] : plan.inputs,
    async (entry, ctx) => {
      const fill = async (out: TensorDescriptor) => {
        if (out.shape.includes(0)) return;
        // The one written-then-declined guard (R106, #35).
        const mark = guardMark(out, !plan.declinesBeforeWriting);
        const outcome = await dispatch.call(entry, ctx, plan.slot, (c) => plan.provider(c, out), primitiveFacts, { plan, out });
        if (outcome.executed) return;
        checkDeclined(out, mark, op, plan.slot);
        if (plan.providerIsReference) throw unsupported(op, plan.slot, outcome);
        fallbacks.set(bundle, referenceFallbacks(bundle) + 1);
        warnFallback(op, plan.slot, bundle, outcome);
        const second = await dispatch.call(entry, ctx, plan.slot, (c) => plan.reference(c, out), primitiveFacts, {
          plan,
          out,
          provider: 'reference (fallback after a decline)',
        });
        if (!second.executed) throw unsupported(op, plan.slot, second);
      };
      if (Tensor.isTensor(plan.out)) {
        await fill(tensorInternals.descriptor(plan.out));
        return plan.out;
      }
      return freshOutput(entry, plan.out.dtype, plan.out.shape, op, (out, finish, fail) => fill(out).then(finish, fail), true);
    },
    plan.signal,
  );
}

/** A primitive call's facts for `tenferro:provider` (asked only when someone listens). */
function primitiveFacts(s: { readonly plan: PrimitivePlan; readonly out: TensorDescriptor; readonly provider?: string }): ProviderCallFacts {
  return tensorFacts({ inputs: s.plan.inputs.map((t) => tensorInternals.descriptor(t)), out: s.out, provider: s.provider });
}

function unsupported(op: string, slot: ProviderSlot, outcome: CpuProviderOutcome): TenferroError {
  const reason = outcome.executed ? undefined : outcome.reason;
  return new TenferroError('ProviderUnsupported', `configured CPU ${slot} provider reported unsupported${reason ? `: ${describeUnsupported(reason)}` : ''}`, { op, detail: { slot, reason } });
}
