import { makeStyle, type Style } from '../style.js';
import type { BenchReport } from './bench-report.js';

const gf = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** The human result table: GFLOP/s per provider, element type and size; then what ran, and what did not and why. */
export function formatBench(report: BenchReport, style: Style = makeStyle(false)): string {
  const lines: string[] = [];
  const labelWidth = Math.max(18, ...report.series.map((s) => s.label.length)) + 2;
  const col = Math.max(8, ...report.sizes.map((n) => `n=${n}`.length + 2));
  lines.push(style.bold(`tenferro bench — matmul C = A·B (n×n), ${report.threads} thread${report.threads === 1 ? '' : 's'}, GFLOP/s (median call; higher is better)`));
  lines.push(style.bold(`${'provider'.padEnd(labelWidth)}${'dtype'.padEnd(7)}${report.sizes.map((n) => `n=${n}`.padStart(col)).join('')}`));
  for (const s of report.series) {
    if (!s.available) {
      lines.push(`${s.label.padEnd(labelWidth)}${style.dim('not measured (see below)')}`);
      continue;
    }
    for (const dtype of report.dtypes) {
      const cells = report.sizes.map((n) => {
        const r = s.results.find((q) => q.dtype === dtype && q.n === n);
        return (r === undefined ? '-' : gf(r.gflops)).padStart(col);
      });
      lines.push(`${s.label.padEnd(labelWidth)}${dtype.padEnd(7)}${cells.join('')}`);
    }
  }
  lines.push('');
  for (const s of report.series) {
    if (s.available) {
      lines.push(`  ${s.label}: ${s.description ?? ''}`);
      for (const w of s.warnings) lines.push(`    ${style.yellow('WARNING')} ${w}`);
    }
    else lines.push(`  ${s.label}: ${style.yellow('not measured')} — ${s.reason ?? ''}`);
  }
  return lines.join('\n');
}
