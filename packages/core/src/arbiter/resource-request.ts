import type { CpuSet } from '../topology/cpu-set.js';

/** What an execution asks the arbiter for: a CPU set, or exclusion of every other execution. */
export type ResourceRequest = { readonly cpus: CpuSet } | { readonly providerExclusive: true };

/**
 * Two requests conflict iff either is provider-exclusive or their CPU sets overlap (R27, R28).
 *
 * @example
 * ```ts
 * import { CpuSet, requestsConflict } from '@tenferro/core';
 *
 * const low = { cpus: CpuSet.parse('0-1') };
 * console.log(requestsConflict(low, { cpus: CpuSet.parse('1-2') })); // prints: true
 * console.log(requestsConflict(low, { cpus: CpuSet.parse('2-3') })); // prints: false
 * console.log(requestsConflict(low, { providerExclusive: true })); // prints: true
 * ```
 */
export function requestsConflict(a: ResourceRequest, b: ResourceRequest): boolean {
  if ('providerExclusive' in a || 'providerExclusive' in b) return true;
  return a.cpus.overlaps(b.cpus);
}

export function describeRequest(r: ResourceRequest): string {
  return 'providerExclusive' in r ? 'provider-exclusive' : `cpus ${r.cpus.toString()}`;
}
