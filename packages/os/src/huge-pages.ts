/**
 * Transparent huge pages (#38): the kernel's mode, read from sysfs, and `madvise(MADV_HUGEPAGE)`
 * on the 2 MiB-aligned part of a SharedArrayBuffer's memory through the addon.
 *
 * A first touch of fresh memory costs a page fault per 4 KiB page; on a microVM whose host backs
 * guest memory lazily that is ~10 µs a page (20 ms for 8 MiB, every time: freed pages go back to
 * the host). A 2 MiB huge page is one fault, and pages the guest kernel kept come back at once.
 */
import { readFileSync } from 'node:fs';
import { types } from 'node:util';
import { loadOs } from './load.js';
import { OsError, describeValue } from './os-error.js';

/** Where the kernel publishes its transparent-huge-page settings. */
export const THP_SYSFS = '/sys/kernel/mm/transparent_hugepage';

/** The size of a transparent huge page on x86-64 (and arm64 with 4 KiB pages): what `adviseHugePages` aligns to. */
export const HUGE_PAGE_BYTES = 2 * 1024 * 1024;

/** The kernel's transparent-huge-page settings (`/sys/kernel/mm/transparent_hugepage/`). */
export interface TransparentHugePages {
  /**
   * `enabled`: `always` (every large enough anonymous mapping), `madvise` (ranges advised with
   * `MADV_HUGEPAGE` only), `never`; `unsupported` when the file is missing (a kernel without THP,
   * another platform) or unreadable.
   */
  readonly enabled: 'always' | 'madvise' | 'never' | 'unsupported';
  /** `defrag`: how hard a fault works for a huge page (`always`, `defer`, `defer+madvise`, `madvise`, `never`), or `unsupported`. */
  readonly defrag: string;
  /** `hpage_pmd_size`: the bytes of one huge page (2 MiB on x86-64), or 0 when unknown. */
  readonly hugePageBytes: number;
}

/** The bracketed choice of a sysfs setting (`always [madvise] never` → `madvise`), or undefined. */
function selected(path: string): string | undefined {
  try {
    return /\[([^\]]+)\]/.exec(readFileSync(path, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * The kernel's transparent-huge-page settings, read now (they can change at run time); `root`
 * is for tests (a directory laid out like the sysfs one). Never throws.
 *
 * @example
 * ```ts
 * import { transparentHugePages } from '@tenferro/os';
 *
 * const thp = transparentHugePages();
 * console.log(thp); // e.g. { enabled: 'madvise', defrag: 'madvise', hugePageBytes: 2097152 }
 * ```
 */
export function transparentHugePages(root: string = THP_SYSFS): TransparentHugePages {
  const enabled = selected(`${root}/enabled`);
  const defrag = selected(`${root}/defrag`);
  let hugePageBytes = 0;
  try {
    const n = Number(readFileSync(`${root}/hpage_pmd_size`, 'utf8').trim());
    if (Number.isSafeInteger(n) && n > 0) hugePageBytes = n;
  } catch {
    // unknown
  }
  return Object.freeze({
    enabled: enabled === 'always' || enabled === 'madvise' || enabled === 'never' ? enabled : 'unsupported',
    defrag: defrag ?? 'unsupported',
    hugePageBytes,
  });
}

/**
 * `madvise(MADV_HUGEPAGE)` on the 2 MiB-aligned part of `byteLength` bytes of `buffer` from
 * `byteOffset`: from the first 2 MiB boundary at or after the start to the last at or before the
 * end — nothing outside the range is advised. Answers the bytes advised (0 when the range spans
 * no whole huge page), a negative errno when the kernel refused, or `undefined` when the addon is
 * unavailable (or was built before this call existed). Advice is a hint: where the kernel's mode
 * is `never` it changes nothing; where it is `always` it is not needed.
 *
 * Throws `InvalidArgument` for anything but a real SharedArrayBuffer and a range inside it.
 *
 * @example
 * ```ts
 * import { adviseHugePages } from '@tenferro/os';
 *
 * const buffer = new SharedArrayBuffer(6 << 20);
 * const advised = adviseHugePages(buffer, 0, buffer.byteLength);
 * console.log(advised === undefined || advised < 0 || advised % (2 << 20) === 0); // prints: true
 * ```
 */
export function adviseHugePages(buffer: SharedArrayBuffer, byteOffset: number, byteLength: number): number | undefined {
  const op = 'adviseHugePages';
  if (!types.isSharedArrayBuffer(buffer)) {
    throw new OsError('InvalidArgument', op, `expected a SharedArrayBuffer for buffer but received ${describeValue(buffer)}`, { detail: { param: 'buffer' } });
  }
  if (!Number.isSafeInteger(byteOffset) || byteOffset < 0 || !Number.isSafeInteger(byteLength) || byteLength < 0 || byteOffset + byteLength > buffer.byteLength) {
    throw new OsError('InvalidArgument', op, `expected a byte range inside the buffer's ${buffer.byteLength} bytes but received [${describeValue(byteOffset)}, +${describeValue(byteLength)})`, {
      detail: { param: 'byteOffset', byteOffset, byteLength },
    });
  }
  const status = loadOs();
  if (!status.available || status.binding.adviseHugePages === undefined) return undefined;
  if (byteLength === 0) return 0;
  const advise = status.binding.adviseHugePages;
  if (byteLength <= ADVICE_CHUNK_BYTES) return advise(new Uint8Array(buffer, byteOffset, byteLength));
  // A typed array cannot view more than V8's maximum length (a RangeError for an 8 GiB buffer):
  // advise in chunks whose inner boundaries fall on 2 MiB boundaries of the address space, so the
  // whole huge pages inside the chunks are exactly those inside the range.
  const range = status.binding.typedArrayRange(new Uint8Array(buffer, byteOffset, 1));
  if (range === null) return undefined;
  const misalignment = Number(range.address % BigInt(HUGE_PAGE_BYTES));
  const end = byteOffset + byteLength;
  let at = byteOffset;
  let next = byteOffset + (misalignment === 0 ? 0 : HUGE_PAGE_BYTES - misalignment) + ADVICE_CHUNK_BYTES;
  let advised = 0;
  while (at < end) {
    const stop = Math.min(next, end);
    const r = advise(new Uint8Array(buffer, at, stop - at));
    if (r < 0) return r;
    advised += r;
    at = stop;
    next += ADVICE_CHUNK_BYTES;
  }
  return advised;
}

/** The largest range advised through one typed-array view (a whole number of huge pages). */
const ADVICE_CHUNK_BYTES = 512 * HUGE_PAGE_BYTES;
