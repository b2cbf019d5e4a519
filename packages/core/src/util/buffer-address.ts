import { loadOs, sharedMemoryRange } from '@tenferro/os';

const addresses = new WeakMap<SharedArrayBuffer, number>();

/**
 * The address of `buffer`'s memory in this process, or `undefined` without the OS binding. Two
 * distinct `SharedArrayBuffer` objects can share one backing store (one that went through
 * `postMessage` and back), which object identity cannot tell; their addresses can. A backing
 * store never moves, so the answer is cached per object. As a number: user-space addresses on
 * x86-64 and arm64 are below 2^48, so an address plus a byte offset into a buffer stays an exact
 * integer, and comparisons need no BigInt arithmetic (each BigInt operation allocates).
 */
export function bufferAddress(buffer: SharedArrayBuffer): number | undefined {
  let address = addresses.get(buffer);
  if (address === undefined) {
    if (!loadOs().available) return undefined;
    address = Number(sharedMemoryRange(buffer).address);
    addresses.set(buffer, address);
  }
  return address;
}
