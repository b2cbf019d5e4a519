#!/usr/bin/env node
// `pnpm bench` for @tenferro/provider-blas: backend.matmul end to end (f64 and f32; n = 64, 256,
// 1024, 2048; 1 and 2 BLAS threads) against the anchor — bench/anchor/cblas-anchor, C calling
// cblas_?gemm directly on the same system library — measured in the SAME run, each case anchor
// then ours, so the VM's ±30 % drift hits both sides alike.
//
//   node bench/run.mjs [--quick] [--json] [--coretype SkylakeX] [--sizes 256,512] [--split-min-work Infinity]
//
// --split-min-work: the provider's `splitMinWork` (real multiply-adds from which a GEMM on the
// 2-thread backend is split over the workers, one BLAS thread each; default 400³; `Infinity`
// runs every GEMM as one task on OpenBLAS's own threads): run twice to compare the two.
//
// OPENBLAS_CORETYPE: whatever the environment says applies to both sides (the anchor is a child
// process of this one); --coretype X sets it here, before the library is loaded, for both.
// --quick: f64 only, n = 64, 256, 1024, fewer repetitions (the demo's version).
// Ratio = anchor median time / ours median time (goal ≥ 0.97 for n ≥ 256); overhead at n = 64 is
// ours − anchor median time per call, in µs. Progress goes to stderr, the table to stdout.
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    coretype: { type: 'string' },
    sizes: { type: 'string' },
    'split-min-work': { type: 'string' },
  },
});
if (args.coretype) process.env.OPENBLAS_CORETYPE = args.coretype;

const { buildAnchor } = await import('../../../bench/anchor/build-anchor.mjs');
const { CpuBackend, Tensor } = await import('@tenferro/core');
const { createBlasProvider, blasProviderStatus } = await import('../dist/index.js');

const dtypes = args.quick ? ['f64'] : ['f64', 'f32'];
const sizes = args.sizes !== undefined ? args.sizes.split(',').map(Number) : args.quick ? [64, 256, 1024] : [64, 256, 1024, 2048];
const threadCounts = [1, 2];
const ROUNDS = args.quick ? 2 : 3;
const repsFor = (n) => (args.quick ? { 64: 100, 256: 20, 1024: 3 }[n] : { 64: 200, 256: 40, 512: 12, 1024: 5, 2048: 3 }[n]) ?? 4;

let anchor;
try {
  anchor = buildAnchor();
} catch (e) {
  console.error(`bench: cannot build the cblas anchor: ${e.message}`);
  process.exit(1);
}

const pkg = createBlasProvider(args['split-min-work'] === undefined ? undefined : { splitMinWork: Number(args['split-min-work']) });
const status = blasProviderStatus();
if (!status.available) {
  console.error(`bench: no BLAS: ${status.reasons.join('; ')}`);
  process.exit(1);
}

const cases = [];
for (const dtype of dtypes) for (const n of sizes) for (const threads of threadCounts) cases.push({ dtype, n, threads });

