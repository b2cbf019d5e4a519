import { loadOs } from '@tenferro/os';

/**
 * An execution owner: a process-unique positive integer — unique across every worker_thread
 * isolate when the `@tenferro/os` binding is loaded (each isolate reserves blocks of ids from the
 * binding's process-wide 64-bit counter), else unique within the isolate. Owners stay below
 * 2^53 (a million executions a second for 285 years); engines, whose shared records hold 32-bit
 * words, store their `ownerSlot`s instead.
 */
export type ExecutionOwner = number;

/** How many owner ids an isolate reserves from the process-wide counter at a time. */
const OWNER_BLOCK = 1024;

let next = 1;
let end = 1;
/** Undefined until first use; then whether blocks come from the os binding. */
let processWide: boolean | undefined;

function reserve(floor: number): void {
  processWide ??= loadOs().available;
  if (processWide) {
    const os = loadOs();
    const first = os.available ? os.binding.arbiterReserveOwners(OWNER_BLOCK, floor) : 0;
    if (first > 0) {
      next = first;
      end = first + OWNER_BLOCK;
      return;
    }
    processWide = false; // refused by another copy of the addon: owners are unique in this isolate only
  }
  next = Math.max(next, floor);
  end = Number.MAX_SAFE_INTEGER;
}

/**
 * A fresh process-unique execution owner id.
 *
 * @example
 * ```ts
 * import { newExecutionOwner } from '@tenferro/core';
 *
 * const a = newExecutionOwner();
 * const b = newExecutionOwner();
 * console.log(a > 0 && b > 0 && a !== b); // prints: true
 * ```
 */
export function newExecutionOwner(): ExecutionOwner {
  if (next >= end) reserve(next);
  return next++;
}

/** Tests only (not exported by the package): continue counting owners after `last`. */
export function continueOwnersAfter(last: number): void {
  next = last + 1;
  end = next;
  reserve(next);
}

/**
 * The non-zero 31-bit word an engine's shared record stores for `owner`. Two owners share a
 * slot only 2^31 − 1 owners apart, and two such executions are never active on one engine
 * together: the arbiter, which compares whole owners, keeps their permits apart, and the
 * caller-managed guard admits one claim at a time.
 */
export function ownerSlot(owner: ExecutionOwner): number {
  return ((owner - 1) % 0x7fffffff) + 1;
}
