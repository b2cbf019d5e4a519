import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import type { DType } from '../tensor/dtype.js';
import { Tensor, tensorInternals } from '../tensor/tensor.js';
import { freshOutput } from './fresh-output.js';
import { runOperation } from './run-operation.js';
import { ProviderDispatch, tensorFacts } from './provider-call.js';
import type { ProviderCallFacts } from '../diagnostics/channels.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import { assertReadable } from './host-access.js';

/**
 * `tensor.reshape(shape)` when that is metadata-only (same storage, same tag, no admission);
 * otherwise a fresh, tagged, dense copy through the layout provider, reshaped (R97).
 */
export async function reshape<D extends DType>(runner: OperationRunner, bundle: CpuProviderBundle, tensor: Tensor<D>, shape: readonly number[], signal: AbortSignal | undefined, op: string): Promise<Tensor<D>> {
  if (!Tensor.isTensor(tensor)) throw invalidArgument(op, 'tensor', 'a Tensor', tensor);
  tensorInternals.check(tensor, op, 'tensor');
  try {
    return tensor.reshape(shape);
  } catch (e) {
    if (!TenferroError.is(e, 'ReshapeNeedsCopy')) throw e;
  }
  assertReadable(runner, [tensor], op, ['tensor']);
  const dispatch = ProviderDispatch.of(bundle, runner.domain, op);
  return runOperation(runner, op, dispatch.mode('layoutTransform'), [tensor], async (entry, ctx) => {
    // A layout transform writes every element of its destination.
    const materialize = async (out: TensorDescriptor): Promise<void> => {
      const outcome = await dispatch.call(entry, ctx, 'layoutTransform', (c) => bundle.layoutTransform.materialize(c, { src: tensorInternals.descriptor(tensor), dst: out, conjugate: false }), reshapeFacts, { tensor, out });
      if (!outcome.executed) {
        throw new TenferroError('ProviderUnsupported', 'configured CPU layoutTransform provider reported unsupported while materialising a reshape', {
          op,
          detail: { slot: 'layoutTransform', reason: outcome.reason },
        });
      }
    };
    const dense = await freshOutput(entry, tensor.dtype, tensor.shape, op, (out, finish, fail) => materialize(out).then(finish, fail), true);
    // The view holds the storage; the dense intermediate is done with.
    const view = dense.reshape(shape);
    dense.dispose();
    return view;
  }, signal);
}

/** A reshape's copy, for `tenferro:provider` (asked only when someone listens). */
function reshapeFacts(s: { readonly tensor: Tensor; readonly out: TensorDescriptor }): ProviderCallFacts {
  return tensorFacts({ inputs: [tensorInternals.descriptor(s.tensor)], out: s.out });
}
