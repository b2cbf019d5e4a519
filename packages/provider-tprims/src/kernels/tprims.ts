/**
 * The worker-side kernel module. Engine workers import it lazily (through a KernelRef) the first
 * time they run `tprimsRun`; the addon is loaded then, once per worker. A task crosses as packed
 * kernel arguments (`packTask`): the abort offset and the descriptor's words, and the buffers `[out, a, b?, abort?]`,
 * with no structured clone. Each buffer is viewed as one Uint8Array (cached per buffer); the addon
 * bounds-checks every element the task reaches against these views.
 */
import { type KernelArgs, kernelArgs } from '@tenferro/core/kernel';
import { statusName, TprimsStatus } from '../native/binding.js';
import { loadTprims } from '../native/load.js';

const views = new WeakMap<SharedArrayBuffer, Uint8Array>();

function bytes(buffer: SharedArrayBuffer): Uint8Array {
  let v = views.get(buffer);
  if (v === undefined) views.set(buffer, (v = new Uint8Array(buffer)));
  return v;
}

/** The execution's abort word: its buffer and byte offset (`ctx.abortWord`). */
export interface AbortWordRef {
  readonly buffer: SharedArrayBuffer;
  readonly byteOffset: number;
}

/**
 * The packed kernel arguments of one task: `words` is `[abort offset, descriptor…]` with its first
 * word left for this function (the abort word's byte offset in the last buffer, or -1 without
 * one), and the buffers are `[out, a, b?, abort buffer?]`.
 */
export function packTask(words: Float64Array, out: SharedArrayBuffer, a: SharedArrayBuffer, b?: SharedArrayBuffer, abort?: AbortWordRef): KernelArgs {
  words[0] = abort === undefined ? -1 : abort.byteOffset;
  const buffers = b === undefined ? [out, a] : [out, a, b];
  if (abort !== undefined) buffers.push(abort.buffer);
  return kernelArgs(words, buffers);
}

const abortViews = new WeakMap<SharedArrayBuffer, Int32Array>();

/** The abort word at `byteOffset` of `buffer`, through one Int32Array view of the buffer cached per buffer. */
function abortWord(buffer: SharedArrayBuffer, byteOffset: number): Int32Array {
  let v = abortViews.get(buffer);
  if (v === undefined) abortViews.set(buffer, (v = new Int32Array(buffer)));
  return v.subarray(byteOffset >> 2, (byteOffset >> 2) + 1);
}

/**
 * Kernel export run by engine workers on a task packed by `packTask`. Throws (→ KernelFailed) only
 * if the addon is missing or refuses the task; the error's `code` is the status name (e.g.
 * `'OutOfBounds'`), which core reports as `KernelFailed.detail.kernelCode`. When the execution's
 * abort word was raised the kernel stops between two rows or tiles and this throws with `code:
 * 'Aborted'`; core then settles the operation with `ExecutionAborted` (or `BackendClosed`).
 */
export function tprimsRun(args: KernelArgs): void {
  const status = loadTprims();
  if (!status.available) throw new Error(`@tenferro/provider-tprims: ${status.reason}`);
  const { words, buffers } = args;
  const abortAt = words[0]!;
  const operands = abortAt >= 0 ? buffers.length - 1 : buffers.length;
  const abort = abortAt >= 0 ? abortWord(buffers[operands]!, abortAt) : undefined;
  const out = bytes(buffers[0]!);
  const a = bytes(buffers[1]!);
  const b = operands > 2 ? bytes(buffers[2]!) : undefined;
  const code = status.binding.run(words.subarray(1), out, a, b, abort);
  if (code !== TprimsStatus.Ok) {
    const name = statusName(code) ?? 'UnknownStatus';
    throw Object.assign(new Error(`@tenferro/provider-tprims: the native kernel refused the task: ${name} (status ${code})`), { code: name });
  }
}
