// The kernel engine workers run to pre-fault fresh output storage (#38; ops/prefault.ts). A
// module of its own: workers import it lazily, and it imports nothing.
import type { KernelArgs } from '../contract/kernel-args.js';

/**
 * Write one zero byte per 4 KiB page of `words[1]` bytes of `buffers[0]` from byte `words[0]` —
 * fresh storage, all zeros already, so the writes change nothing but fault its pages in (one
 * fault per 2 MiB where huge pages back the range).
 */
export function prefaultPages({ words, buffers }: KernelArgs): void {
  const view = new Uint8Array(buffers[0]!, words[0]!, words[1]!);
  for (let i = 0; i < view.length; i += 4096) view[i] = 0;
  if (view.length > 0) view[view.length - 1] = 0;
}
