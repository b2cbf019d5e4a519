import { TenferroError } from '@tenferro/core';
import type { FaerIsa } from './native/binding.js';

/** Options of {@link createFaerProvider}. */
export interface FaerProviderOptions {
  /**
   * The ISA path: `'auto'` (default: the best this CPU supports — AVX-512F, AVX2+FMA or
   * portable) or a specific one (it must be supported here; lower paths are for tests/profiling).
   */
  readonly isa?: 'auto' | FaerIsa;
  /**
   * Minimum work (real multiply-adds: m·n·k summed over batches, ×4 for c64/c128) before an
   * Inner-mode GEMM is split over the worker pool; smaller ones run as one task. Default: per ISA
   * path and dtype, `defaultParallelMinWork` (200³ on the AVX-512 path).
   */
  readonly parallelMinWork?: number;
}

/**
 * The AVX2 and portable paths' base: the time of one task as 300³ f64 multiply-adds on AVX-512,
 * measured on a Zen 3 (avx2) before the fan-out poll below, and not measured again since.
 */
const NARROW_PATH_MIN_WORK = 300 * 300 * 300;

/**
 * Real multiply-adds below which a GEMM runs as a single task on the AVX-512 path (f32 and f64).
 * A split costs a second task round trip and the second lane's wake-up, and each part re-packs the
 * shared operand, while the unpacked small-matrix kernel runs everything up to 256³ in one task at
 * full speed. Measured on 2 threads of a 2-vCPU KVM guest (Intel, AVX-512; bench/split.mjs,
 * median÷OpenBLAS, once a fan-out's main thread polled instead of sleeping): split against one
 * task, n = 224 f64 0.91 against 0.71 and f32 1.13 against 0.77, n = 256 f64 0.85–0.97 against
 * 0.66–0.70 and f32 0.84–0.92 against 0.66–0.70; at n = 192 and below the split measured
 * 0.54–0.83 against 0.66–0.87 (not better), so those stay one task. (When the main thread slept
 * through a fan-out, the split paid only above 256³, and this was 300³.) It applies to splits whose
 * lanes claim chunks (`DYNAMIC_SPLIT_MAX_WORK`); a split into fixed parts waits for its latest lane
 * and starts at `fixedSplitMinWork`.
 */
export const DEFAULT_PARALLEL_MIN_WORK = 200 * 200 * 200;

/**
 * The default minimum work of a split into fixed parts (a summed request, batch ranges, or above
 * `DYNAMIC_SPLIT_MAX_WORK`) on path `isaId`: at least 300³ on AVX-512. Every part waits for the
 * latest lane, and a lane that starts late (a wake-up, or both lanes queued on one CPU: workers are
 * confined to the whole domain set, R21) holds up the call: issue 14's d = 64 contraction
 * (64⁴ multiply-adds, a summed request) split into two fixed parts ran 0.41–0.44 ms at best but
 * 0.83–0.86 ms in the median, against 0.54 / 0.60 ms on one lane.
 */
export function fixedSplitMinWork(isaId: number, componentBytes: 4 | 8): number {
  if (isaId === 2) return NARROW_PATH_MIN_WORK;
  if (isaId === 1) return NARROW_PATH_MIN_WORK / 2;
  return defaultParallelMinWork(isaId, componentBytes);
}

/**
 * The AVX2 path's dynamic split threshold: 150³. On the 2-vCPU AMD EPYC guest (AVX2, Linux 6.18)
 * `bench/split.mjs 5 96,128,160,192,224 2 split,seq` (2026-12-05, medians ÷ OpenBLAS on 2 threads)
 * measured split against one task: n = 160 f32 1.16 / 1.01, f64 1.23 / 0.88; n = 192 f32
 * 1.13 / 0.90, f64 1.30 / 0.81; n = 224 f32 1.28 / 0.84, f64 1.48 / 0.88 — and at n = 128 f32
 * 0.83 / 0.90, f64 0.85 / 0.83, n = 96 0.53–0.71 / 0.94–1.02. So from 150³ the call splits.
 */
const AVX2_MIN_WORK = 150 * 150 * 150;

