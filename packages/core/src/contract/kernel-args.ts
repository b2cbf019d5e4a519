import { types } from 'node:util';
import { invalidArgument } from '../errors/tenferro-error.js';

/** The most numbers one packed task carries. */
export const KERNEL_ARGS_MAX_WORDS = 256;
/** The most buffers one packed task names. */
export const KERNEL_ARGS_MAX_BUFFERS = 8;

/**
 * A kernel payload that crosses to the worker through shared memory instead of a structured
 * clone: numbers (a descriptor) and `SharedArrayBuffer`s (the storage it addresses). Each worker
 * receives a buffer once and is then told only its id, so a task costs no `postMessage` and no
 * buffer re-wrapping — the fixed cost of a small kernel call.
 *
 * In the kernel, `words` is a view of the worker's argument area and `buffers` the worker's
 * objects for the same storage: both are valid during the call only (copy what must outlive it).
 */
export interface KernelArgs {
  readonly words: Float64Array;
  readonly buffers: readonly SharedArrayBuffer[];
}

class PackedKernelArgs implements KernelArgs {
  readonly words: Float64Array;
  readonly buffers: readonly SharedArrayBuffer[];
  readonly #packed = true;

  constructor(words: Float64Array, buffers: readonly SharedArrayBuffer[]) {
    this.words = words;
    this.buffers = buffers;
  }

  static is(value: unknown): value is PackedKernelArgs {
    return typeof value === 'object' && value !== null && #packed in value;
  }
}

/**
 * Pack `words` and `buffers` as a kernel payload: `ctx.run(kernel, kernelArgs(desc, [a, b, c]))`.
 * The words are read when the task is posted; neither array is kept.
 *
 * @example
 * ```ts
 * import { CpuBackend, type KernelArgs, defineKernel, kernelArgs } from '@tenferro/core';
 *
 * // Sums `words[0]` f64 values of buffers[0]: the numbers and the buffer travel through shared memory.
 * const sum = defineKernel<KernelArgs, number>(
 *   'data:text/javascript,export const sum = ({ words, buffers }) => new Float64Array(buffers[0], 0, words[0]).reduce((s, x) => s + x, 0);',
 *   'sum',
 * );
 * const storage = new SharedArrayBuffer(4 * 8);
 * new Float64Array(storage).set([1, 2, 3, 4]);
 * const backend = await CpuBackend.create({ threads: 1 });
 * console.log(await backend.install((ctx) => ctx.run(sum, kernelArgs(new Float64Array([3]), [storage])))); // prints: 6
 * await backend.close();
 * ```
 */
export function kernelArgs(words: Float64Array, buffers: readonly SharedArrayBuffer[]): KernelArgs {
  const op = 'kernelArgs';
  if (!(words instanceof Float64Array)) throw invalidArgument(op, 'words', 'a Float64Array', words);
  if (words.length > KERNEL_ARGS_MAX_WORDS) throw invalidArgument(op, 'words', `at most ${KERNEL_ARGS_MAX_WORDS} numbers`, `${words.length} numbers`);
  if (!Array.isArray(buffers)) throw invalidArgument(op, 'buffers', 'an array of SharedArrayBuffers', buffers);
  if (buffers.length > KERNEL_ARGS_MAX_BUFFERS) throw invalidArgument(op, 'buffers', `at most ${KERNEL_ARGS_MAX_BUFFERS} buffers`, `${buffers.length} buffers`);
  for (let i = 0; i < buffers.length; i++) {
    if (!types.isSharedArrayBuffer(buffers[i])) throw invalidArgument(op, `buffers[${i}]`, 'a SharedArrayBuffer', buffers[i]);
  }
  return new PackedKernelArgs(words, buffers.slice());
}

/** Words are cut from slabs of this many; a slab is never handed out twice (see {@link kernelWords}). */
const WORD_SLAB = 4096;
let wordSlab: ArrayBuffer | undefined;
let wordNext = WORD_SLAB;

/**
 * A zeroed `Float64Array` of `length` words to fill and pass to {@link kernelArgs}, cut from a
 * shared slab. `new Float64Array(32)` gets a backing store of its own outside V8's heap (above
 * 64 bytes), which cost ~0.6 µs per descriptor on a 2-vCPU Xeon (a tenth of a 64×64 GEMM's whole
 * call); a view of a slab costs ~15 ns. Each word is handed out once and never again (the slab is
 * collected when its last view is), so a descriptor that waits for a busy worker is never
 * overwritten by a later one. A view keeps its 32 KiB slab alive: pack per call, do not cache.
 *
 * @example
 * ```ts
 * import { kernelArgs, kernelWords } from '@tenferro/core';
 *
 * const words = kernelWords(3);
 * words.set([4, 4, 2]);
 * const packed = kernelArgs(words, [new SharedArrayBuffer(16 * 8)]);
 * console.log(packed.words.length, kernelWords(2).join(',')); // prints: 3 0,0
 * ```
 */
export function kernelWords(length: number): Float64Array {
  if (!Number.isSafeInteger(length) || length < 0 || length > KERNEL_ARGS_MAX_WORDS) {
    throw invalidArgument('kernelWords', 'length', `an integer in [0, ${KERNEL_ARGS_MAX_WORDS}]`, length);
  }
  if (wordSlab === undefined || wordNext + length > WORD_SLAB) {
    wordSlab = new ArrayBuffer(WORD_SLAB * Float64Array.BYTES_PER_ELEMENT);
    wordNext = 0;
  }
  const words = new Float64Array(wordSlab, wordNext * Float64Array.BYTES_PER_ELEMENT, length);
  wordNext += length;
  return words;
}

/**
 * Whether `value` was made by {@link kernelArgs}.
 *
 * @example
 * ```ts
 * import { isKernelArgs, kernelArgs } from '@tenferro/core';
 *
 * const packed = kernelArgs(new Float64Array([1, 2]), [new SharedArrayBuffer(8)]);
 * console.log(isKernelArgs(packed), isKernelArgs({ words: packed.words, buffers: packed.buffers })); // prints: true false
 * ```
 */
export function isKernelArgs(value: unknown): value is KernelArgs {
  return PackedKernelArgs.is(value);
}
