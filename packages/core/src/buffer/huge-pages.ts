import { HUGE_PAGE_BYTES, adviseHugePages, loadOs, transparentHugePages } from '@tenferro/os';

/**
 * Fresh memory costs nothing (#38): storage of at least {@link HUGE_MIN_BYTES} is placed so that
 * its data starts on a 2 MiB boundary — a range transparent huge pages can back — and, where the
 * kernel's THP mode is `madvise`, advised `MADV_HUGEPAGE` through `@tenferro/os`. A first touch
 * then costs one fault per 2 MiB instead of one per 4 KiB page: on the 2-vCPU microVM of #38,
 * 8 MiB cost 20 ms of 4 KiB faults every time (freed pages go back to the host) and 0.3–0.4 ms
 * once the guest had huge pages to give. Where the mode is `never` (or THP is missing) nothing
 * changes; where it is `always` the placement alone lets the kernel use huge pages.
 *
 * Pre-faulting (`ops/prefault.ts`): fresh pooled storage an operation overwrites is touched by the
 * engine's workers in parallel inside the operation's admitted execution, before its kernel.
 *
 * Both have an off switch: `TENFERRO_HUGE_PAGES=0` (storage placed as before: 64-byte lines, no
 * advice) and `TENFERRO_PREFAULT=0`. Neither raises retained memory above the pool's cap (R113):
 * the padding that places the data is part of the buffer's capacity, which the cap counts, and
 * is never touched by tenferro (a page of it is resident only if the allocator reused memory).
 */

/** Data of at least this many bytes is placed on a huge-page boundary (one huge page). */
export const HUGE_MIN_BYTES = HUGE_PAGE_BYTES;

/** `TENFERRO_HUGE_PAGES=0` turns huge-page placement and advice off. */
export const HUGE_PAGES_ENV = 'TENFERRO_HUGE_PAGES';
/** `TENFERRO_PREFAULT=0` turns pre-faulting off. */
export const PREFAULT_ENV = 'TENFERRO_PREFAULT';

/** How tenferro places and touches large fresh storage in this process (`hugePagePolicy()`, `tenferro info`). */
export interface HugePagePolicy {
  /** The kernel's THP mode (`/sys/kernel/mm/transparent_hugepage/enabled`), `unsupported` without THP. */
  readonly thp: 'always' | 'madvise' | 'never' | 'unsupported';
  /** The kernel's THP defrag mode, `unsupported` without THP. */
  readonly defrag: string;
  /** Storage of 2 MiB or more starts its data on a 2 MiB boundary. */
  readonly placement: boolean;
  /** That range is advised `MADV_HUGEPAGE` (THP mode `madvise`). */
  readonly advice: boolean;
  /** Fresh pooled storage an operation overwrites is pre-faulted by the engine's workers (2+ thread backends). */
  readonly prefault: boolean;
  /** Why placement or advice is off, when it is (`TENFERRO_HUGE_PAGES=0`, no binding, THP `never`, …); empty when on. */
  readonly reason: string;
}

function switchedOff(env: NodeJS.ProcessEnv, name: string): boolean {
  const v = env[name]?.trim().toLowerCase();
  return v === '0' || v === 'false' || v === 'off' || v === 'no';
}

/**
 * The policy for `env` (default `process.env`) and the kernel's settings now. Operations use one
 * policy per process, decided at their first large allocation (`currentHugePagePolicy`).
 *
 * @example
 * ```ts
 * import { hugePagePolicy } from '@tenferro/core';
 *
 * const policy = hugePagePolicy();
 * console.log(policy); // e.g. { thp: 'madvise', defrag: 'madvise', placement: true, advice: true, prefault: true, reason: '' }
 * console.log(hugePagePolicy({ TENFERRO_HUGE_PAGES: '0' }).placement); // prints: false
 * ```
 */
export function hugePagePolicy(env: NodeJS.ProcessEnv = process.env): HugePagePolicy {
  const thp = transparentHugePages();
  const prefault = !switchedOff(env, PREFAULT_ENV);
  const off = (reason: string): HugePagePolicy => Object.freeze({ thp: thp.enabled, defrag: thp.defrag, placement: false, advice: false, prefault, reason });
  if (switchedOff(env, HUGE_PAGES_ENV)) return off(`${HUGE_PAGES_ENV}=0`);
  const os = loadOs();
  if (!os.available) return off(`the @tenferro/os binding is unavailable (${os.reason}): storage is placed as without huge pages`);
  if (thp.enabled === 'never') return off('transparent huge pages are off (never)');
  if (thp.enabled === 'unsupported') return off('the kernel has no transparent huge pages');
  if (thp.hugePageBytes !== HUGE_PAGE_BYTES) return off(`huge pages are ${thp.hugePageBytes} bytes, not 2 MiB`);
  if (thp.enabled === 'always') return Object.freeze({ thp: 'always', defrag: thp.defrag, placement: true, advice: false, prefault, reason: '' });
  const advisable = os.binding.adviseHugePages !== undefined;
  return Object.freeze({
    thp: thp.enabled,
    defrag: thp.defrag,
    placement: advisable,
    advice: advisable,
    prefault,
    reason: advisable ? '' : 'the @tenferro/os binding predates adviseHugePages (rebuild it)',
  });
}

let current: HugePagePolicy | undefined;

/** The process's policy, decided once (at the first large allocation). */
export function currentHugePagePolicy(): HugePagePolicy {
  return (current ??= hugePagePolicy());
}

/** Forget the decided policy (tests: the next large allocation decides again from `process.env`). @internal */
export function resetHugePagePolicy(): void {
  current = undefined;
}

/** Whether data of `bytes` is placed on a huge-page boundary. */
export function hugePlaced(bytes: number): boolean {
  return bytes >= HUGE_MIN_BYTES && currentHugePagePolicy().placement;
}

/** Advise the huge-page range of fresh storage: `bytes` of data from `skip` (a 2 MiB boundary when placed). No-op unless the policy advises. */
export function adviseFresh(buffer: SharedArrayBuffer, skip: number, bytes: number): void {
  if (bytes < HUGE_MIN_BYTES || !currentHugePagePolicy().advice) return;
  adviseHugePages(buffer, skip, bytes);
}
