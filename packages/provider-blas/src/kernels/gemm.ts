/**
 * The worker side of the BLAS provider: engine workers import this module the first time they
 * run `blasGemm` and load the addon then (the BLAS library itself is already in the process:
 * `createBlasProvider()` loaded it on the main thread).
 */
import type { KernelArgs } from '@tenferro/core';
import { BlasStatus, blasStatusName, describeStatus } from '../native/binding.js';
import { loadBlas } from '../native/load.js';

/**
 * Run every batch of one GEMM with one native call: `args` packs the descriptor built by
 * `planGemm` and the buffers `[A, B, C]`. Throws (→ `KernelFailed`) only on a broken request or a
 * missing addon; a refusal's error has `code` = the status name (e.g. `'OutOfBoundsC'`), which
 * core reports as `KernelFailed.detail.kernelCode`.
 */
export function blasGemm(args: KernelArgs): void {
  const load = loadBlas();
  if (!load.available) throw new Error(`@tenferro/provider-blas: the native addon is unavailable in this worker: ${load.reasons.join('; ')}`);
  const { words, buffers } = args;
  const a = bytes(buffers[0]!);
  const status = load.binding.gemm(words, a, buffers[1] === buffers[0] ? a : bytes(buffers[1]!), bytes(buffers[2]!));
  if (status !== BlasStatus.Ok) {
    const error = new Error(`@tenferro/provider-blas: native gemm refused the request: ${describeStatus(status)}`);
    throw Object.assign(error, { code: blasStatusName(status) ?? 'UnknownStatus' });
  }
}

const views = new WeakMap<SharedArrayBuffer, Uint8Array>();

/** The whole of `buffer` as bytes, cached per buffer. */
function bytes(buffer: SharedArrayBuffer): Uint8Array {
  let v = views.get(buffer);
  if (v === undefined) views.set(buffer, (v = new Uint8Array(buffer)));
  return v;
}
