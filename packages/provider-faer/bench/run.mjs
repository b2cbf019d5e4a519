#!/usr/bin/env node
import { performance } from 'node:perf_hooks';
// faer-kind end-to-end matmul vs direct C cblas_dgemm/cblas_sgemm (OpenBLAS) in the same run.
//
//   node bench/run.mjs [--quick] [--json]
//
// For n in {64, 256, 512, 1024, 2048} (quick: 64, 256, 512, 1024), f64 and f32, threads 1 and 2:
//   ours:   CpuBackend.create({ kind: 'faer', threads, providers: [createFaerProvider()] }).matmul(a, b)
//           (end to end: dispatch to the engine workers, output allocation, the kernels)
//   anchor: bench/anchor/cblas-anchor <d|s> n threads reps (C calling cblas directly)
// Each row measures ours, then the anchor, then ours again (interleaved; best of all reps per
// side), so both sides see the same machine state. OPENBLAS_CORETYPE is left as the environment
// has it. Also measured: this machine's single-core FMA peak (native AVX-512 / AVX2 FMA chains on
// one thread), and our f64 n=1024 1-thread GFLOP/s as a fraction of it.
import { execFileSync } from 'node:child_process';
import { CpuBackend, Tensor } from '@tenferro/core';
import { buildAnchor } from '../../../bench/anchor/build-anchor.mjs';
import { createFaerProvider, faerProviderStatus } from '../dist/index.js';

const quick = process.argv.includes('--quick');
const json = process.argv.includes('--json');
const sizes = quick ? [64, 256, 512, 1024] : [64, 256, 512, 1024, 2048];
const threadCounts = [1, 2];
const dtypes = ['f64', 'f32'];

const status = faerProviderStatus();
if (!status.available) {
  console.error(`@tenferro/provider-faer bench: the native addon is unavailable: ${status.reason}`);
  process.exit(1);
}

function repsFor(n) {
  const flops = 2 * n ** 3;
  const r = Math.round((quick ? 0.25e9 : 1.2e9) * 8 / flops);
  return Math.max(3, Math.min(quick ? 30 : 100, r));
}

function anchor(bin, dtype, n, threads, reps) {
  const out = execFileSync(bin, [dtype === 'f64' ? 'd' : 's', String(n), String(threads), String(reps)], { encoding: 'utf8', env: process.env });
  return JSON.parse(out);
}

async function ours(backend, a, b, reps, out) {
  const call =
    out === 'reclaim'
      ? async () => backend.reclaim(await backend.matmul(a, b))
      : out === undefined
        ? () => backend.matmul(a, b)
        : () => backend.dotGeneralInto(out, a, b, { contracting: [[1], [0]] });
  // Warm-up, time-based: workers load the module and addon, and V8 optimises the dispatch path
  // (a few thousand calls at small n; at large n a couple of calls).
  for (const until = performance.now() + 250; performance.now() < until; ) await call();
  const secs = [];
  for (let r = 0; r < reps; r++) {
    const t0 = process.hrtime.bigint();
    await call();
    secs.push(Number(process.hrtime.bigint() - t0) * 1e-9);
  }
  return secs;
}

const gflops = (n, s) => (2 * n ** 3) / s / 1e9;
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];

const bin = buildAnchor();
const native = status.native;
const addon = (await import('node:module')).createRequire(import.meta.url)(status.path);
const peak = Math.max(addon.fmaPeak(quick ? 0.3 : 1.0), addon.fmaPeak(quick ? 0.3 : 1.0));
const peakAvx2 = native.supported.avx2 ? addon.fmaPeak(quick ? 0.2 : 0.5, 1) : 0;

