#!/usr/bin/env node
// `npm run demo`: what tenferro sees on this machine (`tenferro info`), then what you get from it —
// matmul GFLOP/s of each tenferro kind beside C calling cblas directly (the C anchor) and beside
// pure JavaScript (ml-matrix). The tenferro and C figures come from `tenferro bench --json`; the
// JavaScript figure is measured here. Then one line per capability beyond matmul (linear algebra,
// the native strided primitives), measured in this process. Anything that cannot run on this
// machine is said so.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mustRun } from './demo-steps.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// TENFERRO_DEMO_CLI: another CLI entry point (packages/release-checks/test/demo-steps.test.ts runs
// the demo with one whose benchmark crashes).
const cli = process.env.TENFERRO_DEMO_CLI ?? join(root, 'packages', 'cli', 'dist', 'bin.js');
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
// A step that fails (exit code or signal, e.g. a crashed benchmark child) is reported with its exit
// code and last stderr lines, and the demo exits non-zero (scripts/demo-steps.mjs, #39).
await mustRun('`tenferro info`', process.execPath, [cli, 'info'], { cwd: root });

// 2. What you get.
heading(`2. What you get: matmul C = A·B, n×n float64`);
console.log(dim(`measuring tenferro faer, tenferro blas and C calling cblas (n = ${SIZES.join(', ')}), then pure JavaScript…`));
const bench = await mustRun('the benchmark child (`tenferro bench --json`)', process.execPath, [cli, 'bench', '--json', '--sizes', SIZES.join(',')], {
  cwd: root,
  capture: true,
});
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

// 3. One line per capability beyond matmul (each measured here, in this process).
heading('3. Beyond matmul');
await capabilityLines();

/**
 * One line per capability: linear algebra (`solve` of a 1024 system on each kind — GFLOP/s and
 * the scaled residual) and the native strided primitives (a transpose copy in GB/s beside a plain
 * memory copy of the same bytes, `add` and a row sum beside JavaScript loops, a contraction with
 * permuted axes with and without tprims). A package that cannot run here is said so, not faked.
 */
