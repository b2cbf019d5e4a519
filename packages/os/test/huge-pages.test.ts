// transparentHugePages and adviseHugePages (#38): the sysfs mode read as the kernel writes it, and
// MADV_HUGEPAGE applied to exactly the 2 MiB-aligned part of a range — nothing outside it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HUGE_PAGE_BYTES, OsError, adviseHugePages, loadOs, sharedMemoryRange, transparentHugePages } from '../src/index.js';

const MiB = 1024 * 1024;
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** A directory laid out like /sys/kernel/mm/transparent_hugepage with these files. */
function fakeSysfs(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'tenferro-thp-'));
  roots.push(root);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  return root;
}

/** The smaps fields of the mapping holding `address`. */
function smapsAt(address: bigint): { lo: bigint; hi: bigint; thpEligible: string | undefined } {
  for (const block of readFileSync('/proc/self/smaps', 'utf8').split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)) {
    const [lo, hi] = block.slice(0, block.indexOf(' ')).split('-').map((h) => BigInt(`0x${h}`)) as [bigint, bigint];
    if (address >= lo && address < hi) return { lo, hi, thpEligible: /^THPeligible:\s*(\d)/m.exec(block)?.[1] };
  }
  throw new Error(`no mapping holds 0x${address.toString(16)}`);
}

describe('transparentHugePages', () => {
  it('reads the bracketed choice of each setting and the huge-page size', () => {
    const root = fakeSysfs({ enabled: 'always [madvise] never\n', defrag: 'always defer [defer+madvise] madvise never\n', hpage_pmd_size: '2097152\n' });
    expect(transparentHugePages(root)).toEqual({ enabled: 'madvise', defrag: 'defer+madvise', hugePageBytes: 2 * MiB });
    const never = fakeSysfs({ enabled: 'always madvise [never]\n', defrag: '[never]\n' });
    expect(transparentHugePages(never)).toEqual({ enabled: 'never', defrag: 'never', hugePageBytes: 0 });
  });

  it('answers unsupported where the files are missing or say nothing it knows', () => {
    expect(transparentHugePages(join(tmpdir(), 'tenferro-thp-missing-directory'))).toEqual({ enabled: 'unsupported', defrag: 'unsupported', hugePageBytes: 0 });
    expect(transparentHugePages(fakeSysfs({ enabled: 'always madvise never\n', hpage_pmd_size: 'x' })).enabled).toBe('unsupported');
  });

  it('on this machine: one of the modes, as /sys says', () => {
    const thp = transparentHugePages();
    let expected = 'unsupported';
    try {
      expected = /\[([^\]]+)\]/.exec(readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'))![1]!;
    } catch {
      // no THP
    }
    expect(thp.enabled).toBe(expected);
  });
});

describe('adviseHugePages', () => {
  it('refuses anything but a SharedArrayBuffer and a range inside it, with InvalidArgument', () => {
    const buffer = new SharedArrayBuffer(4096);
    for (const bad of [() => adviseHugePages(new ArrayBuffer(8) as never, 0, 8), () => adviseHugePages(buffer, -1, 8), () => adviseHugePages(buffer, 0, 4097), () => adviseHugePages(buffer, 4000, 97), () => adviseHugePages(buffer, 0.5, 8)]) {
      let error: unknown;
      try {
        bad();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(OsError);
      expect((error as OsError).code).toBe('InvalidArgument');
    }
  });

  const thp = transparentHugePages();
  const usable = loadOs().available && thp.enabled !== 'unsupported';
  it.skipIf(!usable)(usable ? `advises exactly the whole huge pages inside the range (THP ${thp.enabled})` : 'advises the whole huge pages inside the range (skipped: no THP or no addon)', () => {
    const buffer = new SharedArrayBuffer(9 * MiB);
    const address = sharedMemoryRange(buffer).address;
    const firstBoundary = (HUGE_PAGE_BYTES - Number(address % BigInt(HUGE_PAGE_BYTES))) % HUGE_PAGE_BYTES;
    // A range from 1 byte after a boundary to 1 byte past the boundary 6 MiB later: the 4 MiB of whole huge pages between are advised.
    const start = firstBoundary + 1;
    const length = 6 * MiB;
    expect(start + length).toBeLessThanOrEqual(buffer.byteLength);
    const advised = adviseHugePages(buffer, start, length);
    if (thp.enabled === 'never' && advised !== undefined && advised < 0) return; // a kernel may refuse where THP is off
    expect(advised).toBe(4 * MiB);
    const lo = address + BigInt(firstBoundary + 2 * MiB);
    const vma = smapsAt(lo);
    expect(vma.lo).toBe(lo); // the advised mapping starts at the first whole huge page inside the range…
    expect(vma.hi).toBe(lo + BigInt(4 * MiB)); // …and ends at the last one
    if (thp.enabled !== 'never') expect(vma.thpEligible).toBe('1');
    // Nothing of a range without a whole huge page is advised.
    expect(adviseHugePages(buffer, firstBoundary + 1, 2 * MiB)).toBe(0);
    expect(adviseHugePages(buffer, 0, 0)).toBe(0);
  });

  it.skipIf(!usable)(usable ? 'advises a range past what one typed array can view (5 GiB, untouched) in chunks: exactly its whole huge pages, no RangeError (found by the bad-input fuzz)' : 'advises a range past one typed array in chunks (skipped: no THP or no addon)', () => {
    const buffer = new SharedArrayBuffer(5 * 1024 * MiB + 3 * MiB);
    const address = sharedMemoryRange(buffer).address;
    const firstBoundary = (HUGE_PAGE_BYTES - Number(address % BigInt(HUGE_PAGE_BYTES))) % HUGE_PAGE_BYTES;
    const start = firstBoundary + 1;
    const length = buffer.byteLength - start;
    // From 1 byte past a boundary to the end: every whole huge page after the next boundary.
    const whole = Math.floor((length - (HUGE_PAGE_BYTES - 1)) / HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES;
    const advised = adviseHugePages(buffer, start, length);
    if (thp.enabled === 'never' && advised !== undefined && advised < 0) return;
    expect(advised).toBe(whole);
  });
});
