/**
 * The worker-side kernel module of the built-in kernels: engine workers import it on their first
 * linalg task. A task is packed kernel arguments (`packLinalgTask` in ../builtin.ts): the words
 * and `[A, B, out0, out1, out2, info, abort?]`. The addon checks every word again.
 */
import type { KernelArgs } from '@tenferro/core';
import { STATUS_NAMES, W } from '../native/binding.js';
import { loadLinalg } from '../native/load.js';

const u8 = new WeakMap<SharedArrayBuffer, Uint8Array>();
const i32 = new WeakMap<SharedArrayBuffer, Int32Array>();

function bytes(b: SharedArrayBuffer): Uint8Array {
  let v = u8.get(b);
  if (v === undefined) u8.set(b, (v = new Uint8Array(b)));
  return v;
}

function ints(b: SharedArrayBuffer): Int32Array {
  let v = i32.get(b);
  if (v === undefined) i32.set(b, (v = new Int32Array(b, 0, b.byteLength >>> 2)));
  return v;
}

export function linalgKernel(args: KernelArgs): void {
  const status = loadLinalg();
  if (!status.available) throw new Error(`@tenferro/linalg: ${status.reason}`);
  const { words, buffers } = args;
  const abortAt = words[W.abortAt]!;
  const abort = abortAt >= 0 && buffers[6] !== undefined ? new Int32Array(buffers[6], abortAt, 1) : undefined;
  const code = status.binding.run(words, bytes(buffers[0]!), bytes(buffers[1]!), bytes(buffers[2]!), bytes(buffers[3]!), bytes(buffers[4]!), ints(buffers[5]!), abort);
  if (code !== 0) {
    const name = STATUS_NAMES[code] ?? 'UnknownStatus';
    throw Object.assign(new Error(`@tenferro/linalg: the native kernel refused the task: ${name} (status ${code})`), { code: name });
  }
}