// --- progress bar (stderr) -----------------------------------------------------------------------
const tty = process.stderr.isTTY;
function progress(done, label) {
  const width = 28;
  const filled = Math.round((done / cases.length) * width);
  const line = `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${cases.length} ${label}`;
  if (tty) process.stderr.write(`\r${line.padEnd(78)}`);
  else process.stderr.write(`${line}\n`);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

function randomTensor(dtype, n, seed) {
  let x = seed >>> 0;
  const data = new Array(n * n);
  for (let i = 0; i < data.length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    data[i] = ((x >>> 8) % 16) / 4 - 2;
  }
  return Tensor.fromArray(dtype, [n, n], data);
}

const backends = new Map();
for (const threads of threadCounts) backends.set(threads, await CpuBackend.create({ kind: 'blas', threads, providers: [pkg] }));

const rows = [];
let done = 0;
progress(0, 'starting');
for (const c of cases) {
  progress(done, `${c.dtype} n=${c.n} threads=${c.threads}`);
  const reps = repsFor(c.n);
  const backend = backends.get(c.threads);
  const x = randomTensor(c.dtype, c.n, 1);
  const y = randomTensor(c.dtype, c.n, 2);
  const out = Tensor.zeros(c.dtype, [c.n, c.n]);
  // Warm-up, time-based: the worker loads the addon and V8 optimises the dispatch path (a few
  // thousand calls at small n; at large n a couple of calls).
  for (const until = performance.now() + 250; performance.now() < until; ) {
    await backend.matmul(x, y);
    await backend.dotGeneralInto(out, x, y, { contracting: [[1], [0]] });
  }
  // Interleaved rounds (anchor, ours, ours-into) so drift on this shared VM hits every side alike.
  const anchorSecs = [];
  const secs = [];
  const intoSecs = [];
  const reclaimSecs = [];
  let a;
  for (let round = 0; round < ROUNDS; round++) {
    // Anchor: C on the same library, same thread count, same environment.
    a = JSON.parse(execFileSync(anchor, [c.dtype === 'f64' ? 'd' : 's', String(c.n), String(c.threads), String(reps)], { encoding: 'utf8' }));
    anchorSecs.push(...a.seconds);
    // Ours: backend.matmul end to end (admission, engine entry, planning, one kernel task, fresh output).
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      await backend.matmul(x, y);
      secs.push((performance.now() - t0) / 1e3);
    }
    // The same into a preallocated output (dotGeneralInto): separates core's fresh-output
    // allocation (zero pages faulted in on first touch) from the provider path.
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      await backend.dotGeneralInto(out, x, y, { contracting: [[1], [0]] });
      intoSecs.push((performance.now() - t0) / 1e3);
    }
    // matmul whose output is reclaimed after each call: the fresh output comes from the pool.
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      backend.reclaim(await backend.matmul(x, y));
      reclaimSecs.push((performance.now() - t0) / 1e3);
    }
  }
  const flops = 2 * c.n ** 3;
  const ours = { median: median(secs), best: Math.min(...secs) };
  const into = median(intoSecs);
  const reclaimed = median(reclaimSecs);
  const anc = { median: median(anchorSecs), best: Math.min(...anchorSecs) };
  rows.push({
    ...c,
    reps,
    anchorGflops: flops / anc.median / 1e9,
    oursGflops: flops / ours.median / 1e9,
    ratio: anc.median / ours.median,
    ratioBest: anc.best / ours.best,
    intoRatio: anc.median / into,
    reclaimRatio: anc.median / reclaimed,
    overheadMicros: (ours.median - anc.median) * 1e6,
    intoOverheadMicros: (into - anc.median) * 1e6,
    anchorCore: a.core,
  });
  done++;
}
progress(done, 'done');
if (tty) process.stderr.write('\n');
for (const b of backends.values()) await b.close();

const ourCore = status.runtime.coreType ?? '';
const sameCore = rows.every((r) => (r.anchorCore ?? '') === ourCore);

if (args.json) {
  console.log(JSON.stringify({ runtime: status.runtime, sameCore, rows }, null, 2));
} else {
  const r = status.runtime;
  console.log(`\n@tenferro/provider-blas bench — ${r.name} ${r.version}, ${r.threadingLayer}${r.coreType ? `, core ${r.coreType}` : ''}; anchor core ${rows[0]?.anchorCore || '-'}${sameCore ? ' (same)' : ' (DIFFERENT: results not comparable)'}; OPENBLAS_CORETYPE=${process.env.OPENBLAS_CORETYPE ?? '(unset)'}`);
  console.log('matmul = backend.matmul end to end (fresh output); into = backend.dotGeneralInto a preallocated output; reclaim = matmul whose output is reclaimed after each call; ratios = anchor time / ours (median)');
  console.log('dtype     n  thr  reps   anchor GF/s   matmul GF/s   ratio(med)  ratio(best)  into ratio  reclaim ratio   matmul−anchor µs  into−anchor µs');
  for (const x of rows) {
    const goal = x.n >= 256 ? (x.ratio >= 0.97 ? ' ok' : ' <0.97') : '';
    console.log(
      `${x.dtype.padEnd(5)} ${String(x.n).padStart(5)} ${String(x.threads).padStart(4)} ${String(x.reps).padStart(5)} ${x.anchorGflops.toFixed(1).padStart(13)} ${x.oursGflops.toFixed(1).padStart(13)} ${x.ratio.toFixed(3).padStart(11)}${goal.padEnd(7)} ${x.ratioBest.toFixed(3).padStart(6)} ${x.intoRatio.toFixed(3).padStart(11)} ${x.reclaimRatio.toFixed(3).padStart(14)} ${x.overheadMicros.toFixed(1).padStart(17)} ${x.intoOverheadMicros.toFixed(1).padStart(15)}`,
    );
  }
  const small = rows.filter((x) => x.n === 64);
  if (small.length > 0) console.log(`fixed per-call overhead at n = 64 (median ours − anchor): ${small.map((x) => `${x.dtype}/${x.threads}t matmul ${x.overheadMicros.toFixed(1)} µs, into ${x.intoOverheadMicros.toFixed(1)} µs`).join('; ')}`);
  const big = rows.filter((x) => x.n >= 256);
  console.log(`ratio goal ≥ 0.97 for n ≥ 256: matmul ${big.filter((x) => x.ratio >= 0.97).length}/${big.length}, into ${big.filter((x) => x.intoRatio >= 0.97).length}/${big.length}, reclaim ${big.filter((x) => x.reclaimRatio >= 0.97).length}/${big.length} cases (median times)`);
}
