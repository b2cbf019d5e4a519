import { writeFileSync } from 'node:fs';
import { BENCH_DTYPES, type BenchPlan } from '../bench/bench-plan.js';
import { formatBench } from '../bench/format-table.js';
import { runBench } from '../bench/run-bench.js';
import { benchSvg } from '../bench/svg-chart.js';
import { DEFAULT_BUDGET } from '../bench/timing.js';
import type { CliIo } from '../cli-io.js';
import { styleFor } from '../style.js';

export interface BenchCommandOptions {
  readonly kind?: 'faer' | 'blas';
  readonly sizes: readonly number[];
  readonly threads?: number;
  readonly json?: boolean;
  readonly svg?: string;
}

/** `tenferro bench`: measure, then print the table (or the JSON report) and write the chart. */
export async function benchCommand(options: BenchCommandOptions, io: CliIo): Promise<void> {
  const plan: BenchPlan = {
    kinds: options.kind === undefined ? ['faer', 'blas'] : [options.kind],
    sizes: options.sizes,
    dtypes: BENCH_DTYPES,
    threads: options.threads,
    budget: DEFAULT_BUDGET,
  };
  const report = await runBench(plan);
  if (options.svg !== undefined) writeFileSync(options.svg, benchSvg(report));
  if (options.json === true) {
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  io.stdout.write(`${formatBench(report, styleFor(io.stdout, false, io.env))}\n`);
  if (options.svg !== undefined) io.stdout.write(`chart: ${options.svg}\n`);
}
