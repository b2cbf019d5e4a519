/** Counters are handed out from slabs of this many 32-bit words, each word to one split only. */
const SLAB_WORDS = 1024;
let slab: SharedArrayBuffer | undefined;
let next = SLAB_WORDS;

/**
 * A fresh zeroed counter word for the lanes of one split to claim chunks through. Words are never
 * reused — a lane of an earlier split that is still unwinding cannot claim from a later one — and
 * come from shared slabs, so that each worker learns one buffer per 1,024 splits instead of one
 * per split (a new buffer costs an allocation and a message to every lane's worker).
 */
export function freshChunkCounter(): { readonly buffer: SharedArrayBuffer; readonly byteOffset: number } {
  if (next === SLAB_WORDS || slab === undefined) {
    slab = new SharedArrayBuffer(SLAB_WORDS * Int32Array.BYTES_PER_ELEMENT);
    next = 0;
  }
  return { buffer: slab, byteOffset: next++ * Int32Array.BYTES_PER_ELEMENT };
}
