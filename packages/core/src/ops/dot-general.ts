import { type DotGeneralDims, type DotGeneralIntoOptions, type DotGeneralOptions, validateDotGeneral } from '../contraction/validate-dot-general.js';
import { invalidArgument } from '../errors/tenferro-error.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import type { DType } from '../tensor/dtype.js';
import { Tensor, tensorInternals } from '../tensor/tensor.js';
import { freshOutput } from './fresh-output.js';
import { assertReadable } from './host-access.js';
import { ProviderDispatch } from './provider-call.js';
import { runDotGeneral } from './run-dot-general.js';
import { runOperation } from './run-operation.js';

/**
 * `dot_general` into a fresh output of shape `[lhs free…, rhs free…, batch…]` (R103), tagged
 * with the executing domain (R96). Validation (R102) and the GEMM's dispatch mode (R61, R62)
 * come before admission and allocation (R99).
 */
export function dotGeneral<D extends DType>(runner: OperationRunner, bundle: CpuProviderBundle, lhs: Tensor<D>, rhs: Tensor<D>, dims: DotGeneralDims, options: DotGeneralOptions, op: string): Promise<Tensor<D>> {
  const spec = validateDotGeneral(op, lhs, rhs, dims, options);
  assertReadable(runner, [lhs, rhs], op, ['lhs', 'rhs']);
  const dispatch = ProviderDispatch.of(bundle, runner.domain, op);
  return runOperation(
    runner,
    op,
    dispatch.mode('gemm'),
    [lhs, rhs],
    (entry, ctx) =>
      // beta is 0 for fresh outputs: a full-overwrite provider writes every element (R108).
      freshOutput(
        entry,
        lhs.dtype,
        spec.outShape,
        op,
        (out, finish, fail) => runDotGeneral({ entry, ctx, dispatch, unzeroedOutput: bundle.freshOutputsNeedNoZeroing, analysisCache: runner.analysisCache }, spec, out, finish, fail),
        bundle.freshOutputsNeedNoZeroing,
        ctx,
      ),
    spec.signal,
  );
}

/**
 * `out = alpha · dot_general(lhs, rhs) + beta · out` into a caller-owned output, which keeps its
 * metadata (R98); on any failure before the provider writes, `out` is byte-identical.
 */
export function dotGeneralInto<D extends DType>(
  runner: OperationRunner,
  bundle: CpuProviderBundle,
  out: Tensor<D>,
  lhs: Tensor<D>,
  rhs: Tensor<D>,
  dims: DotGeneralDims,
  options: DotGeneralIntoOptions,
  op: string,
): Promise<Tensor<D>> {
  const spec = validateDotGeneral(op, lhs, rhs, dims, options, { out });
  assertReadable(runner, [lhs, rhs, out], op, ['lhs', 'rhs', 'out']);
  const dispatch = ProviderDispatch.of(bundle, runner.domain, op);
  return runOperation(
    runner,
    op,
    dispatch.mode('gemm'),
    [lhs, rhs, out],
    (entry, ctx) =>
      runDotGeneral({ entry, ctx, dispatch, guardOutput: !bundle.declinesBeforeWriting, analysisCache: runner.analysisCache }, spec, tensorInternals.descriptor(out), () => out),
    spec.signal,
  );
}

const MATMUL_DIMS: DotGeneralDims = Object.freeze({ contracting: Object.freeze([Object.freeze([1]), Object.freeze([0])]) as DotGeneralDims['contracting'] });

/** Rank-2 matrix product `a · b`. */
export function matmul<D extends DType>(runner: OperationRunner, bundle: CpuProviderBundle, a: Tensor<D>, b: Tensor<D>, options: DotGeneralOptions, op: string): Promise<Tensor<D>> {
  assertMatrix(a, 'a', op);
  assertMatrix(b, 'b', op);
  return dotGeneral(runner, bundle, a, b, MATMUL_DIMS, options, op);
}

/** `t` is a rank-2 tensor (checked without the pair of arrays and iterator a loop over both operands made per call). */
function assertMatrix(t: unknown, name: 'a' | 'b', op: string): void {
  if (!Tensor.isTensor(t)) throw invalidArgument(op, name, 'a Tensor', t);
  if (t.rank !== 2) throw invalidArgument(op, `${name}.shape`, 'a rank-2 shape', t.shape);
}
