import type { DType } from '../tensor/dtype.js';
import type { CpuGemmRequest } from './gemm-request.js';

/**
 * A grouped GEMM handed to a provider in one call (R110's provider-owned path): independent,
 * unbatched GEMM jobs of one dtype whose outputs core validated to be pairwise disjoint and to
 * overlap no input, so jobs may run in any order and concurrently.
 *
 * The provider runs every job exactly once and records it in `ledger`: after job `i` has written
 * its output, it adds 1 to `ledger[i]` (`Atomics.add(ledger, i, 1)`, from the main isolate, a
 * worker or native code — the ledger is an `Int32Array` over a `SharedArrayBuffer`, so pass
 * `ledger.buffer` in a kernel payload). Core audits the ledger when the call returns executed: a
 * word that is 0 (a job skipped) or above 1 (a job run twice) is a `Scheduling` error. A decline
 * (`Unsupported`) must come before any job ran, and is terminal.
 */
export interface CpuGroupedGemmRequest {
  readonly dtype: DType;
  /** The jobs, each an unbatched request (`batch: []`) with every reachable element inside its buffer. */
  readonly jobs: readonly CpuGemmRequest[];
  /** One word per job, all 0 when the call starts; see the interface comment. */
  readonly ledger: Int32Array;
}
