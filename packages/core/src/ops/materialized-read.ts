import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import type { BufferLoan, BufferPool } from '../buffer/buffer-pool.js';
import type { CpuDomainId } from '../contract/cpu-domain.js';
import type { DType } from '../tensor/dtype.js';
import { elementCount, denseStrides } from '../tensor/layout.js';
import { Tensor, tensorInternals } from '../tensor/tensor.js';
import { assertReadable } from './host-access.js';
import { ProviderDispatch } from './provider-call.js';

/**
 * R77, `with_materialized_tensor_read`: `fn` reads `tensor` as a dense tensor. A dense tensor
 * (one contiguous block, column- or row-major) is passed as it is, with no admission. A view is
 * materialised — in one execution through the layout provider (its mode decided first, R61, R62)
 * — into column-major storage borrowed from the engine's buffer pool (the session's, when run in a
 * session), tagged with the domain (R96), passed to `fn`, and returned to that same pool when `fn`
 * settles, on success and on error; the dense tensor is disposed then and must not be kept (nor
 * views of it). An input of a foreign allocation domain that refuses foreign reads is `HostAccess`.
 */
export async function withMaterializedTensorRead<D extends DType, R>(
  runner: OperationRunner,
  bundle: CpuProviderBundle,
  tensor: Tensor<D>,
  fn: (dense: Tensor<D>) => R | Promise<R>,
  signal: AbortSignal | undefined,
  op: string,
): Promise<R> {
  if (!Tensor.isTensor(tensor)) throw invalidArgument(op, 'tensor', 'a Tensor', tensor);
  tensorInternals.check(tensor, op, 'tensor');
  if (typeof fn !== 'function') throw invalidArgument(op, 'fn', 'a function (dense) => …', fn);
  assertReadable(runner, [tensor], op, ['tensor']);
  if (tensor.isDense('col') || tensor.isDense('row')) return await fn(tensor);
  const dispatch = ProviderDispatch.of(bundle, runner.domain, op);
  const mode = dispatch.mode('layoutTransform');
  const storage = tensorInternals.storage(tensor);
  storage.retain();
  let borrowed: { pool: BufferPool; loan: BufferLoan; domainId: CpuDomainId } | undefined;
  try {
    await runner.run(
      op,
      mode,
      async (entry, ctx) => {
        const pool = entry.engine.bufferPool;
        const loan = pool.acquire(tensor.dtype, elementCount(tensor.shape, op), { zeroed: false, op });
        try {
          const dst = Object.freeze({ dtype: tensor.dtype, shape: tensor.shape, strides: denseStrides(tensor.shape, 'col'), offset: loan.offset, buffer: loan.buffer });
          const outcome = await dispatch.call(entry, ctx, 'layoutTransform', (c) => bundle.layoutTransform.materialize(c, { src: tensorInternals.descriptor(tensor), dst, conjugate: false }));
          if (!outcome.executed) {
            throw new TenferroError('ProviderUnsupported', 'configured CPU layoutTransform provider reported unsupported while materialising a read', {
              op,
              detail: { slot: 'layoutTransform', reason: outcome.reason },
            });
          }
        } catch (e) {
          pool.release(loan);
          throw e;
        }
        borrowed = { pool, loan, domainId: entry.engine.domain.id };
      },
      signal,
    );
  } finally {
    storage.release();
  }
  const { pool, loan, domainId } = borrowed!;
  // No storage home: disposing the tensor only invalidates it; the loan goes back below.
  const dense = tensorInternals.fresh(tensor.dtype, tensor.shape, loan.buffer, undefined, { cpuAffinity: domainId }, loan.offset);
  try {
    return await fn(dense);
  } finally {
    dense.dispose();
    pool.release(loan);
  }
}
