/**
 * The worker-side kernel module. Engine workers import it lazily (through a KernelRef) the first
 * time they run `tprimsRun`; the addon is loaded then, once per worker. A task crosses as packed
 * kernel arguments (`packTask`): the descriptor's words and the operand buffers `[out, a, b?]`,
 * with no structured clone. Each buffer is viewed as one Uint8Array (cached per buffer); the addon
 * bounds-checks every element the task reaches against these views.
 */
import { type KernelArgs, kernelArgs } from '@tenferro/core';
import { statusName, TprimsStatus } from '../native/binding.js';
import { loadTprims } from '../native/load.js';

const views = new WeakMap<SharedArrayBuffer, Uint8Array>();

function bytes(buffer: SharedArrayBuffer): Uint8Array {
  let v = views.get(buffer);
  if (v === undefined) views.set(buffer, (v = new Uint8Array(buffer)));
  return v;
}

/** The packed kernel arguments of one task. */
export function packTask(desc: Float64Array, out: SharedArrayBuffer, a: SharedArrayBuffer, b?: SharedArrayBuffer): KernelArgs {
  return kernelArgs(desc, b === undefined ? [out, a] : [out, a, b]);
}

/**
 * Kernel export run by engine workers on a task packed by `packTask`. Throws (→ KernelFailed) only
 * if the addon is missing or refuses the task; the error's `code` is the status name (e.g.
 * `'OutOfBounds'`), which core reports as `KernelFailed.detail.kernelCode`.
 */
export function tprimsRun(args: KernelArgs): void {
  const status = loadTprims();
  if (!status.available) throw new Error(`@tenferro/provider-tprims: ${status.reason}`);
  const { words, buffers } = args;
  const out = bytes(buffers[0]!);
  const a = bytes(buffers[1]!);
  const code = buffers.length > 2 ? status.binding.run(words, out, a, bytes(buffers[2]!)) : status.binding.run(words, out, a);
  if (code !== TprimsStatus.Ok) {
    const name = statusName(code) ?? 'UnknownStatus';
    throw Object.assign(new Error(`@tenferro/provider-tprims: the native kernel refused the task: ${name} (status ${code})`), { code: name });
  }
}
