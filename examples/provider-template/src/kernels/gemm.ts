// src/kernels/gemm.ts — runs in engine workers, never on the main thread
import type { CpuGemmRequest, KernelFunction } from '@tenferro/core';
import { DESC, STATUS } from '../native/binding.js';
import { loadX } from '../native/load.js';

export interface XGemmTask {
  readonly request: CpuGemmRequest;
  /** The output rows this task computes: [first, end). */
  readonly rows: readonly [number, number];
}

export const myGemm: KernelFunction<XGemmTask, void> = (task) => {
  const addon = loadX();
  if (!addon.available) throw new Error(`the x addon cannot load in this worker: ${addon.reason}`);
  const { request: r, rows } = task;
  // Views over the request's shared storage: nothing is copied.
  const view = (buffer: SharedArrayBuffer) => (r.dtype === 'f32' ? new Float32Array(buffer) : new Float64Array(buffer));
  const [a, b, c] = [view(r.lhs.buffer), view(r.rhs.buffer), view(r.out.buffer)];
  const desc = new Float64Array(Object.keys(DESC).length);
  const items = r.batch.reduce((count, extent) => count * extent, 1);
  for (let item = 0; item < items; item++) {
    // The item's offsets: batch index `item`, its first axis fastest.
    let [offA, offB, offC] = [r.lhs.offset, r.rhs.offset, r.out.offset];
    for (let axis = 0, rest = item; axis < r.batch.length; axis++) {
      const at = rest % r.batch[axis]!;
      rest = Math.floor(rest / r.batch[axis]!);
      offA += at * r.lhs.batchStrides[axis]!;
      offB += at * r.rhs.batchStrides[axis]!;
      offC += at * r.out.batchStrides[axis]!;
    }
    const fields: Record<keyof typeof DESC, number> = {
      m0: rows[0], m1: rows[1], n: r.n, k: r.k,
      offA, rsA: r.lhs.rowStride, csA: r.lhs.colStride,
      offB, rsB: r.rhs.rowStride, csB: r.rhs.colStride,
      offC, rsC: r.out.rowStride, csC: r.out.colStride,
      alpha: r.alpha as number, // real dtypes only (declaredSupport): alpha and beta are numbers
      beta: r.beta as number,
    };
    for (const [name, slot] of Object.entries(DESC)) desc[slot] = fields[name as keyof typeof DESC];
    const status = addon.binding.gemm(a, b, c, desc);
    if (status !== STATUS.Ok) throw Object.assign(new Error(`x gemm failed with status ${status}`), { code: `X_STATUS_${status}` });
  }
};
