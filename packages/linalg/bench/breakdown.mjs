#!/usr/bin/env node
// Where the time of la.luFactor/cholesky/qr/eigh/svd through provider-blas goes, next to the C
// anchor (bench/anchor/lapack-anchor.cc), at one n and thread count, measured in one process:
//   node bench/breakdown.mjs [--n 1024] [--threads 1] [--reps 7] [--ops luFactor,cholesky]
// Rows (median ms, alternated call by call so that both see the same load):
//   la        the full la.* call (outputs disposed after each: their storage goes back to the pool)
//   native    provider-blas's native lapack() on this thread with warm outputs (the copy of the
//             input, the LAPACK routine and the output conversions; no worker, no pool, no JS)
//   native-cold  the same into freshly allocated (never touched) output buffers
//   C         the anchor (child process; its own copy of the input into a warm buffer per call)
//   memcpy    one n×n f64 copy into a warm buffer (what LAPACK's in-place overwrite costs)
//   hop       la.* of a 1×1 matrix right after an n×n one (the worker asleep by then, as before
//             each la call): admission, fresh outputs, waking the worker and being woken by it,
//             the info check — the fixed cost of one call
//   hop-hot   the same in a loop of 1×1 calls (worker and main thread awake)
// plus the buffer pool's hits/misses during the la calls, and both sides' OpenBLAS core/threads.
import { readFileSync } from 'node:fs';
import { startAnchorRunner } from './anchor/anchor-runner.mjs';
import { buildLapackAnchor } from './anchor/build-anchor.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
};
if (arg('coretype')) process.env.OPENBLAS_CORETYPE = arg('coretype');
else if (/\bavx512f\b/.test(readFileSync('/proc/cpuinfo', 'utf8'))) process.env.OPENBLAS_CORETYPE = 'SkylakeX';

const { CpuBackend, Tensor } = await import('@tenferro/core');
const { createBlasProvider } = await import('@tenferro/provider-blas');
const { linalg } = await import('../dist/index.js');
const blasDist = new URL('../node_modules/@tenferro/provider-blas/dist/', import.meta.url);
const { loadBlas } = await import(new URL('native/load.js', blasDist).href);

const n = Number(arg('n', '1024'));
const threads = Number(arg('threads', '1'));
const reps = Number(arg('reps', '7'));
const ops = arg('ops', 'luFactor,cholesky,qr,eigh,svd').split(',');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const now = () => Number(process.hrtime.bigint()) / 1e6;

function spdData(k) {
  const d = new Float64Array(k * k);
  for (let j = 0; j < k; j++) for (let i = 0; i < k; i++) d[i + j * k] = (i === j ? k : 0) + 1 / (1 + Math.abs(i - j)) + 0.01 * Math.sin(Math.min(i, j) * 7 + Math.max(i, j) * 13);
  return d;
}
const dispose = (out) => {
  for (const x of Object.values(out ?? {})) x?.dispose?.();
  out?.dispose?.();
};

// op → [la call, anchor routine, native op code, flags, output byte sizes]
const OPS = {
  luFactor: [(la, a) => la.luFactor(a), 'getrf', 2, 0, [8 * n * n, 4 * n, 8]],
  cholesky: [(la, a) => la.cholesky(a), 'potrf', 0, 0, [8 * n * n, 8, 8]],
  qr: [(la, a) => la.qr(a), 'qr', 5, 0, [8 * n * n, 8 * n * n, 8]],
  eigh: [(la, a) => la.eigh(a), 'syevd', 7, 16, [8 * n, 8 * n * n, 8]],
  svd: [(la, a) => la.svd(a), 'gesdd', 6, 16 | 8, [8 * n * n, 8 * n, 8 * n * n]],
};

const data = spdData(n);
const A = Tensor.from(data, [n, n]);
const a1 = Tensor.from(new Float64Array([4]), [1, 1]);

// The anchor is spawned by a helper started before anything large exists here: this process
// never forks (a fork write-protects every warm page here; see bench/anchor/anchor-runner.mjs).
const runner = startAnchorRunner(buildLapackAnchor());
let anchorInfo;
const cMs = async (routine) => {
  anchorInfo = await runner.run([routine, String(n), String(threads), '1']);
  return anchorInfo.median * 1e3;
};

