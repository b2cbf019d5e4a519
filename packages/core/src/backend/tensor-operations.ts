import type { DotGeneralSpec } from '../contraction/dot-general-dims.js';
import { runDotGeneral } from '../contraction/run-dot-general.js';
import { TenferroError } from '../errors/tenferro-error.js';
import type { CpuExecutionContext } from '../execution/execution-context.js';
import type { CpuOperationEntry } from '../execution/operation-entry.js';
import { dispatchMode, type ValidationDomain } from '../provider/bundle-validation.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { DType } from '../tensor/dtype.js';
import { denseStrides, elementCount } from '../tensor/layout.js';
import { Tensor } from '../tensor/tensor.js';

/**
 * The tensor operations shared by backend handles and sessions. Each runs inside an entered
 * execution (`entry`, `ctx`) after validation, so nothing here checks arguments again.
 */

export function domainOf(entry: CpuOperationEntry): ValidationDomain {
  const d = entry.engine.domain;
  return { id: d.id, threadBudget: d.threadBudget, admissionMode: d.admissionMode };
}

/**
 * Run `fill` on fresh, zeroed, dense column-major storage of `shape` from the engine's buffer
 * pool (reclaimed storage is reused, so a loop that reclaims its outputs pays no page faults) and
 * return it tagged with the executing domain (R96). On failure the storage goes back to the pool.
 */
export async function freshOutput(
  entry: CpuOperationEntry,
  dtype: DType,
  shape: readonly number[],
  op: string,
  fill: (out: Tensor) => Promise<void>,
  overwritten = false,
): Promise<Tensor> {
  const pool = entry.engine.bufferPool;
  // Storage the operation overwrites entirely is not zeroed: zeroing it here would also pull its
  // cache lines to this thread's core, only for the worker's core to take them back.
  const loan = pool.acquire(dtype, elementCount(shape, op), { zeroed: !overwritten });
  try {
    const out = Tensor.fromDescriptor({ dtype, shape, strides: denseStrides(shape, 'col'), offset: 0, buffer: loan.buffer }, { cpuAffinity: entry.engine.domain.id });
    await fill(out);
    pool.detach(loan);
    return out;
  } catch (e) {
    pool.release(loan);
    throw e;
  }
}

/** A fresh output (R96), allocated only after validation and the dispatch checks (R99). */
export async function dotGeneralFresh(entry: CpuOperationEntry, ctx: CpuExecutionContext, bundle: CpuProviderBundle, spec: DotGeneralSpec, op: string): Promise<Tensor> {
  dispatchMode(bundle, 'gemm', domainOf(entry), op); // R61/R62 before the allocation (R99)
  // beta is 0 for fresh outputs: a full-overwrite provider writes every element (R108).
  return freshOutput(entry, spec.dtype, spec.outShape, op, (out) => dotGeneralOn(entry, ctx, bundle, spec, out, op), bundle.freshOutputsNeedNoZeroing);
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
  const mode = dispatchMode(bundle, 'layoutTransform', domainOf(entry), op);
  // A layout transform writes every element of its destination.
  const dense = await freshOutput(entry, source.dtype, source.shape, op, async (out) => {
    const outcome = await entry.reuse(mode, (ctx) => bundle.layoutTransform.materialize(ctx, { src: source.descriptor(), dst: out.descriptor(), conjugate: false }), op);
    if (!outcome.executed) {
      throw new TenferroError('ProviderUnsupported', 'configured CPU layoutTransform provider reported unsupported while materialising a reshape', {
        op,
        detail: { slot: 'layoutTransform', reason: outcome.reason },
      });
    }
  }, true);
  return dense.reshape(shape);
}
