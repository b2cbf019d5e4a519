import type { GemmJob } from '../contraction/validate-grouped-gemm.js';
import { DTYPE_INFO, type Scalar } from '../tensor/dtype.js';
import { naiveDotGeneral } from './naive-dot-general.js';

/**
 * What a grouped GEMM job must leave in its output: `alpha · op(lhs) · op(rhs) + beta · before`,
 * in the order of `out.toArray()` (complex interleaved), from the output's values `before` the call.
 */
export function expectedGroupedJob(job: GemmJob, before: readonly number[]): number[] {
  const prod = naiveDotGeneral(job.lhs, job.rhs, { contracting: [[1], [0]] }, { conjLhs: job.conjLhs === true, conjRhs: job.conjRhs === true }).values;
  const complex = DTYPE_INFO[job.out.dtype].complex;
  const [ar, ai] = pair(job.alpha ?? 1);
  const [br, bi] = pair(job.beta ?? 0);
  if (!complex) return prod.map((p, e) => ar * p + (br === 0 ? 0 : br * before[e]!));
  const out: number[] = [];
  for (let e = 0; e < prod.length; e += 2) {
    const [pr, pi] = [prod[e]!, prod[e + 1]!];
    const [or, oi] = br === 0 && bi === 0 ? [0, 0] : [before[e]!, before[e + 1]!];
    out.push(ar * pr - ai * pi + br * or - bi * oi, ar * pi + ai * pr + br * oi + bi * or);
  }
  return out;
}

function pair(s: Scalar): [number, number] {
  return typeof s === 'number' ? [s, 0] : [s[0], s[1]];
}
