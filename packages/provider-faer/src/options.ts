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
   * path and dtype, `defaultParallelMinWork` (300³ on the AVX-512 path).
   */
  readonly parallelMinWork?: number;
}

/**
 * Real multiply-adds below which a GEMM runs as a single task on the AVX-512 path (f32 and f64).
 * A split costs a second task round trip, and the second pool lane is usually asleep between
 * calls (it spins only ~50 µs), so its futex wake-up (~100 µs and far more on a loaded VM) lands
 * on the critical path; each part also re-packs the shared operand. Since the unpacked
 * small-matrix kernel runs everything up to 256³ in one task at full speed, the split pays only
 * above that in the median: on 2 threads (bench/split.mjs, quiet machine, median÷anchor) n = 256
 * runs 1.36 sequential vs 0.94 split for f64 and 1.16 vs 0.78 for f32; n = 512 runs 2.04 split vs
 * 1.17 sequential.
 */
export const DEFAULT_PARALLEL_MIN_WORK = 300 * 300 * 300;

/**
 * The default `parallelMinWork` of ISA path `isaId` (0 portable, 1 avx2, 2 avx512f) for a dtype
 * whose real component takes `componentBytes`: the same time of one task as 300³ f64 multiply-adds
 * take on the AVX-512 path, scaled by the vector's lanes of that component (never above 300³, as
 * measured for f32 there too). A narrower path takes longer over the same work, so the split pays
 * sooner: on a Zen 3 (avx2), f64 n = 256 on 2 threads ran 0.64 of OpenBLAS split against 0.49 as one
 * task, f32 n = 256 0.60 against 0.63 (bench/split.mjs, best) — avx2 f64 splits from 238³, f32 from 300³.
 */
export function defaultParallelMinWork(isaId: number, componentBytes: 4 | 8): number {
  const vectorBytes = isaId === 2 ? 64 : isaId === 1 ? 32 : 8;
  return DEFAULT_PARALLEL_MIN_WORK * Math.min(1, (vectorBytes / 64) * (8 / componentBytes));
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

/** Chunks per lane of a dynamic split. */
export const CHUNKS_PER_LANE = 4;

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
