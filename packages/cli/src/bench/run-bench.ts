import { discoverCpuTopology } from '@tenferro/core';
import { loadInstalledProviders } from '../installed-providers.js';
import { openAnchor } from './anchor-series.js';
import type { BenchPlan } from './bench-plan.js';
import { BENCH_SCHEMA, type BenchReport, type BenchResult, type BenchSeries } from './bench-report.js';
import { openOnnxruntime } from './onnxruntime-series.js';
import { createProgress } from './progress.js';
import type { SeriesRunner } from './series-runner.js';
import { openKind } from './tenferro-series.js';

/**
 * Measure matmul on each requested tenferro kind, the C anchor and onnxruntime-node (when they can
 * run here), all with the same thread count: `--threads`, else the kinds' resolved budget, else
 * the effective CPU capacity. Cases run in order of element type and size, each on every series
 * in turn, so that drift on a shared machine hits every series alike.
 */
export async function runBench(plan: BenchPlan): Promise<BenchReport> {
  const packages = await loadInstalledProviders();
  const opened: (SeriesRunner | BenchSeries)[] = [];
  try {
    let threads = plan.threads;
    for (const kind of plan.kinds) {
      const r = await openKind(kind, packages, plan.threads);
      if ('runner' in r) {
        threads ??= r.threadBudget;
        opened.push(r.runner);
      } else opened.push(r);
    }
    threads ??= discoverCpuTopology().effectiveCapacity.cpus;
    opened.push(await openAnchor(threads, packages));
    opened.push(await openOnnxruntime(threads));

    const runners = opened.filter((s): s is SeriesRunner => 'measure' in s);
    const results = new Map<SeriesRunner, BenchResult[]>(runners.map((r) => [r, []]));
    const failed = new Map<SeriesRunner, string>();
    const progress = createProgress(runners.length * plan.dtypes.length * plan.sizes.length);
    try {
      for (const dtype of plan.dtypes) {
        for (const n of plan.sizes) {
          for (const r of runners) {
            progress.step(`${r.label} ${dtype} n=${n}`);
            if (failed.has(r)) continue;
            try {
              results.get(r)!.push(await r.measure(dtype, n, plan.budget));
            } catch (e) {
              if (!r.failSoft) throw e;
              failed.set(r, `${r.label} failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`);
            }
          }
        }
      }
    } finally {
      progress.stop();
    }
    const series = opened.map((s): BenchSeries => {
      if (!('measure' in s)) return s;
      const reason = failed.get(s);
      if (reason !== undefined) return { id: s.id, label: s.label, available: false, description: null, reason, warnings: [], results: [] };
      return { id: s.id, label: s.label, available: true, description: s.description(), reason: null, warnings: s.warnings, results: results.get(s)! };
    });
    return { schema: BENCH_SCHEMA, op: 'matmul', threads, sizes: [...plan.sizes], dtypes: [...plan.dtypes], series };
  } finally {
    for (const s of opened) if ('measure' in s) await s.close();
  }
}
