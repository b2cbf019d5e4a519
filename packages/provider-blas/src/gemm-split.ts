/**
 * One planned BLAS call cut into parts for the lanes of the execution's worker pool, each part a
 * single-threaded call on a block of columns (or rows) of C.
 *
 * With two threads and no split, OpenBLAS runs its own helper thread inside one engine task; the
 * main thread polls that task yielding its CPU between checks (core polls a task of an execution
 * with more than one native thread as it polls a fan-out's lanes). Split over the pool, each lane
 * runs a 1-thread call and the main thread polls the lanes the same way.
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
 * Real multiply-adds (m·n·k, ×4 for complex, times the batch count) below which a call runs on
 * one BLAS thread whatever the budget: waking OpenBLAS's helper (and the main thread then waiting
 * for a task of two threads, yielding its CPU) costs more than the second thread saves (#38 item
 * 7). OpenBLAS itself runs a GEMM of at most 64³ multiply-adds on one thread, but tenferro's
 * per-call thread setting still asked for two and core still waited for two. Measured on a
 * 2-vCPU AMD EPYC (Zen, OpenBLAS 0.3.21, C calling `cblas_?gemm`, GFLOP/s 1 / 2 threads, quiet):
 * f64 n = 96 40.8 / 32.5, n = 112 41.5 / 32.0, n = 128 41.3 / 36.4–49.7; f32 n = 96 75.9 / 42.4,
 * n = 128 79.1 / 54.0–65.9 (docs/performance.md, "#38 item 7, small calls").
 */
export const MULTI_THREAD_MIN_WORK = 128 ** 3;

/**
 * Real multiply-adds (as for {@link MULTI_THREAD_MIN_WORK}) from which a large call is split over
 * the pool by default; below, down to {@link SPLIT_BAND_BELOW}, one task with the runtime's own
 * threads. Measured on a 2-vCPU Xeon (OpenBLAS 0.3.21 SkylakeX, 2 threads, `dotGeneralInto`,
 * median of 7 interleaved rounds ÷ C calling `cblas_?gemm` with 2 threads, two runs each, split /
 * one task): n = 512 f32 0.90 / 0.88, f64 0.89 / 0.93–0.94; n = 1024 f32 0.89–0.92 / 0.94–0.96,
 * f64 0.96–0.98 / 0.96–0.97; n = 2048 f32 0.99–1.02 / 0.98. OpenBLAS's own 2-thread split shares
 * its packed panels, two 1-thread calls on halves do not. In a fresh process (its first ~100
 * calls, while V8 still compiles the call path on the same CPUs) one task did better still at
 * n = 384–1024 (`fresh-memory.bench.mjs --only triple`, 2 threads, 9 rounds, `into` GFLOP/s one
 * task / split: n = 1024 f32 397 / 375, f64 200 / 176; n = 512 f64 160 / 92; n = 384 f64 108 /
 * 50): a lane woken for its half waited 1–4.5 ms for a CPU beside the compiler threads.
 */
export const SPLIT_MIN_WORK = 1536 ** 3;

/**
 * Real multiply-adds below which a call that uses more than one thread (from
 * {@link MULTI_THREAD_MIN_WORK}) is split over the pool by default: OpenBLAS's own helper inside
 * one task is a third busy thread beside the engine's worker and the main thread, and on two CPUs
 * it lost most at these sizes — a kernel of 0.1–0.3 ms pays its wake-up and its spin on every
 * call. Measured on a 2-vCPU Xeon (OpenBLAS 0.3.21 SkylakeX, 2 threads, `dotGeneralInto` after a
 * warm-up of 4 × the round, total time of 9 interleaved rounds ÷ C calling `cblas_?gemm` with 2
 * threads, one task / split): n = 256 f64 0.80 / 0.96, f32 0.63 / 0.97; n = 128 (5 rounds) f64
 * 0.70–0.79 / 0.82–0.88; n = 192 f64 0.84–0.91 / 0.98. The hot-path table (median per call)
 * agreed: n = 256, 2 threads, one task 0.62–0.93 of C, split 0.96–1.06. At n = 384 the split
 * gained less once warm (f64 0.85 / 0.89, f32 0.92 / 1.01) and lost 2× in a fresh process's first
 * calls (see {@link SPLIT_MIN_WORK}); at n = 256 it lost there too (a 150-call loop after 10:
 * f64 0.53 against 0.64–1.09 ms a call, one task / split), the price of the gain that follows.
 */
export const SPLIT_BAND_BELOW = 320 ** 3;

/**
 * Whether a call of `work` real multiply-adds that may use more than one thread is split over the
 * pool: from `splitMinWork` when the caller set it (`BlasProviderOptions.splitMinWork`), else in
 * the band [{@link MULTI_THREAD_MIN_WORK}, {@link SPLIT_BAND_BELOW}) and from {@link SPLIT_MIN_WORK}.
 */
export function splitsCall(work: number, splitMinWork: number | undefined): boolean {
  if (splitMinWork !== undefined) return work >= splitMinWork;
  return (work >= MULTI_THREAD_MIN_WORK && work < SPLIT_BAND_BELOW) || work >= SPLIT_MIN_WORK;
}

/** Real multiply-adds of the call `desc` describes (×4 for complex, times the batch count). */
export function callWork(desc: Float64Array): number {
  const rank = desc[Desc.BatchRank]!;
  let batches = 1;
  for (let t = 0; t < rank; t++) batches *= desc[Desc.Header + t]!;
  return desc[Desc.M]! * desc[Desc.N]! * desc[Desc.K]! * batches * (desc[Desc.DType]! >= 2 ? 4 : 1);
}

/**
 * The descriptors of the parts of `desc` for `lanes` lanes, each with one thread; `undefined`
 * when the call stays whole: one lane, a runtime whose thread count tenferro does not set
 * (threads 0), no work (K = 0), or nothing long enough to cut. Whether a call is worth splitting
 * at all is {@link splitsCall}'s question.
 */
export function splitCall(desc: Float64Array, lanes: number): Float64Array[] | undefined {
  if (lanes <= 1 || desc[Desc.Threads]! <= 0) return undefined;
  const m = desc[Desc.M]!;
  const n = desc[Desc.N]!;
  if (desc[Desc.K]! === 0) return undefined;
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
