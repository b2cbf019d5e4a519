import { TenferroError } from '@tenferro/core';
import type { FaerIsa } from './native/binding.js';

function invalidArgument(op: string, param: string, expected: string, received: unknown): TenferroError {
  return new TenferroError('InvalidArgument', `expected ${expected} for ${param} but received ${JSON.stringify(received)} (${typeof received})`, { op, detail: { param } });
}

/** Options of {@link createFaerProvider}. */
export interface FaerProviderOptions {
  /**
   * The ISA path: `'auto'` (default: the best this CPU supports — AVX-512F, AVX2+FMA or
   * portable) or a specific one (it must be supported here; lower paths are for tests/profiling).
   */
  readonly isa?: 'auto' | FaerIsa;
  /**
   * Minimum work (m·n·k summed over batches) before an Inner-mode GEMM is split over the
   * worker pool; smaller ones run as one task. Default {@link DEFAULT_PARALLEL_MIN_WORK}.
   */
  readonly parallelMinWork?: number;
}

/**
 * m·n·k below which a GEMM runs as a single task: splitting costs a second task round trip
 * (about 20–40 µs here) and duplicated packing; measured with bench/run.mjs (see README).
 */
export const DEFAULT_PARALLEL_MIN_WORK = 96 * 96 * 96;

/**
 * Per-GEMM m·n·k below which a batched GEMM is split over batches (each task runs whole GEMMs)
 * rather than over the rows/columns of every GEMM.
 */
export const BATCH_SPLIT_MAX_WORK = 256 * 256 * 256;

export interface ResolvedOptions {
  readonly isa: number;
  readonly parallelMinWork: number;
}

const ISAS = new Set(['auto', 'avx512f', 'avx2', 'portable']);

export function resolveOptions(options: FaerProviderOptions | undefined): { isa: 'auto' | FaerIsa; parallelMinWork: number } {
  const op = 'createFaerProvider';
  const o = options ?? {};
  if (typeof o !== 'object' || o === null) throw invalidArgument(op, 'options', 'an options object', options);
  for (const key of Object.keys(o)) {
    if (key !== 'isa' && key !== 'parallelMinWork') throw invalidArgument(op, `options.${key}`, 'one of isa, parallelMinWork', key);
  }
  const isa = o.isa ?? 'auto';
  if (!ISAS.has(isa)) throw invalidArgument(op, 'options.isa', [...ISAS].join(', '), isa);
  const parallelMinWork = o.parallelMinWork ?? DEFAULT_PARALLEL_MIN_WORK;
  if (typeof parallelMinWork !== 'number' || !(parallelMinWork >= 0)) throw invalidArgument(op, 'options.parallelMinWork', 'a non-negative number', parallelMinWork);
  return { isa, parallelMinWork };
}