/**
 * The default `parallelMinWork` of ISA path `isaId` (0 portable, 1 avx2, 2 avx512f) for a dtype
 * whose real component takes `componentBytes`. AVX-512: `DEFAULT_PARALLEL_MIN_WORK`. AVX2:
 * `AVX2_MIN_WORK` (150³) for f32 and f64 alike; until 2026-12-05 half of 300³ (238³), from the
 * measurements that follow. On a Zen 3 (avx2) f64 n = 256 on 2 threads ran 0.64 of
 * OpenBLAS split against 0.49 as one task and f32 n = 256 0.60 against 0.63 (bench/split.mjs, best),
 * so f32 once split only from 300³; on the 2-vCPU AMD EPYC guest of #38 (avx2, a lane wakes
 * sooner) f32 n = 256 split ran 150 GFLOP/s against 89 as one task (1.05 against 0.65 of OpenBLAS,
 * medians), n = 192 122 against 86, and f64 n = 192 72 against 44 — one task left faer's 2-thread
 * f32 n = 256 at 0.6 of onnxruntime-node there. The portable path: the same time of one task,
 * scaled by the vector's lanes of that component (never above 300³).
 */
export function defaultParallelMinWork(isaId: number, componentBytes: 4 | 8): number {
  if (isaId === 2) return DEFAULT_PARALLEL_MIN_WORK;
  if (isaId === 1) return AVX2_MIN_WORK;
  return NARROW_PATH_MIN_WORK * Math.min(1, (8 / 64) * (8 / componentBytes));
}

/**
 * Per-GEMM m·n·k below which a batched GEMM is split over batches (each task runs whole GEMMs)
 * rather than over the rows/columns of every GEMM.
 */
export const BATCH_SPLIT_MAX_WORK = 256 * 256 * 256;

/**
 * Real multiply-adds (m·n·k·batches, ×4 complex) up to which a split GEMM shares its rows or
 * columns between the lanes in dynamic chunks (`CHUNKS_PER_LANE` per lane, claimed through a
 * shared counter) instead of one fixed part per lane: at these sizes a lane that wakes late (an
 * idle pool lane sleeps; its wake-up is tens to hundreds of µs) would otherwise finish its fixed
 * part that much after the others. Each chunk runs unpacked (the small-matrix kernel, up to 256³
 * per chunk), so chunking repacks nothing; above this the parts are fixed (each packs its
 * operands once).
 */
export const DYNAMIC_SPLIT_MAX_WORK = 2 * 256 * 256 * 256;

/**
 * Chunks per lane of a dynamic split: one, so that a lane that starts late finds its part already
 * taken by a lane that is done, instead of the call waiting for it. Smaller chunks balanced no
 * better on a 2-vCPU KVM guest (Intel, AVX-512; bench/split.mjs 4 224,256,288,320 2, five
 * alternating runs, mean of the medians ÷ OpenBLAS over the eight f32/f64 cells): 1 chunk per
 * lane 0.88, 2 chunks 0.85, 4 chunks 0.78; best-of 1.05, 1.06 and 0.95 — 1 was ahead in 7 of 8
 * cells (n = 256 f32 0.77 against 0.63, f64 0.80 against 0.78), behind only at n = 224 f64 (0.71
 * against 0.75).
 */
export const CHUNKS_PER_LANE = 1;

/** {@link FaerProviderOptions} checked, with the defaults filled in (`parallelMinWork` stays unset for the per-ISA default). */
export type ValidatedFaerProviderOptions = Readonly<Required<Pick<FaerProviderOptions, 'isa'>> & Pick<FaerProviderOptions, 'parallelMinWork'>>;

const ISAS: readonly string[] = ['auto', 'avx512f', 'avx2', 'portable'];
const KNOWN: readonly string[] = ['isa', 'parallelMinWork'];

/** Check `options` (before anything is loaded) and return a frozen copy with the defaults; `InvalidArgument` names the first bad one. */
export function validateFaerProviderOptions(options: unknown, op = 'createFaerProvider'): ValidatedFaerProviderOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw TenferroError.invalidArgument(op, 'options', 'an options object', options);
  const unknown = Object.keys(options).find((key) => !KNOWN.includes(key));
  if (unknown !== undefined) throw TenferroError.invalidArgument(op, `options.${unknown}`, `one of ${KNOWN.join(', ')}`, unknown);
  const { isa = 'auto', parallelMinWork } = options as FaerProviderOptions;
  if (!ISAS.includes(isa)) throw TenferroError.invalidArgument(op, 'options.isa', `one of ${ISAS.join(', ')}`, isa);
  if (parallelMinWork !== undefined && (typeof parallelMinWork !== 'number' || !(parallelMinWork >= 0))) {
    throw TenferroError.invalidArgument(op, 'options.parallelMinWork', 'a non-negative number', parallelMinWork);
  }
  return Object.freeze(parallelMinWork === undefined ? { isa } : { isa, parallelMinWork });
}
