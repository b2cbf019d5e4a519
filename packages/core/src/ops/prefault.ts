import type { CpuExecutionContext } from '../contract/execution-context.js';
import { defineKernel } from '../contract/kernel.js';
import { type KernelArgs, kernelArgs, kernelWords } from '../contract/kernel-args.js';
import { currentHugePagePolicy } from '../buffer/huge-pages.js';
import { poolChannel, publishPool } from '../diagnostics/channels.js';

/**
 * Pre-faulting inside the permit (#38). Fresh storage costs a page fault per page on first touch
 * (~10 µs per 4 KiB page on the microVM of #38), and a kernel that writes its output takes those
 * faults itself. On a backend of two or more threads the engine's workers — the CPUs the
 * operation's permit already holds, inside its admitted execution (R27: never background work on
 * CPUs another permit may hold) — touch the storage first, one slice each, in parallel. Only
 * storage the operation writes entirely (nothing beyond what it writes is faulted in, which
 * matters under a cgroup `memory.max`), only fresh storage (a retained buffer is resident
 * already), and only from {@link PREFAULT_MIN_BYTES} on (below it the task round trip costs more
 * than the faults). `TENFERRO_PREFAULT=0` turns it off.
 */
export const PREFAULT_MIN_BYTES = 4 * 1024 * 1024;

const prefaultKernel = defineKernel<KernelArgs, void>(new URL('./prefault-kernel.js', import.meta.url), 'prefaultPages');

/** Slices start on 2 MiB boundaries (relative to the data): a huge page is faulted by one worker. */
const SLICE_ALIGN = 2 * 1024 * 1024;

/**
 * Whether fresh storage of `bytes` that an operation overwrites entirely should be pre-faulted on
 * `ctx` — then the workers that may (its Inner-mode pool), else undefined.
 */
export function prefaultPool(ctx: CpuExecutionContext | undefined, bytes: number): ReturnType<CpuExecutionContext['workerPool']> {
  if (ctx === undefined || bytes < PREFAULT_MIN_BYTES || !currentHugePagePolicy().prefault) return undefined;
  const pool = ctx.workerPool();
  return pool !== undefined && pool.size >= 2 ? pool : undefined;
}

/**
 * Touch every page of `bytes` bytes of `buffer` from `byteOffset` on the pool's workers, one
 * contiguous slice each; resolves when every page is in. A `tenferro:pool` event of kind
 * `prefault` marks the end (with the bytes touched).
 */
export function prefault(pool: NonNullable<ReturnType<CpuExecutionContext['workerPool']>>, dtype: string, buffer: SharedArrayBuffer, byteOffset: number, bytes: number, retainedBytes: () => number): Promise<void> {
  const lanes = Math.max(1, Math.min(pool.size, Math.ceil(bytes / SLICE_ALIGN)));
  const step = Math.ceil(bytes / lanes / SLICE_ALIGN) * SLICE_ALIGN;
  const tasks: KernelArgs[] = [];
  for (let start = 0; start < bytes; start += step) {
    const words = kernelWords(2);
    words[0] = byteOffset + start;
    words[1] = Math.min(step, bytes - start);
    tasks.push(kernelArgs(words, [buffer]));
  }
  return pool.map(prefaultKernel, tasks).then(() => {
    if (poolChannel().hasSubscribers) publishPool('prefault', dtype, bytes, retainedBytes());
  });
}
