import type { BenchReport, SeriesId } from './bench-report.js';

const COLORS: Record<SeriesId, string> = { faer: '#1f77b4', blas: '#d62728', anchor: '#2ca02c', onnxruntime: '#9467bd' };
const DASH = { f64: '', f32: '6 4' } as const;

const W = 760;
const H = 460;
const M = { left: 64, right: 230, top: 44, bottom: 56 };

/** Text for an XML text node or attribute value. */
export function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

/** A round axis maximum at or above `x` (1, 2 or 5 times a power of ten). */
function niceCeil(x: number): number {
  if (!(x > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(x));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= x) return m * p;
  return 10 * p;
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

/**
 * The bench as a standalone SVG line chart: GFLOP/s (linear) against n (log scale), one line per
 * provider and element type (f64 solid, f32 dashed); providers that did not run are named in the
 * legend with "not measured".
 */
export function benchSvg(report: BenchReport): string {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const sizes = [...report.sizes].sort((a, b) => a - b);
  const lo = Math.log2(sizes[0] ?? 1);
  const hi = Math.log2(sizes[sizes.length - 1] ?? 1);
  const x = (n: number) => M.left + (hi === lo ? pw / 2 : ((Math.log2(n) - lo) / (hi - lo)) * pw);
  const peak = Math.max(0, ...report.series.flatMap((s) => s.results.map((r) => r.gflops)).filter(Number.isFinite));
  const yMax = niceCeil(peak * 1.05);
  const y = (g: number) => M.top + ph - (Math.min(g, yMax) / yMax) * ph;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${M.left}" y="24" font-size="15" font-weight="bold">${xmlEscape(`matmul n×n, ${report.threads} thread${report.threads === 1 ? '' : 's'}: GFLOP/s (higher is better)`)}</text>`);
  // Grid and axes.
  for (let i = 0; i <= 5; i++) {
    const g = (yMax * i) / 5;
    const yy = y(g).toFixed(1);
    out.push(`<line x1="${M.left}" y1="${yy}" x2="${M.left + pw}" y2="${yy}" stroke="#e0e0e0"/>`);
    out.push(`<text x="${M.left - 8}" y="${yy}" text-anchor="end" dominant-baseline="middle">${fmt(g)}</text>`);
  }
  for (const n of sizes) {
    const xx = x(n).toFixed(1);
    out.push(`<line x1="${xx}" y1="${M.top + ph}" x2="${xx}" y2="${M.top + ph + 5}" stroke="#333333"/>`);
    out.push(`<text x="${xx}" y="${M.top + ph + 18}" text-anchor="middle">${n}</text>`);
  }
  out.push(`<line x1="${M.left}" y1="${M.top + ph}" x2="${M.left + pw}" y2="${M.top + ph}" stroke="#333333"/>`);
  out.push(`<line x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${M.top + ph}" stroke="#333333"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${H - 14}" text-anchor="middle">n (log scale)</text>`);
  out.push(`<text x="16" y="${M.top + ph / 2}" text-anchor="middle" transform="rotate(-90 16 ${M.top + ph / 2})">GFLOP/s</text>`);
  // Lines, and the legend.
  let ly = M.top + 4;
  const lx = M.left + pw + 20;
  for (const s of report.series) {
    const color = COLORS[s.id];
    if (!s.available) {
      out.push(`<text x="${lx}" y="${ly + 4}" fill="#888888">${xmlEscape(`${s.label}: not measured`)}</text>`);
      ly += 20;
      continue;
    }
    for (const dtype of report.dtypes) {
      const pts = s.results.filter((r) => r.dtype === dtype && Number.isFinite(r.gflops)).sort((a, b) => a.n - b.n);
      if (pts.length === 0) continue;
      const dash = DASH[dtype] === '' ? '' : ` stroke-dasharray="${DASH[dtype]}"`;
      const title = `<title>${xmlEscape(`${s.label} ${dtype}`)}</title>`;
      out.push(`<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${pts.map((r) => `${x(r.n).toFixed(1)},${y(r.gflops).toFixed(1)}`).join(' ')}">${title}</polyline>`);
      for (const r of pts) out.push(`<circle cx="${x(r.n).toFixed(1)}" cy="${y(r.gflops).toFixed(1)}" r="3" fill="${color}"><title>${xmlEscape(`${s.label} ${dtype} n=${r.n}: ${r.gflops.toFixed(1)} GFLOP/s`)}</title></circle>`);
      out.push(`<line x1="${lx}" y1="${ly}" x2="${lx + 24}" y2="${ly}" stroke="${color}" stroke-width="2"${dash}/>`);
      out.push(`<text x="${lx + 30}" y="${ly + 4}">${xmlEscape(`${s.label} ${dtype}`)}</text>`);
      ly += 20;
    }
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
