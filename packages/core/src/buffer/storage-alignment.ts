import { bufferAddress } from '../util/buffer-address.js';
import { HUGE_PAGE_BYTES } from '@tenferro/os';
import { adviseFresh, hugePlaced } from './huge-pages.js';
import { allocateShared } from '../util/allocate-shared.js';

/**
 * Storage that tenferro allocates starts its data on a 64-byte cache line, as BLAS libraries and
 * C programs (`aligned_alloc(64, …)`) have it: a `SharedArrayBuffer`'s memory starts 16 bytes past
 * a line (glibc's chunk header), and every row of a kernel's vector loads then straddles two lines.
 * Measured on this project's 2-vCPU AVX-512 machine, 64×64 `dotGeneralInto` on a 1-thread faer
 * backend: f64 12.9 → 12.1 µs, f32 9.9 → 9.5 µs; the native kernel alone is 10 % (faer) to 18 %
 * (OpenBLAS) slower on such operands.
 */
export const STORAGE_ALIGNMENT = 64;

/** Allocations below this many bytes are not padded: they span a line or two either way. */
export const ALIGN_MIN_BYTES = 256;

/**
 * Padding an aligned allocation gets: the memory of a `SharedArrayBuffer` is at least 16-byte
 * aligned (malloc's guarantee on x86-64 and arm64), so its first line starts at most 48 bytes in.
 */
export const ALIGN_PAD = STORAGE_ALIGNMENT - 16;

/**
 * The byte length to allocate for `bytes` of data that should start on a line — or, from 2 MiB
 * on where huge pages are placed (`huge-pages.ts`, #38), on a 2 MiB boundary: a buffer's memory
 * is only 16-byte aligned, so the data may start up to 2 MiB - 16 bytes in. The padding is
 * address space, not memory: nothing touches it.
 */
export function paddedBytes(bytes: number): number {
  if (bytes < ALIGN_MIN_BYTES) return bytes;
  return hugePlaced(bytes) ? bytes + HUGE_PAGE_BYTES : bytes + ALIGN_PAD;
}

/**
 * Bytes from `start` (the start of the block of `buffer` the storage holds, up to `end`) to where
 * `bytes` of data of `elementBytes`-byte elements should start: the first 64-byte line when the
 * data fits after it and the skip is a whole number of elements, else 0 (also without the OS
 * binding, which tells the address, and for data below {@link ALIGN_MIN_BYTES}). Always a valid
 * start: `start + skip + bytes ≤ end` when `bytes ≤ end - start`.
 */
export function alignmentSkip(buffer: SharedArrayBuffer, bytes: number, elementBytes: number, start = 0, end = buffer.byteLength): number {
  if (bytes < ALIGN_MIN_BYTES) return 0;
  const base = bufferAddress(buffer);
  if (base === undefined) return 0;
  const address = base + start;
  const room = end - start;
  if (hugePlaced(bytes)) {
    // The first 2 MiB boundary when the data fits after it (a buffer allocated for it does).
    const huge = (HUGE_PAGE_BYTES - (address % HUGE_PAGE_BYTES)) % HUGE_PAGE_BYTES;
    if (huge % elementBytes === 0 && huge + bytes <= room) return huge;
  }
  const skip = (STORAGE_ALIGNMENT - (address % STORAGE_ALIGNMENT)) % STORAGE_ALIGNMENT;
  return skip % elementBytes === 0 && skip + bytes <= room ? skip : 0;
}

/**
 * Fresh zeroed storage for `bytes` of data of `elementBytes`-byte elements: the buffer (padded by
 * {@link paddedBytes}) and the byte offset where the data starts ({@link alignmentSkip}); the
 * data's huge-page range advised where the policy says so (#38).
 * `IntegerOverflow`/`AllocationFailed` as {@link allocateShared}.
 */
export function allocateStorage(bytes: number, elementBytes: number, op: string): { buffer: SharedArrayBuffer; skip: number } {
  const buffer = allocateShared(Number.isSafeInteger(bytes) ? paddedBytes(bytes) : bytes, op);
  const skip = alignmentSkip(buffer, bytes, elementBytes);
  adviseFresh(buffer, skip, bytes);
  return { buffer, skip };
}
