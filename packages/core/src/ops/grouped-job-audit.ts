import { TenferroError } from '../errors/tenferro-error.js';

/**
 * R110's exactly-once audit of a provider-owned grouped GEMM: every word of the ledger (one per
 * job, added to by the provider when the job ran) must be exactly 1. A job never recorded, or
 * recorded twice, is `Scheduling` — the provider broke the grouped contract, and whatever it
 * returned is not trusted.
 */
export function auditGroupedLedger(ledger: Int32Array, op: string): void {
  for (let i = 0; i < ledger.length; i++) {
    const runs = Atomics.load(ledger, i);
    if (runs === 1) continue;
    const what = runs === 0 ? 'never ran' : `ran ${runs} times`;
    throw new TenferroError('Scheduling', `grouped GEMM job ${i} ${what} (every job must run exactly once)`, { op, detail: { job: i, runs } });
  }
}