async function capabilityLines() {
  const pkg = (name) => new URL(`../packages/${name}/dist/index.js`, import.meta.url).href;
  const { CpuBackend, Tensor, ops } = await import(pkg('core'));
  const line = (name, text) => console.log(`  ${name.padEnd(W)}${text}`);
  const median = async (reps, call) => {
    await call(); // warm-up
    const t = [];
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      const out = await call();
      t.push((performance.now() - t0) / 1e3);
      out?.dispose?.();
    }
    return t.sort((x, y) => x - y)[Math.floor(t.length / 2)];
  };

  // Linear algebra: x = solve(A, b) for a well-conditioned 1024×1024 f64 A; LU + solve ≈ (2/3)n³ + 2n² flops.
  const n = 1024;
  let la;
  try {
    la = await import(pkg('linalg'));
    if (!la.status().available) throw new Error(la.status().reasons.join('; '));
  } catch (e) {
    line(`linalg solve n=${n}`, dim(`not available here: ${e.message}`));
  }
  if (la !== undefined) {
    const a = new Float64Array(n * n);
    for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) a[i + j * n] = (i === j ? n : 0) + Math.sin(i * 7 + j * 13);
    const A = Tensor.from(a, [n, n]);
    const b = Tensor.from(Float64Array.from({ length: n }, (_, i) => Math.cos(i)), [n, 1]);
    const faer = await import(pkg('provider-faer'));
    // Explicit providers: this script is not an application with the provider packages installed.
    const kinds = [['faer', 'Eigen built-in', async () => CpuBackend.create({ kind: 'faer', providers: faer.status().available ? [faer.createFaerProvider()] : [] })]];
    try {
      const blas = await import(pkg('provider-blas'));
      if (blas.status().available) kinds.push(['blas', 'LAPACK', async () => CpuBackend.create({ kind: 'blas', providers: [blas.createBlasProvider()] })]);
      else line(`linalg solve n=${n}, kind blas`, dim(`not available here: ${blas.status().reasons.join('; ')}`));
    } catch (e) {
      line(`linalg solve n=${n}, kind blas`, dim(`not available here: ${e.message}`));
    }
    for (const [kind, what, create] of kinds) {
      const backend = await create();
      try {
        const solver = la.linalg(backend);
        const secs = await median(3, () => solver.solve(A, b));
        // Which kernel ran is on tenferro:provider (#35); linalg/testing's recorder reads it.
        const { recordLinalgKernels } = await import(new URL('../packages/linalg/dist/testing/index.js', import.meta.url).href);
        const { value: x, calls } = await recordLinalgKernels(() => solver.solve(A, b));
        const kernel = calls.at(-1)?.kernel === 'extension' ? what : 'Eigen built-in';
        // Backward error ‖A·x − b‖∞ / (‖A‖∞ ‖x‖∞): a few machine epsilons (2.2e-16) for a stable solve.
        const ax = (await backend.matmul(A, x)).toArray();
        const xs = x.toArray();
        const bs = b.toArray();
        let r = 0;
        for (let i = 0; i < n; i++) r = Math.max(r, Math.abs(ax[i] - bs[i]));
        let normA = 0;
        for (let i = 0; i < n; i++) {
          let row = 0;
          for (let j = 0; j < n; j++) row += Math.abs(a[i + j * n]);
          normA = Math.max(normA, row);
        }
        const residual = r / (normA * Math.max(...xs.map(Math.abs)));
        const gflops = ((2 / 3) * n ** 3 + 2 * n ** 2) / secs / 1e9;
        line(`linalg solve n=${n}, kind ${kind}`, `${num(gflops).padStart(10)} GFLOP/s  ${(secs * 1e3).toFixed(1)} ms  backward error ${residual.toExponential(1)}  ${dim(`(${kernel})`)}`);
      } finally {
        await backend.close();
      }
    }
    // The set-up of `npm run demo` builds linalg's f64 kernels only (scripts/setup.mjs, #39): say so.
    const dtypes = linalgBuiltDtypes();
    if (dtypes !== undefined) {
      line(
        'linalg dtypes',
        `built for ${dtypes} only (what this demo runs; a shorter first set-up): other dtypes are refused until \`node scripts/setup.mjs\` (or \`npm test\`) builds them all`,
      );
    }
  }

  // Strided primitives: a transposing copy of a 2048² f64 (32 MiB) into a warm output, beside a
  // plain memory copy of the same bytes (TypedArray.set, i.e. memcpy) — the bound it approaches.
  const m = 2048;
  let tprims;
  try {
    tprims = await import(pkg('provider-tprims'));
    if (!tprims.status().available) throw new Error(tprims.status().reasons.join('; '));
  } catch (e) {
    line(`tprims transpose ${m}² f64`, dim(`not available here: ${e.message}`));
  }
  if (tprims !== undefined) {
    const backend = await CpuBackend.create({ providers: [tprims.createTprimsProvider()] });
    try {
      const src = Tensor.from(Float64Array.from({ length: m * m }, (_, i) => i % 1000), [m, m]);
      const out = Tensor.zeros('f64', [m, m]);
      const o = ops(backend);
      const secs = await median(7, () => o.copyInto(out, src.transpose()).then(() => undefined));
      const from = new Float64Array(m * m).fill(1);
      const to = new Float64Array(m * m);
      const copySecs = await median(7, async () => to.set(from));
      const bytes = 2 * 8 * m * m; // read + write
      const ok = out.slice(1, 0).toArray()[0] === src.slice(0, 1).toArray()[0] ? '' : '  (wrong result!)';
      line(`tprims transpose ${m}² f64`, `${num(bytes / secs / 1e9).padStart(10)} GB/s   memcpy ${num(bytes / copySecs / 1e9)} GB/s  ${dim(`(${tprims.status().details.isa}, ${backend.numThreads()} threads)`)}${ok}`);

      // Element-wise: add of two 2^22 f32 vectors into a warm output, beside the JavaScript loop a
      // Node user would write on the same arrays (read 2 + write 1 per element).
      const len = 1 << 22;
      const x = Tensor.from(Float32Array.from({ length: len }, (_, i) => i % 97), [len]);
      const y = Tensor.from(Float32Array.from({ length: len }, (_, i) => i % 89), [len]);
      const sumOut = Tensor.zeros('f32', [len]);
      const addSecs = await median(7, () => o.add(x, y, { out: sumOut }).then(() => undefined));
      const [xa, ya, za] = [x.toTypedArray(), y.toTypedArray(), new Float32Array(len)];
      const jsAddSecs = await median(7, async () => {
        for (let i = 0; i < len; i++) za[i] = xa[i] + ya[i];
      });
      const addOk = sumOut.toTypedArray()[len - 1] === za[len - 1] ? '' : '  (wrong result!)';
      line(`tprims add 2^22 f32`, `${num((12 * len) / addSecs / 1e9).padStart(10)} GB/s   JavaScript loop ${num((12 * len) / jsAddSecs / 1e9)} GB/s${addOk}`);

      // Reduction: the row sums of a 2048² f64 (sum over axis 1, pairwise), beside a JavaScript loop.
      const rows = await median(7, () => o.sum(src, { axes: [1] }));
      const flat = src.toTypedArray();
      const jsRows = await median(7, async () => {
        const acc = new Float64Array(m);
        for (let i = 0; i < m; i++) {
          let t = 0;
          for (let j = 0; j < m; j++) t += flat[i * m + j];
          acc[i] = t;
        }
      });
      line(`tprims sum axis 1, ${m}² f64`, `${num((8 * m * m) / rows / 1e9).padStart(10)} GB/s   JavaScript loop ${num((8 * m * m) / jsRows / 1e9)} GB/s`);
    } finally {
      await backend.close();
    }

    // A contraction with permuted axes (the tensor-network case, R105): C[i,l] = Σ A[i,j,k]·B[k,j,l],
    // d = 48, where dot-general must re-lay an operand out — natively with tprims installed, by
    // core's TypeScript reference without it.
    const d = 48;
    const A = Tensor.from(Float64Array.from({ length: d ** 3 }, (_, i) => ((i * 7) % 13) - 6), [d, d, d]);
    const B = Tensor.from(Float64Array.from({ length: d ** 3 }, (_, i) => ((i * 5) % 11) - 5), [d, d, d]);
    const dims = { contracting: [[1, 2], [1, 0]] };
    const faer = await import(pkg('provider-faer')).catch(() => undefined);
    const gemm = faer?.status().available ? [faer.createFaerProvider()] : [];
    const withT = await CpuBackend.create({ providers: [...gemm, tprims.createTprimsProvider()] });
    const without = await CpuBackend.create({ providers: gemm });
    try {
      const tSecs = await median(5, () => withT.dotGeneral(A, B, dims));
      const rSecs = await median(5, () => without.dotGeneral(A, B, dims));
      const flops = 2 * d ** 4;
      line(`contraction ijk,kjl->il d=${d}`, `${num(flops / tSecs / 1e9).padStart(10)} GFLOP/s  ${(tSecs * 1e3).toFixed(2)} ms with tprims, ${(rSecs * 1e3).toFixed(2)} ms with core's TypeScript layout transform`);
    } finally {
      await withT.close();
      await without.close();
    }
  }
}

/** The dtypes linalg's native build was limited to (native/build/status.json `dtypes`), if it was. */
function linalgBuiltDtypes() {
  try {
    const status = JSON.parse(readFileSync(join(root, 'packages', 'linalg', 'native', 'build', 'status.json'), 'utf8'));
    return status.ok === true && typeof status.dtypes === 'string' ? status.dtypes : undefined;
  } catch {
    return undefined;
  }
}

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
