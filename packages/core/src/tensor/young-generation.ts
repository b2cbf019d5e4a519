import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's collection function when taken (`null`: not to be had, or turned off), asked for once. */
let collect: ((options: { type: 'minor' }) => void) | null | undefined;
/** Scavenges are asked by filling only (test seam: {@link scavengeByFilling}). */
let fillOnly = false;
/** The switch that keeps tenferro from taking V8's `gc`. */
export const V8_GC_ENV = 'TENFERRO_V8_GC';

/**
 * Run a scavenge now with V8's own `gc({ type: 'minor' })`, and answer whether it could (else the
 * caller fills the young generation: {@link fillYoungGeneration}). The scavenge alone costs
 * ~0.3 ms; filling a 16 MiB young generation first took another 1–1.5 ms of main-thread CPU and
 * pushed 16 MiB of writes through the caches the kernels use (a loop dropping 1024² f32 products
 * on 2 threads: 1.0–1.1 ms of main-thread CPU a call filling, 0.4–0.5 ms with `gc`, `into`
 * 0.2–0.4 ms; on 1 thread the kernel itself ran 13.2–13.4 ms a call with `gc`, 14.2–15.8 filling).
 *
 * V8 gives `gc` only to contexts made while its `--expose-gc` flag is set. Unless the process has
 * it already (`node --expose-gc`), tenferro sets the flag for the instant it makes one throwaway
 * context (`vm.runInNewContext`), keeps that context's `gc`, and clears the flag again, so no
 * context or worker made later sees a `gc` it would not have had (a worker starting on another
 * thread in that instant could). Taken at the first ask, never at import. `TENFERRO_V8_GC=0`
 * keeps tenferro to filling.
 */
export function scavengeNow(): boolean {
  if (fillOnly) return false;
  collect ??= takeCollector();
  if (collect === null) return false;
  try {
    collect({ type: 'minor' });
    return true;
  } catch {
    collect = null; // a `gc` that refuses its options (not V8's, say): filling from here on
    return false;
  }
}

function takeCollector(): ((options: { type: 'minor' }) => void) | null {
  if (process.env[V8_GC_ENV] === '0') return null;
  const own = (globalThis as { gc?: unknown }).gc;
  if (typeof own === 'function') return own as (options: { type: 'minor' }) => void;
  // A process started with the flag keeps it (only the global was gone).
  const started = /--expose[-_]gc(?![-_\w])/.test(`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`);
  try {
    setFlagsFromString('--expose-gc');
    try {
      const gc: unknown = runInNewContext('gc');
      return typeof gc === 'function' ? (gc as (options: { type: 'minor' }) => void) : null;
    } finally {
      if (!started) setFlagsFromString('--no-expose-gc');
    }
  } catch {
    return null;
  }
}

/** Ask scavenges by filling only (`true`), or with V8's `gc` where it can be taken again. @internal test seam */
export function scavengeByFilling(on: boolean): void {
  fillOnly = on;
}

/**
 * Ask V8 for a minor collection (a scavenge) the only way its public API allows without `gc`:
 * fill what is left of the young generation with short-lived garbage, so that the next
 * allocation finds it full.
 *
 * Why tenferro asks (#38): a tensor over pooled storage is a small JavaScript object standing for
 * up to 2 MiB outside V8's heap. A program that drops such tensors gets their storage back when a
 * collection finds them dead — a scavenge does, through death tokens (`tensor-storage.ts`) — but a
 * loop of 256² f32 matmuls makes ~21 KB of garbage a call, so V8's own scavenges came every ~400
 * calls, with ~100 MiB of outputs out of the pool meanwhile. Telling V8 of that memory as external
 * memory (`AdjustAmountOfExternalAllocatedMemory`) makes it start *full* collections instead: past
 * ~7 MiB of new external memory V8 11 starts incremental marking (the old generation's limit minus
 * its size, ~15 MiB on a small heap, no longer exceeds the young generation's capacity). On a 2-vCPU
 * Xeon such a loop ran one full collection per ~100 calls, each costing the kernels 5–8 ms of CPU
 * (marking an 8 MiB heap beside two engine workers), 50–80 µs a call. A scavenge of the same loop
 * takes ~0.4 ms and filling the young generation ~0.5–1.3 ms (measured at 11–13 GB/s): the storage
 * comes home at a fraction of the cost, and no full collection runs — with `gc` where it can be
 * had ({@link scavengeNow}), without the fill.
 *
 * The garbage is one-byte strings copied from a zeroed buffer (`Buffer#toString('latin1')`: each is
 * exactly its length plus a header on V8's heap, below the 128 KiB above which V8 places an object
 * in its large-object space), dropped at once. Each call copies at most `budget` bytes (the young
 * generation can hold 16 MiB in Node 20: ~1.5 ms in one go, an event-loop stall of its own), and
 * answers whether it reached the end — the allocation that did not fit, which ran the scavenge;
 * the caller continues at a later turn otherwise. Costs one `getHeapSpaceStatistics()` call.
 */
export function fillYoungGeneration(budget: number): boolean {
  const young = youngGeneration();
  if (young === undefined) return true;
  source ??= Buffer.alloc(CHUNK_BYTES);
  // One chunk more than the space says is free: the space reports what it can still hand out,
  // and the allocation that does not fit is the one that starts the scavenge.
  const left = young.space_available_size + CHUNK_BYTES;
  for (let copied = 0; copied < Math.min(left, budget); copied += CHUNK_BYTES) source.toString('latin1'); // a call into Node's binding: never elided
  return left <= budget;
}

/** Bytes in use in the young generation now (0 if V8 does not say): it shrinks only when a scavenge runs. */
export function youngGenerationUsed(): number {
  return youngGeneration()?.space_used_size ?? 0;
}

function youngGeneration() {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
}

/** Bytes of one chunk of garbage: a regular (not large-object) heap string. */
const CHUNK_BYTES = 120_000;
/** What the chunks are copied from (made on first use). */
let source: Buffer | undefined;
