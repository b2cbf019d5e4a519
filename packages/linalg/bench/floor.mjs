#!/usr/bin/env node
// #38 item 6, linear algebra at the native floor: la.luFactor / cholesky / solve of an n×n f64
// (solve: one right-hand side) in a loop that drops its outputs and in one that disposes them,
// for the blas kind (provider-blas's LAPACK extension) against C dgetrf_/dpotrf_/dgesv_ on the
// same OpenBLAS with the same core type (bench/anchor/lapack-anchor.cc), and for the faer kind
// (the built-in Eigen kernels) against their own dispose loop and against C.
//
//   node bench/floor.mjs [--n 1024] [--threads 1] [--rounds 9] [--calls 8] [--ops luFactor,cholesky,solve] [--coretype X]
//
// Every contender has its own backend (a dropping loop's garbage fills its own pool, not the
// others'), is warmed up with 10 calls from an empty pool, and is then timed as whole loops of
// `--calls` calls (ms per call = loop time / calls, so a collection a dropping loop causes is
// paid where it happens); the rounds interleave C, dispose and drop for every kind, and each
// ratio is the median of the rounds' ratios (both sides of a ratio saw the same load). The C side
// is the anchor's mean per call over the same number of calls (its own copy of the input into a
// warm buffer first, as la copies). The drop loops' pool hit rate (tenferro:pool, outputs of the
// factor's size) and the load average before and after are printed with the figures.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { cpus, loadavg } from 'node:os';
import { startAnchorRunner } from './anchor/anchor-runner.mjs';
import { buildLapackAnchor } from './anchor/build-anchor.mjs';
import { arg, chooseCoretype } from './bench-args.mjs';

chooseCoretype();

const n = Number(arg('n', '1024'));
const threads = Number(arg('threads', '1'));
const rounds = Number(arg('rounds', '9'));
const calls = Number(arg('calls', '8'));
const ops = arg('ops', 'luFactor,cholesky,solve').split(',');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const now = () => Number(process.hrtime.bigint()) / 1e6;
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

// Started before anything large exists here: this process never forks (anchor-runner.mjs).
const runner = startAnchorRunner(buildLapackAnchor());

const { CpuBackend, DIAGNOSTICS_CHANNELS, Tensor } = await import('@tenferro/core');
const { createBlasProvider, status: blasStatus } = await import('@tenferro/provider-blas');
const { linalg } = await import('../dist/index.js');
if (!blasStatus().available) throw new Error('provider-blas is unavailable');

const a = new Float64Array(n * n);
for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) a[i + j * n] = (i === j ? n : 0) + 1 / (1 + Math.abs(i - j)) + 0.01 * Math.sin(Math.min(i, j) * 7 + Math.max(i, j) * 13);
const A = Tensor.from(a, [n, n]);
const B = Tensor.from(new Float64Array(n).map((_, i) => Math.sin(i)), [n, 1]);
const OPS = {
  luFactor: [(la) => la.luFactor(A), 'getrf'],
  cholesky: [(la) => la.cholesky(A), 'potrf'],
  solve: [(la) => la.solve(A, B), 'gesv'],
};
const dispose = (out) => {
  for (const x of Object.values(out ?? {})) x?.dispose?.();
  out?.dispose?.();
};

let anchor;
const cMs = async (routine) => {
  anchor = await runner.run([routine, String(n), String(threads), String(calls)]);
  return (anchor.seconds.reduce((s, x) => s + x, 0) / anchor.seconds.length) * 1e3;
};

// Pool events of the factor's size (n×n f64: the one output every op here has).
const factorBytes = 8 * n * n;
let pool = { hit: 0, miss: 0 };
const onPool = (e) => {
  if (e.bytes >= factorBytes && (e.kind === 'hit' || e.kind === 'miss')) pool[e.kind]++;
};

const kinds = ['blas', 'faer'];
const contenders = {};
for (const kind of kinds) {
  for (const style of ['dispose', 'drop']) {
    const backend = await CpuBackend.create({ kind, threads, providers: kind === 'blas' ? [createBlasProvider()] : [] });
    contenders[`${kind}.${style}`] = { kind, style, backend, la: linalg(backend) };
  }
}
const loop = async ({ style, la }, fn, count) => {
  const s = now();
  for (let i = 0; i < count; i++) {
    const out = await fn(la);
    if (style === 'dispose') dispose(out);
  }
  return (now() - s) / count;
};

console.log(`n=${n} threads=${threads} rounds=${rounds} calls=${calls}; ${cpus()[0]?.model}; OPENBLAS_CORETYPE=${process.env.OPENBLAS_CORETYPE ?? '(unset)'}; load before ${load()}`);
const results = {};
for (const op of ops) {
  const [fn, routine] = OPS[op];
  for (const c of Object.values(contenders)) await loop(c, fn, 10);
  const T = { c: [], hits: [], misses: [] };
  const ratio = {};
  for (const k of Object.keys(contenders)) T[k] = [];
  for (let r = 0; r < rounds; r++) {
    const c = await cMs(routine);
    T.c.push(c);
    const t = {};
    for (const [k, ct] of Object.entries(contenders)) {
      if (ct.style === 'drop') {
        pool = { hit: 0, miss: 0 };
        subscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
      }
      t[k] = await loop(ct, fn, calls);
      if (ct.style === 'drop') {
        unsubscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
        (ratio[`${ct.kind}.hits`] ??= []).push(pool.hit / Math.max(1, pool.hit + pool.miss));
      }
      T[k].push(t[k]);
    }
    for (const kind of kinds) {
      (ratio[`${kind} drop/C`] ??= []).push(c / t[`${kind}.drop`]);
      (ratio[`${kind} dispose/C`] ??= []).push(c / t[`${kind}.dispose`]);
      (ratio[`${kind} drop/dispose`] ??= []).push(t[`${kind}.dispose`] / t[`${kind}.drop`]);
    }
  }
  const m = Object.fromEntries(Object.entries(T).filter(([, v]) => v.length > 0).map(([k, v]) => [k, median(v)]));
  const q = Object.fromEntries(Object.entries(ratio).map(([k, v]) => [k, median(v)]));
  results[op] = { ms: m, ratios: q };
  console.log(
    `${op.padEnd(9)} ms/call: C ${m.c.toFixed(2)} | blas dispose ${m['blas.dispose'].toFixed(2)} drop ${m['blas.drop'].toFixed(2)} | faer dispose ${m['faer.dispose'].toFixed(2)} drop ${m['faer.drop'].toFixed(2)}` +
      ` || blas drop/C ${q['blas drop/C'].toFixed(3)} (≥ 0.9) dispose/C ${q['blas dispose/C'].toFixed(3)} (≥ 0.95) | faer drop/dispose ${q['faer drop/dispose'].toFixed(3)} (≥ 0.9) dispose/C ${q['faer dispose/C'].toFixed(3)} drop/C ${q['faer drop/C'].toFixed(3)} (≥ 0.6)` +
      ` | drop-loop pool hits blas ${(100 * q['blas.hits']).toFixed(0)} % faer ${(100 * q['faer.hits']).toFixed(0)} %`,
  );
}
console.log(`load after ${load()}; anchor core ${anchor?.core}; anchor config ${anchor?.config}`);
if (process.argv.includes('--json')) console.log(JSON.stringify(results));
for (const c of Object.values(contenders)) await c.backend.close();
A.dispose();
B.dispose();
runner.close();
