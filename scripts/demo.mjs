#!/usr/bin/env node
// `npm run demo`: what tenferro sees on this machine (`tenferro info`), then what you get from it —
// matmul GFLOP/s of each tenferro kind beside C calling cblas directly (the C anchor) and beside
// pure JavaScript (ml-matrix). The tenferro and C figures come from `tenferro bench --json`; the
// JavaScript figure is measured here. Anything that cannot run on this machine is said so.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'packages', 'cli', 'dist', 'bin.js');
const SIZES = [256, 1024];
const DTYPE = 'f64';

const tty = process.stdout.isTTY === true && !process.env.NO_COLOR;
const bold = (s) => (tty ? `\u001b[1m${s}\u001b[22m` : s);
const dim = (s) => (tty ? `\u001b[2m${s}\u001b[22m` : s);

function heading(text) {
  console.log(`\n${bold(text)}\n`);
}

// 1. What tenferro sees.
heading('1. What tenferro sees on this machine   (npx tenferro info)');
const info = spawnSync(process.execPath, [cli, 'info'], { stdio: 'inherit', cwd: root });
if (info.status !== 0) process.exit(info.status ?? 1);

// 2. What you get.
heading(`2. What you get: matmul C = A·B, n×n float64`);
console.log(dim(`measuring tenferro faer, tenferro blas and C calling cblas (n = ${SIZES.join(', ')}), then pure JavaScript…`));
const bench = spawnSync(process.execPath, [cli, 'bench', '--json', '--sizes', SIZES.join(',')], {
  cwd: root,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'], // the progress bar shows on the terminal
});
if (bench.status !== 0) process.exit(bench.status ?? 1);
const report = JSON.parse(bench.stdout);

const js = await measureJavaScript();

const big = SIZES[SIZES.length - 1];
const at = (series, n) => series.results.find((r) => r.dtype === DTYPE && r.n === n)?.gflops;
const anchor = report.series.find((s) => s.id === 'anchor');
const anchorBig = anchor?.available ? at(anchor, big) : undefined;
const jsBig = js.available ? js.gflops.get(big) : undefined;

const NAMES = {
  faer: 'tenferro, kind faer',
  blas: 'tenferro, kind blas',
  anchor: 'C calling cblas directly',
  onnxruntime: 'onnxruntime-node',
};
const rows = report.series
  .filter((s) => s.id !== 'onnxruntime' || s.available) // onnxruntime-node is optional: a row only when it is installed
  .map((s) => ({ name: NAMES[s.id] ?? s.label, id: s.id, available: s.available, reason: s.reason, gflops: (n) => (s.available ? at(s, n) : undefined) }));
rows.push({ name: 'pure JavaScript (ml-matrix)', id: 'js', available: js.available, reason: js.reason, gflops: (n) => js.gflops?.get(n) });

const num = (x) => (x === undefined ? '—' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const ratio = (x, base) => (x === undefined || base === undefined ? '—' : `${x / base >= 10 ? (x / base).toFixed(0) : (x / base).toFixed(2)}×`);
const W = 30;
console.log(
  `\n  ${'GFLOP/s (higher is better)'.padEnd(W)}${SIZES.map((n) => `n=${n}`.padStart(10)).join('')}${'vs C'.padStart(10)}${'vs JavaScript'.padStart(15)}`,
);
for (const r of rows) {
  if (!r.available) {
    console.log(`  ${r.name.padEnd(W)}${dim(`not available here: ${r.reason}`)}`);
    continue;
  }
  const g = r.gflops(big);
  const vsC = r.id === 'anchor' ? '1×' : ratio(g, anchorBig);
  const vsJs = r.id === 'js' ? '1×' : ratio(g, jsBig);
  console.log(`  ${r.name.padEnd(W)}${SIZES.map((n) => num(r.gflops(n)).padStart(10)).join('')}${vsC.padStart(10)}${vsJs.padStart(15)}`);
}
console.log(dim(`\n  ${report.threads} thread${report.threads === 1 ? '' : 's'}; ratios at n=${big}; each figure is the median of timed calls after a warm-up.`));
if (anchor?.available) console.log(dim(`  C: ${anchor.description}.`));
const f32 = report.series
  .filter((s) => s.available)
  .map((s) => `${s.id === 'anchor' ? 'C' : (NAMES[s.id] ?? s.label).replace(', kind', '')} ${num(s.results.find((r) => r.dtype === 'f32' && r.n === big)?.gflops)}`);
if (f32.length > 0) console.log(dim(`  float32 at n=${big}, GFLOP/s: ${f32.join(', ')}.`));
console.log(dim('  More: npx tenferro bench --help (sizes, threads, --json, --svg chart).'));

/** ml-matrix's `mmul` on the same sizes (warm-up at the smallest size, then timed calls). */
async function measureJavaScript() {
  let Matrix;
  try {
    ({ Matrix } = await import('ml-matrix'));
  } catch {
    return { available: false, reason: 'ml-matrix is not installed (a devDependency of this repository)' };
  }
  const gflops = new Map();
  for (const n of SIZES) {
    const a = Matrix.rand(n, n);
    const b = Matrix.rand(n, n);
    const reps = n <= 256 ? 5 : 1; // n=1024 takes seconds per call in JavaScript; the JIT is warm from n=256
    if (n === SIZES[0]) for (let i = 0; i < 2; i++) a.mmul(b);
    const secs = [];
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      a.mmul(b);
      secs.push((performance.now() - t0) / 1e3);
    }
    secs.sort((x, y) => x - y);
    gflops.set(n, (2 * n ** 3) / secs[Math.floor(secs.length / 2)] / 1e9);
  }
  return { available: true, reason: null, gflops };
}
