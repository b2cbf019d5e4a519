/**
 * One planned BLAS call cut into parts for the lanes of the execution's worker pool, each part a
 * single-threaded call on a block of columns (or rows) of C.
 *
 * With two threads, OpenBLAS runs its own helper thread inside one engine task, and the main
 * thread polls that task: three busy threads on two CPUs, and the helper is the one that waits.
 * Measured on a 2-vCPU Xeon (OpenBLAS 0.3.21 SkylakeX, `dotGeneralInto`, median ÷ C calling
 * `cblas_?gemm` with 2 threads): 0.75–0.79 at n = 256, 0.51–0.91 at n = 512 from run to run.
 * Split over the pool, each lane runs a 1-thread call and the main thread polls the lanes as it
 * does any fan-out, yielding its CPU between checks (core's `pollAmongLanes`).
 *
 * The descriptor is column-major (`planGemm`): C is M×N with leading dimension ldc, op(A) M×K,
 * op(B) K×N. Columns [n0, n1) of C need columns [n0, n1) of op(B) and all of op(A); rows
 * [m0, m1) need rows [m0, m1) of op(A) and all of op(B). The longer of M and N is cut, into
 * parts of a multiple of {@link SPLIT_QUANTUM} (the last takes the rest).
 */
import { kernelWords } from '@tenferro/core';
import { Desc, Trans } from './native/binding.js';

/** Parts are whole multiples of this many rows or columns (a register tile of the BLAS kernels). */
export const SPLIT_QUANTUM = 16;

/**
 * Real multiply-adds (m·n·k, ×4 for complex, times the batch count) from which a call is split
 * over the pool; below, one task with the runtime's own threads. Measured as above, split: n =
 * 512 ran 0.86–0.98 in the median of every run (single rounds down to 0.42); n = 384 no better than one task; n = 256 worse (0.42–0.95
 * from round to round against 0.75–0.79): OpenBLAS's own 2-thread split of a small product
 * shares its packed panels, two 1-thread calls on halves do not.
 */
export const SPLIT_MIN_WORK = 400 ** 3;

/**
 * The descriptors of the parts of `desc` for `lanes` lanes, each with one thread; `undefined`
 * when the call stays whole: one lane, a runtime whose thread count tenferro does not set
 * (threads 0), too little work (`minWork`), or nothing long enough to cut.
 */
export function splitCall(desc: Float64Array, lanes: number, minWork = SPLIT_MIN_WORK): Float64Array[] | undefined {
  if (lanes <= 1 || desc[Desc.Threads]! <= 0) return undefined;
  const m = desc[Desc.M]!;
  const n = desc[Desc.N]!;
  const k = desc[Desc.K]!;
  const complex = desc[Desc.DType]! >= 2;
  const rank = desc[Desc.BatchRank]!;
  let batches = 1;
  for (let t = 0; t < rank; t++) batches *= desc[Desc.Header + t]!;
  if (k === 0 || m * n * k * batches * (complex ? 4 : 1) < minWork) return undefined;
  const byColumns = n >= m;
  const extent = byColumns ? n : m;
  const parts = Math.min(lanes, Math.floor(extent / SPLIT_QUANTUM));
  if (parts <= 1) return undefined;
  const size = Math.ceil(extent / parts / SPLIT_QUANTUM) * SPLIT_QUANTUM;
  const out: Float64Array[] = [];
  for (let lo = 0; lo < extent; lo += size) {
    const hi = Math.min(extent, lo + size);
    const part = kernelWords(desc.length);
    part.set(desc);
    part[Desc.Threads] = 1;
    if (byColumns) {
      part[Desc.N] = hi - lo;
      // Column j of op(B): column j of B (no transpose) or row j of B (transposed).
      const transB = desc[Desc.TransB]!;
      part[Desc.OffB] = desc[Desc.OffB]! + lo * (transB === Trans.No || transB === Trans.ConjNo ? desc[Desc.Ldb]! : 1);
      part[Desc.OffC] = desc[Desc.OffC]! + lo * desc[Desc.Ldc]!;
    } else {
      part[Desc.M] = hi - lo;
      // Row i of op(A): row i of A (no transpose) or column i of A (transposed).
      const transA = desc[Desc.TransA]!;
      part[Desc.OffA] = desc[Desc.OffA]! + lo * (transA === Trans.No || transA === Trans.ConjNo ? 1 : desc[Desc.Lda]!);
      part[Desc.OffC] = desc[Desc.OffC]! + lo;
    }
    out.push(part);
  }
  return out;
}
