import type { DotGeneralSpec } from '../contraction/dot-general-dims.js';
import { runDotGeneral } from '../contraction/run-dot-general.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuExecutionContext } from '../execution/execution-context.js';
import type { CpuOperationEntry } from '../execution/operation-entry.js';
import { dispatchMode, type ValidationDomain } from '../provider/bundle-validation.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import { Tensor } from '../tensor/tensor.js';

/**
 * The tensor operations shared by backend handles and sessions. Each runs inside an entered
 * execution (`entry`, `ctx`) after validation, so nothing here checks arguments again.
 */

export function domainOf(entry: CpuOperationEntry): ValidationDomain {
  const d = entry.engine.domain;
  return { id: d.id, threadBudget: d.threadBudget, admissionMode: d.admissionMode };
}

/** A fresh output tagged with the executing domain (R96), allocated only after validation. */
export async function dotGeneralFresh(entry: CpuOperationEntry, ctx: CpuExecutionContext, bundle: CpuProviderBundle, spec: DotGeneralSpec, op: string): Promise<Tensor> {
  dispatchMode(bundle, 'gemm', domainOf(entry), op); // R61/R62 before the allocation (R99)
  const out = Tensor.zeros(spec.dtype, spec.outShape);
  await dotGeneralOn(entry, ctx, bundle, spec, out, op);
  return out.withPlacement({ ...out.placement, cpuAffinity: entry.engine.domain.id });
}

/** Into a caller-owned output, which keeps its metadata (R98). */
export async function dotGeneralOn(entry: CpuOperationEntry, ctx: CpuExecutionContext, bundle: CpuProviderBundle, spec: DotGeneralSpec, out: Tensor, op: string): Promise<void> {
  await runDotGeneral(
    { entry, ctx, bundle, domain: domainOf(entry), pool: entry.engine.bufferPool, cache: entry.engine.analysisCache, op },
    spec,
    out.descriptor(),
  );
}

/** Reshape: a view when metadata allows it (keeps the source's tag, R97); otherwise a fresh dense copy through the layout provider, tagged. */
export async function reshapeMaterialized(entry: CpuOperationEntry, bundle: CpuProviderBundle, source: Tensor, shape: readonly number[], op: string): Promise<Tensor> {
  const dense = Tensor.zeros(source.dtype, source.shape);
  const mode = dispatchMode(bundle, 'layoutTransform', domainOf(entry), op);
  const outcome = await entry.reuse(mode, (ctx) => bundle.layoutTransform.materialize(ctx, { src: source.descriptor(), dst: dense.descriptor(), conjugate: false }), op);
  if (!outcome.executed) {
    throw new TenferroError('ProviderUnsupported', 'configured CPU layoutTransform provider reported unsupported while materialising a reshape', {
      op,
      detail: { slot: 'layoutTransform', reason: outcome.reason },
    });
  }
  return dense.reshape(shape).withPlacement({ ...source.placement, cpuAffinity: entry.engine.domain.id });
}
