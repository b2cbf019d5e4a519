import { discoverCpuTopology } from '@tenferro/core';
import { loadInstalledProviders } from '../installed-providers.js';
import { benchAnchor } from './anchor-series.js';
import type { BenchPlan } from './bench-plan.js';
import { BENCH_SCHEMA, type BenchReport, type BenchSeries } from './bench-report.js';
import { benchOnnxruntime, resolveOnnxruntime } from './onnxruntime-series.js';
import { createProgress } from './progress.js';
import { benchKind } from './tenferro-series.js';

/**
 * Measure matmul on each requested tenferro kind, then the C anchor and onnxruntime-node (when
 * they can run here) with the same thread count: the kinds' resolved budget, else `--threads`,
 * else the effective CPU capacity.
 */
export async function runBench(plan: BenchPlan): Promise<BenchReport> {
  const packages = await loadInstalledProviders();
  const perSeries = plan.sizes.length * plan.dtypes.length;
  const progress = createProgress(perSeries * (plan.kinds.length + 1 + (resolveOnnxruntime() === undefined ? 0 : 1)));
  try {
    const series: BenchSeries[] = [];
    let threads = plan.threads;
    for (const kind of plan.kinds) {
      const r = await benchKind(kind, packages, plan, (label) => progress.step(label));
      threads ??= r.threadBudget;
      series.push(r.series);
    }
    threads ??= discoverCpuTopology().effectiveCapacity.cpus;
    series.push(await benchAnchor(plan, threads, packages, (label) => progress.step(label)));
    series.push(await benchOnnxruntime(plan, threads, (label) => progress.step(label)));
    return { schema: BENCH_SCHEMA, op: 'matmul', threads, sizes: [...plan.sizes], dtypes: [...plan.dtypes], series };
  } finally {
    progress.stop();
  }
}
