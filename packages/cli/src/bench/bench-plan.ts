import type { BenchDType } from './bench-report.js';
import type { TimingBudget } from './timing.js';

/** What one `tenferro bench` run measures, as parsed from its options. */
export interface BenchPlan {
  /** The tenferro kinds to measure, in order. */
  readonly kinds: readonly ('faer' | 'blas')[];
  readonly sizes: readonly number[];
  readonly dtypes: readonly BenchDType[];
  /** `--threads`, or `undefined`: the backend's default (`TENFERRO_NUM_THREADS`, else the effective CPU capacity). */
  readonly threads: number | undefined;
  readonly budget: TimingBudget;
}

export const DEFAULT_SIZES: readonly number[] = Object.freeze([64, 256, 1024]);
export const BENCH_DTYPES: readonly BenchDType[] = Object.freeze(['f64', 'f32']);
