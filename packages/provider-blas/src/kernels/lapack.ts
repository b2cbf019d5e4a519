/**
 * The worker side of provider-blas's LAPACK kernels (src/lapack-kernels.ts): one native call runs
 * every batch of one primitive with the loaded runtime's LAPACK routines (native/src/lapack.cc).
 * `args` packs the words and `[A, B, out0, out1, out2, info]`.
 */
import type { KernelArgs } from '@tenferro/core';
import { blasStatusName, describeStatus } from '../native/binding.js';
import { loadBlas } from '../native/load.js';

const views = new WeakMap<SharedArrayBuffer, Uint8Array>();

function bytes(buffer: SharedArrayBuffer): Uint8Array {
  let v = views.get(buffer);
  if (v === undefined) views.set(buffer, (v = new Uint8Array(buffer)));
  return v;
}

export function blasLapack(args: KernelArgs): void {
  const load = loadBlas();
  if (!load.available) throw new Error(`@tenferro/provider-blas: the native addon is unavailable in this worker: ${load.reasons.join('; ')}`);
  const { words, buffers } = args;
  const info = buffers[5]!;
  const status = load.binding.lapack(words, bytes(buffers[0]!), bytes(buffers[1]!), bytes(buffers[2]!), bytes(buffers[3]!), bytes(buffers[4]!), new Int32Array(info, 0, info.byteLength >>> 2));
  if (status !== 0) {
    throw Object.assign(new Error(`@tenferro/provider-blas: native lapack refused the request: ${describeStatus(status)}`), { code: blasStatusName(status) ?? 'UnknownStatus' });
  }
}
