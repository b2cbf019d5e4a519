/**
 * The worker side of the BLAS provider: engine workers import this module the first time they
 * run one of its kernels and load the addon then. `blasLoad` runs once per process, inside the
 * first GEMM's admission, on a pinned engine worker: it dlopen()s the BLAS runtime there (so the
 * threads the runtime starts inherit that worker's — the domain's — mask) and probes it.
 */
import type { KernelArgs } from '@tenferro/core';
import { BlasStatus, type RawLoadRequest, blasStatusName, describeStatus } from '../native/binding.js';
import { loadBlas } from '../native/load.js';
import { type LoadReport, loadAndProbe } from '../native/probe.js';

/** Load the BLAS runtime on this worker (once per process) and report what it found. */
export function blasLoad(request: RawLoadRequest): LoadReport {
  const load = loadBlas();
  if (!load.available) throw new Error(`@tenferro/provider-blas: the native addon is unavailable in this worker: ${load.reasons.join('; ')}`);
  return loadAndProbe(load.binding, request);
}

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
