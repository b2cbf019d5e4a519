import { type DotGeneralDims, type DotGeneralIntoOptions, type DotGeneralOptions, validateDotGeneral } from '../contraction/validate-dot-general.js';
import { invalidArgument } from '../errors/tenferro-error.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import { Tensor } from '../tensor/tensor.js';
import { freshOutput } from './fresh-output.js';
import { ProviderDispatch } from './provider-call.js';
import { runDotGeneral } from './run-dot-general.js';

/**
 * `dot_general` into a fresh output of shape `[lhs free…, rhs free…, batch…]` (R103), tagged
 * with the executing domain (R96). Validation (R102) and the GEMM's dispatch mode (R61, R62)
 * come before admission and allocation (R99).
 */
export function dotGeneral(runner: OperationRunner, bundle: CpuProviderBundle, lhs: Tensor, rhs: Tensor, dims: DotGeneralDims, options: DotGeneralOptions, op: string): Promise<Tensor> {
  const spec = validateDotGeneral(op, lhs, rhs, dims, options);
  const dispatch = new ProviderDispatch(bundle, runner.domain, op);
  return runner.run(op, dispatch.mode('gemm'), (entry, ctx) =>
    // beta is 0 for fresh outputs: a full-overwrite provider writes every element (R108).
    freshOutput(
      entry,
      spec.dtype,
      spec.outShape,
      op,
      async (out) => void (await runDotGeneral({ entry, ctx, dispatch, unzeroedOutput: bundle.freshOutputsNeedNoZeroing }, spec, out.descriptor())),
      bundle.freshOutputsNeedNoZeroing,
    ),
    spec.signal,
  );
}

/**
 * `out = alpha · dot_general(lhs, rhs) + beta · out` into a caller-owned output, which keeps its
 * metadata (R98); on any failure before the provider writes, `out` is byte-identical.
 */
export async function dotGeneralInto(
  runner: OperationRunner,
  bundle: CpuProviderBundle,
  out: Tensor,
  lhs: Tensor,
  rhs: Tensor,
  dims: DotGeneralDims,
  options: DotGeneralIntoOptions,
  op: string,
): Promise<Tensor> {
  const spec = validateDotGeneral(op, lhs, rhs, dims, options, out);
  const dispatch = new ProviderDispatch(bundle, runner.domain, op);
  await runner.run(
    op,
    dispatch.mode('gemm'),
    (entry, ctx) => runDotGeneral({ entry, ctx, dispatch, guardOutput: !bundle.declinesBeforeWriting }, spec, out.descriptor()),
    spec.signal,
  );
  return out;
}

/** Rank-2 matrix product `a · b`. */
export function matmul(runner: OperationRunner, bundle: CpuProviderBundle, a: Tensor, b: Tensor, options: DotGeneralOptions, op: string): Promise<Tensor> {
  for (const [name, t] of [['a', a], ['b', b]] as const) {
    if (!Tensor.isTensor(t)) throw invalidArgument(op, name, 'a Tensor', t);
    if (t.rank !== 2) throw invalidArgument(op, `${name}.shape`, 'a rank-2 shape', t.shape);
  }
  return dotGeneral(runner, bundle, a, b, { contracting: [[1], [0]] }, options, op);
}
