import type { BenchDType, BenchResult, BenchSeries, SeriesId } from './bench-report.js';
import type { TimingBudget } from './timing.js';

/**
 * One thing `tenferro bench` measures, opened once and then asked for one case at a time, so that
 * the run can interleave the series case by case (drift on a shared machine then hits all alike).
 */
export interface SeriesRunner {
  readonly id: SeriesId;
  readonly label: string;
  /** What runs (e.g. `"tenferro faer GEMM (avx512f)"`), known once a case has run. */
  description(): string;
  readonly warnings: readonly string[];
  /** A failure while measuring makes the series "not measured" with the reason (true), or fails the command (false). */
  readonly failSoft: boolean;
  measure(dtype: BenchDType, n: number, budget: TimingBudget): Promise<BenchResult>;
  close(): Promise<void>;
}

/** A series that cannot run here, with the reason. */
export const notMeasured = (id: SeriesId, label: string, reason: string): BenchSeries => ({
  id,
  label,
  available: false,
  description: null,
  reason,
  warnings: [],
  results: [],
});
