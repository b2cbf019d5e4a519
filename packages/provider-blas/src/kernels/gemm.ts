/**
 * The worker side of the BLAS provider: engine workers import this module the first time they
 * run `blasGemm` and load the addon then (the BLAS library itself is already in the process:
 * `createBlasProvider()` loaded it on the main thread).
 */
import { BlasStatus, blasStatusName, describeStatus } from '../native/binding.js';
import { loadBlas } from '../native/load.js';

/** One (strided-batched) GEMM: the descriptor built by `planGemm` and the three buffers. */
export interface BlasGemmPayload {
  readonly desc: Float64Array;
  readonly a: SharedArrayBuffer;
  readonly b: SharedArrayBuffer;
  readonly c: SharedArrayBuffer;
}

/**
 * Run every batch of one GEMM with one native call. Throws (→ `KernelFailed`) only on a broken
 * request or a missing addon; a refusal's error has `code` = the status name (e.g.
 * `'OutOfBoundsC'`), which core reports as `KernelFailed.detail.kernelCode`.
 */
export function blasGemm(payload: BlasGemmPayload): void {
  const load = loadBlas();
  if (!load.available) throw new Error(`@tenferro/provider-blas: the native addon is unavailable in this worker: ${load.reasons.join('; ')}`);
  const { desc, a, b, c } = payload;
  const status = load.binding.gemm(desc, new Uint8Array(a), b === a ? new Uint8Array(a) : new Uint8Array(b), new Uint8Array(c));
  if (status !== BlasStatus.Ok) {
    const error = new Error(`@tenferro/provider-blas: native gemm refused the request: ${describeStatus(status)}`);
    throw Object.assign(error, { code: blasStatusName(status) ?? 'UnknownStatus' });
  }
}