const backend = await CpuBackend.create({ kind: 'blas', threads, providers: [createBlasProvider()] });
const la = linalg(backend);
await la.cholesky(a1).then(dispose);

// The addon on this thread: the same library and core type as the workers (the env is set above).
const load = loadBlas();
if (!load.available) throw new Error(load.reasons.join('; '));
const binding = load.binding;
const outcome = binding.load({ candidates: [] });
const info = binding.info();
console.log(`provider runtime (this process): ${outcome.library} → ${info.runtimePath}; ${info.config}; core ${info.coreName}`);
const src = new Uint8Array(new SharedArrayBuffer(8 * n * n));
new Float64Array(src.buffer).set(data);
const infoWords = new Int32Array(new SharedArrayBuffer(8));
const words = (op, flags) => new Float64Array([op, 1, n, n, flags, threads, 0, 0, 1, n, 0, 1, n, 0, 0, 0]);
const warmOuts = (sizes) => sizes.map((b) => { const u = new Uint8Array(new SharedArrayBuffer(b)); u.fill(1); return u; });

const mcDst = new Float64Array(n * n).fill(1);
const mc = [];
for (let r = 0; r < 9; r++) { const s = now(); mcDst.set(data); mc.push(now() - s); }

console.log(`n=${n} threads=${threads} reps=${reps}; OPENBLAS_CORETYPE=${process.env.OPENBLAS_CORETYPE}; memcpy (TypedArray.set, warm) ${median(mc).toFixed(3)} ms`);
{
  const hh = [];
  for (let r = 0; r < 60; r++) { const s = now(); dispose(await la.cholesky(a1)); hh.push(now() - s); }
  console.log(`hop-hot (la.cholesky of 1×1 in a loop): ${median(hh.slice(10)).toFixed(3)} ms`);
}
const statsBefore = backend.bufferPoolStats?.();
for (const name of ops) {
  const [fn, routine, code, flags, sizes] = OPS[name];
  const w = words(code, flags);
  const warm = warmOuts(sizes);
  const native = (outs) => {
    const s = now();
    const st = binding.lapack(w, src, src, outs[0], outs[1], outs[2], infoWords);
    const t = now() - s;
    if (st !== 0 || infoWords[0] !== 0) throw new Error(`native ${name}: status ${st} info ${infoWords[0]}`);
    return t;
  };
  dispose(await fn(la, A));
  native(warm);
  const T = { la: [], native: [], cold: [], c: [], hop: [] };
  for (let r = 0; r < reps; r++) {
    T.c.push(await cMs(routine));
    let s = now();
    const out = await fn(la, A);
    T.la.push(now() - s);
    dispose(out);
    T.native.push(native(warm));
    T.cold.push(native(sizes.map((b) => new Uint8Array(new SharedArrayBuffer(b)))));
  }
  // After the rounds: a call of another kind releases a workspace past 64 MiB kept for this op.
  for (let r = 0; r < reps; r++) {
    dispose(await fn(la, A));
    const s = now();
    dispose(await fn(la, a1));
    T.hop.push(now() - s);
  }
  const m = Object.fromEntries(Object.entries(T).map(([k, v]) => [k, median(v)]));
  console.log(`${name.padEnd(9)} la ${m.la.toFixed(3)}  native ${m.native.toFixed(3)}  native-cold ${m.cold.toFixed(3)}  C ${m.c.toFixed(3)}  hop(1×1) ${m.hop.toFixed(3)} | C/la ${(m.c / m.la).toFixed(3)}  C/native ${(m.c / m.native).toFixed(3)}  la−native ${(m.la - m.native).toFixed(3)}  native−C ${(m.native - m.c).toFixed(3)}`);
}
const stats = backend.bufferPoolStats?.();
if (stats !== undefined) console.log(`buffer pool: ${JSON.stringify(stats)} (before: ${JSON.stringify(statsBefore)})`);
console.log(`anchor core ${anchorInfo?.core}; anchor config ${anchorInfo?.config}`);
A.dispose();
a1.dispose();
await backend.close();
runner.close();
