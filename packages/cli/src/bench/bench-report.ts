/** `tenferro bench --json` schema; documented in docs/cli.md. Bump the suffix on any breaking change. */
export const BENCH_SCHEMA = 'tenferro.bench/1';

export type BenchDType = 'f64' | 'f32';

/** What is measured: `tenferro bench` compares these on the same n×n matmul. */
export type SeriesId = 'faer' | 'blas' | 'anchor' | 'onnxruntime';

/** One timed case: C = A·B with n×n operands. */
export interface BenchResult {
  readonly dtype: BenchDType;
  readonly n: number;
  /** 2n³ / median seconds, in 10⁹ per second. */
  readonly gflops: number;
  readonly medianSeconds: number;
  /** Timed calls (after warm-up). */
  readonly reps: number;
}

/** One line of the chart: a provider (or the C anchor, or onnxruntime-node) and its results. */
export interface BenchSeries {
  readonly id: SeriesId;
  /** Short name for tables and the chart legend. */
  readonly label: string;
  /** Whether it ran here. */
  readonly available: boolean;
  /** What ran (e.g. `"tenferro faer GEMM (avx512f)"`, `"OpenBLAS 0.3.21 via cblas_dgemm, core Haswell"`), or `null`. */
  readonly description: string | null;
  /** Why it did not run, or `null`. */
  readonly reason: string | null;
  /** What its provider package says works here but not as well as it could (its `status().warnings`), each with its fix. */
  readonly warnings: readonly string[];
  readonly results: readonly BenchResult[];
}

export interface BenchReport {
  readonly schema: typeof BENCH_SCHEMA;
  readonly op: 'matmul';
  /** Threads every series ran with. */
  readonly threads: number;
  readonly sizes: readonly number[];
  readonly dtypes: readonly BenchDType[];
  readonly series: readonly BenchSeries[];
}

export const gflopsOf = (n: number, seconds: number): number => (2 * n ** 3) / seconds / 1e9;
