import type { DType } from '../tensor/dtype.js';
import { denseStrides, elementCount } from '../tensor/layout.js';
import { Tensor } from '../tensor/tensor.js';
import type { CpuOperationEntry } from '../runtime/execution/operation-entry.js';

/**
 * Run `fill` on fresh dense column-major storage of `shape` from the engine's buffer pool
 * (reclaimed storage is reused, so a loop that reclaims its outputs pays no page faults) and
 * return it tagged with the executing domain (R96). Storage the operation overwrites entirely
 * (`overwritten`) is not zeroed: zeroing it here would also pull its cache lines to this
 * thread's core, only for the worker's core to take them back (R108). On failure the storage
 * goes back to the pool.
 */
export async function freshOutput(
  entry: CpuOperationEntry,
  dtype: DType,
  shape: readonly number[],
  op: string,
  fill: (out: Tensor) => Promise<void>,
  overwritten: boolean,
): Promise<Tensor> {
  const buffers = entry.engine.bufferPool;
  const loan = buffers.acquire(dtype, elementCount(shape, op), { zeroed: !overwritten, op });
  try {
    const out = Tensor.fromDescriptor({ dtype, shape, strides: denseStrides(shape, 'col'), offset: 0, buffer: loan.buffer }, { cpuAffinity: entry.engine.domain.id });
    await fill(out);
    buffers.detach(loan);
    return out;
  } catch (e) {
    buffers.release(loan);
    throw e;
  }
}
