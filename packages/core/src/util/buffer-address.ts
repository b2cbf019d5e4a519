import { loadOs, sharedMemoryRange } from '@tenferro/os';

const addresses = new WeakMap<SharedArrayBuffer, bigint>();

/**
 * The address of `buffer`'s memory in this process, or `undefined` without the OS binding. Two
 * distinct `SharedArrayBuffer` objects can share one backing store (one that went through
 * `postMessage` and back), which object identity cannot tell; their addresses can. A backing
 * store never moves, so the answer is cached per object.
 */
export function bufferAddress(buffer: SharedArrayBuffer): bigint | undefined {
  let address = addresses.get(buffer);
  if (address === undefined) {
    if (!loadOs().available) return undefined;
    address = sharedMemoryRange(buffer).address;
    addresses.set(buffer, address);
  }
  return address;
}
