import { TenferroError, invalidArgument } from '../errors/tenferro-error.js';
import type { CpuProviderBundle } from '../provider/provider-bundle.js';
import type { OperationRunner } from '../runtime/execution/admission.js';
import type { BufferLoan, BufferPool } from '../buffer/buffer-pool.js';
import type { CpuDomainId } from '../contract/cpu-domain.js';
import type { DType } from '../tensor/dtype.js';
import { elementCount, denseStrides } from '../tensor/layout.js';
import { Tensor, tensorInternals } from '../tensor/tensor.js';
import type { StorageHome } from '../tensor/tensor-storage.js';
import { assertReadable } from './host-access.js';
import { runOperation } from './run-operation.js';
import { ProviderDispatch } from './provider-call.js';

/**
 * Where a materialised read's storage goes back to: the pool loan it was borrowed as (#35). The
 * loan stays outstanding while any tensor over the storage lives — `fn`'s dense tensor, or a view
 * of it that escaped `fn` — and is released to the pool that lent it when the last one is disposed
 * or collected, exactly once: storage is never lent again while a view can still read it.
 */
class LoanHome implements StorageHome {
  readonly #pool: BufferPool;
  #loan: BufferLoan | undefined;

  constructor(pool: BufferPool, loan: BufferLoan) {
    this.#pool = pool;
    this.#loan = loan;
  }

  returnStorage(): void {
    const loan = this.#loan;
    if (loan === undefined) return;
    this.#loan = undefined;
    abandoned.unregister(this);
    this.#pool.release(loan);
  }

  /**
   * The storage became unreachable without coming home: its buffer was handed out (`.buffer`,
   * `descriptor()` on a view that escaped `fn`), so it is not recycled by collection. The buffer
   * is the caller's now: the loan leaves the pool for good (no longer outstanding, never lent again).
   */
  abandon(): void {
    const loan = this.#loan;
    if (loan === undefined) return;
    this.#loan = undefined;
    this.#pool.detach(loan);
  }
}

/**
 * Loans whose storage was collected. The storage's own finalizer brings an unescaped loan home
 * (`returnStorage`); this one runs a turn later for whatever is still out, so that storage whose
 * buffer escaped does not stay outstanding in its pool for ever.
 */
const abandoned = new FinalizationRegistry<LoanHome>((home) => {
  setImmediate(() => home.abandon()).unref();
});

/**
 * R77, `with_materialized_tensor_read`: `fn` reads `tensor` as a dense tensor. A dense tensor
 * (one contiguous block, column- or row-major) is passed as it is, with no admission. A view is
 * materialised — in one execution through the layout provider (its mode decided first, R61, R62)
 * — into column-major storage borrowed from the engine's buffer pool (the session's, when run in a
 * session), tagged with the domain (R96), and passed to `fn`; the dense tensor is disposed when
 * `fn` settles, on success and on error. The loan is refcounted like any storage (#35): it goes
 * back to that same pool when the last tensor over it goes — at once when nothing escaped `fn`, or
 * when the last view `fn` let escape is disposed or collected (outstanding in `bufferPoolStats()`
 * until then); it is never lent again while a view can read it. An input of a foreign allocation
 * domain that refuses foreign reads is `HostAccess`.
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
  let borrowed: { pool: BufferPool; loan: BufferLoan; domainId: CpuDomainId } | undefined;
  await runOperation(
    runner,
    op,
    mode,
    [tensor],
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
  const { pool, loan, domainId } = borrowed!;
  // The storage's home is its loan: disposing `dense` returns it unless a view of it is still alive.
  const home = new LoanHome(pool, loan);
  const dense = tensorInternals.fresh(tensor.dtype, tensor.shape, loan.buffer, home, { cpuAffinity: domainId }, loan.offset, loan);
  abandoned.register(tensorInternals.storage(dense), home, home);
  try {
    return await fn(dense);
  } finally {
    dense.dispose();
  }
}
