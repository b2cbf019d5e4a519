import type { DType } from '../tensor/dtype.js';
import { denseStrides, elementCount } from '../tensor/layout.js';
import { type Tensor, tensorInternals } from '../tensor/tensor.js';
import type { TensorDescriptor } from '../tensor/tensor-descriptor.js';
import type { CpuOperationEntry } from '../runtime/execution/operation-entry.js';

/**
 * Run `fill` on fresh dense column-major storage of `shape` from the engine's buffer pool
 * (storage handed back by `dispose`, `tidy` or collection is reused, so a loop pays no page faults after warm-up) and
 * return it tagged with the executing domain (R96). Storage the operation overwrites entirely
 * (`overwritten`) is not zeroed: zeroing it here would also pull its cache lines to this
 * thread's core, only for the worker's core to take them back (R108). On failure the storage
 * goes back to the pool.
 */
export async function freshOutput<D extends DType>(
  entry: CpuOperationEntry,
  dtype: D,
  shape: readonly number[],
  op: string,
  fill: (out: TensorDescriptor) => Promise<void>,
  overwritten: boolean,
): Promise<Tensor<D>> {
  const buffers = entry.engine.bufferPool;
  const loan = buffers.acquire(dtype, elementCount(shape, op), { zeroed: !overwritten, op });
  try {
    await fill(Object.freeze({ dtype, shape, strides: denseStrides(shape, 'col'), offset: 0, buffer: loan.buffer }));
  } catch (e) {
    buffers.release(loan);
    throw e;
  }
  // The storage now belongs to the tensor; it comes back when its last tensor is disposed or collected.
  buffers.detach(loan);
  return tensorInternals.fresh(dtype, shape, loan.buffer, buffers, { cpuAffinity: entry.engine.domain.id });
}