const pkg = createFaerProvider();
const rows = [];
const backends = new Map();
for (const t of threadCounts) backends.set(t, await CpuBackend.create({ kind: 'faer', threads: t, providers: [pkg] }));
let anchorIdentity = '';
try {
  for (const dtype of dtypes) {
    for (const n of sizes) {
      const values = (seed) => Array.from({ length: n * n }, (_, i) => (((i * 2654435761 + seed) >>> 0) % 16 - 8) / 4);
      const a = Tensor.fromArray(dtype, [n, n], values(1));
      const b = Tensor.fromArray(dtype, [n, n], values(7));
      for (const t of threadCounts) {
        const backend = backends.get(t);
        const reps = repsFor(n);
        const out = Tensor.fromArray(dtype, [n, n], new Array(n * n).fill(0));
        const first = await ours(backend, a, b, Math.ceil(reps / 2));
        const into1 = await ours(backend, a, b, Math.ceil(reps / 2), out);
        const anc = anchor(bin, dtype, n, t, reps);
        const second = await ours(backend, a, b, Math.ceil(reps / 2));
        const into2 = await ours(backend, a, b, Math.ceil(reps / 2), out);
        const reclaimed = await ours(backend, a, b, reps, 'reclaim');
        const into = gflops(n, Math.min(...into1, ...into2));
        const reclaim = gflops(n, Math.min(...reclaimed));
        anchorIdentity = `${anc.config} (core ${anc.core})`;
        const all = [...first, ...second];
        const oursBest = gflops(n, Math.min(...all));
        const oursMedian = gflops(n, median(all));
        rows.push({ n, dtype, threads: t, ours: oursBest, oursMedian, into, reclaim, anchor: anc.gflopsBest, anchorMedian: anc.gflopsMedian, ratio: oursBest / anc.gflopsBest });
        const r = rows[rows.length - 1];
        if (!json) console.error(`  ${dtype} n=${n} t=${t}: ours ${r.ours.toFixed(1)} (median ${r.oursMedian.toFixed(1)}; into ${r.into.toFixed(1)}) vs anchor ${r.anchor.toFixed(1)} (median ${r.anchorMedian.toFixed(1)})`);
      }
    }
  }
} finally {
  for (const b of backends.values()) await b.close();
}

const f64_1024 = rows.find((r) => r.dtype === 'f64' && r.n === 1024 && r.threads === 1);
const summary = {
  machine: { isa: native.isa, kernel: native.kernel, blocking: native.blocking, cache: native.cache, openblasCoretype: process.env.OPENBLAS_CORETYPE ?? '(unset)' },
  anchor: anchorIdentity,
  peak: { singleCoreF64: peak, singleCoreF64Avx2: peakAvx2 },
  rows,
  f64n1024PeakFraction: f64_1024 ? f64_1024.ours / peak : undefined,
};
if (json) {
  console.log(JSON.stringify(summary, null, 2));
} else {
  const pad = (s, w) => String(s).padStart(w);
  console.log(`\n@tenferro/provider-faer ${pkg.name} vs ${anchorIdentity}; OPENBLAS_CORETYPE=${summary.machine.openblasCoretype}`);
  console.log(`blocking f64 ${JSON.stringify(native.blocking.f64)} f32 ${JSON.stringify(native.blocking.f32)}; caches ${JSON.stringify(native.cache)}`);
  console.log(`GFLOP/s, best of reps (median in parentheses). ours = backend.matmul end to end (fresh output each call);`);
  console.log(`into = backend.dotGeneralInto a reused output (same kernels and dispatch, no output allocation);`);
  console.log(`reclaim = backend.matmul whose output is reclaimed after each call (fresh output from the pool);`);
  console.log(`ratio = ours best / anchor best\n`);
  console.log(`${pad('n', 5)} ${pad('dtype', 5)} ${pad('thr', 3)} ${pad('ours', 16)} ${pad('anchor', 16)} ${pad('ratio', 6)} ${pad('into', 7)} ${pad('into/anchor', 11)} ${pad('reclaim', 8)} ${pad('rcl/anchor', 10)}`);
  for (const r of rows) {
    console.log(`${pad(r.n, 5)} ${pad(r.dtype, 5)} ${pad(r.threads, 3)} ${pad(`${r.ours.toFixed(1)} (${r.oursMedian.toFixed(1)})`, 16)} ${pad(`${r.anchor.toFixed(1)} (${r.anchorMedian.toFixed(1)})`, 16)} ${pad(r.ratio.toFixed(2), 6)} ${pad(r.into.toFixed(1), 7)} ${pad((r.into / r.anchor).toFixed(2), 11)} ${pad(r.reclaim.toFixed(1), 8)} ${pad((r.reclaim / r.anchor).toFixed(2), 10)}`);
  }
  console.log(`\nsingle-core FMA peak (f64, ${native.isa}): ${peak.toFixed(1)} GFLOP/s${peakAvx2 ? `; AVX2 FMA: ${peakAvx2.toFixed(1)}` : ''}`);
  if (f64_1024) console.log(`ours f64 n=1024, 1 thread: ${f64_1024.ours.toFixed(1)} GFLOP/s = ${(100 * summary.f64n1024PeakFraction).toFixed(1)} % of the measured single-core peak`);
}
