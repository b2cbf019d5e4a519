#!/usr/bin/env node
// Where the time of la.luFactor/cholesky/solve/qr/eigh/svd through provider-blas goes, next to the
// C anchor (bench/anchor/lapack-anchor.cc), at one n and thread count, measured in one process —
// the per-call breakdown #38 item 6 asks for (copy-in, kernel, fresh outputs, admission):
//   node bench/breakdown.mjs [--n 1024] [--threads 1] [--reps 7] [--ops luFactor,cholesky,solve]
// Rows (median ms, alternated call by call so that both see the same load):
//   la        the full la.* call (outputs disposed after each: their storage goes back to the pool),
//             split by tenferro:task into the main thread's work before the post, the worker's
//             start lag, the kernel on the worker, the main thread's wake-up and its work after
//   drop      the same call with its outputs dropped (a backend of its own, warmed up with 10
//             calls), and its pool hits for the factor's size
//   native    provider-blas's worker kernel (kernels/lapack.js) on this thread on the words its own
//             packing (lapackKernelArgs) makes, warm outputs: the copy of the input, the LAPACK
//             routine and the output conversions; no worker, no pool, no admission
//   native-cold  the same into freshly allocated (never touched) output buffers: what a pool miss costs
//   C         the anchor (child process; its own copy of the input into a warm buffer per call)
//   memcpy    one n×n f64 copy into a warm buffer (what LAPACK's in-place overwrite costs)
//   hop       la.* of a 1×1 matrix right after an n×n one (the worker asleep by then, as before
//             each la call): admission, fresh outputs, waking the worker and being woken by it,
//             the info check — the fixed cost of one call
//   hop-hot   the same in a loop of 1×1 calls (worker and main thread awake), split as la is, and
//             the promises one call makes
// plus the buffer pool's hits/misses during the la calls, and both sides' OpenBLAS core/threads.
// solve has one right-hand side, as the anchor's dgesv_.
import { createHook } from 'node:async_hooks';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { loadavg } from 'node:os';
import { startAnchorRunner } from './anchor/anchor-runner.mjs';
import { buildLapackAnchor } from './anchor/build-anchor.mjs';
import { arg, chooseCoretype } from './bench-args.mjs';

chooseCoretype();

const { CpuBackend, DIAGNOSTICS_CHANNELS, Tensor } = await import('@tenferro/core');
const { createBlasProvider } = await import('@tenferro/provider-blas');
const { linalg } = await import('../dist/index.js');
const blasDist = new URL('../node_modules/@tenferro/provider-blas/dist/', import.meta.url);
const { loadBlas } = await import(new URL('native/load.js', blasDist).href);
// The provider's own packing and its worker kernel, called on this thread: the bench never mirrors
// the descriptor format (it did, and broke when the output descriptors gained offsets).
const { lapackKernelArgs } = await import(new URL('lapack-kernels.js', blasDist).href);
const { blasLapack } = await import(new URL('kernels/lapack.js', blasDist).href);
const { linalgOutputSpecs } = await import('../dist/index.js');

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

// op → [la call, anchor routine, flags]
const FLAGS = { upper: false, left: false, unitDiagonal: false, full: false, vectors: true, rOnly: false };
const OPS = {
  luFactor: [(la, a) => la.luFactor(a), 'getrf', FLAGS],
  cholesky: [(la, a) => la.cholesky(a), 'potrf', FLAGS],
  solve: [(la, a) => la.solve(a, a === a1 ? b1 : B), 'gesv', FLAGS],
  qr: [(la, a) => la.qr(a), 'qr', FLAGS],
  eigh: [(la, a) => la.eigh(a), 'syevd', FLAGS],
  svd: [(la, a) => la.svd(a), 'gesdd', FLAGS],
};
const ELEMENT = { f64: 8, i32: 4 };

const data = spdData(n);
const A = Tensor.from(data, [n, n]);
const a1 = Tensor.from(new Float64Array([4]), [1, 1]);
// la.solve's right-hand side: one column, as the anchor's dgesv_ (nrhs = 1).
const bData = new Float64Array(n).map((_, i) => Math.sin(i));
const B = Tensor.from(bData, [n, 1]);
const b1 = Tensor.from(new Float64Array([2]), [1, 1]);

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
const dropping = await CpuBackend.create({ kind: 'blas', threads, providers: [createBlasProvider()] });
const laDrop = linalg(dropping);

// The addon on this thread: the same library and core type as the workers (the env is set above).
const load = loadBlas();
if (!load.available) throw new Error(load.reasons.join('; '));
const binding = load.binding;
const outcome = binding.load({ candidates: [] });
const info = binding.info();
console.log(`provider runtime (this process): ${outcome.library} → ${info.runtimePath}; ${info.config}; core ${info.coreName}`);
const src = new Uint8Array(new SharedArrayBuffer(8 * n * n));
new Float64Array(src.buffer).set(data);
const bSrc = new Uint8Array(new SharedArrayBuffer(8 * n));
new Float64Array(bSrc.buffer).set(bData);
const infoWords = new Int32Array(new SharedArrayBuffer(8));
const operand = (u) => ({ buffer: u.buffer, offset: 0, rowStride: 1, colStride: n, batchStrides: [] });
// The request the kernels get for `name` at n, over `outs` (one buffer per output slot, or undefined).
const cols = (name) => (name === 'solve' ? 1 : n);
const request = (name, flags, outs) => ({
  op: name, dtype: 'f64', m: n, n: cols(name), batch: [], flags, a: operand(src), ...(name === 'solve' ? { b: operand(bSrc) } : {}),
  out: linalgOutputSpecs(name, 'f64', n, cols(name), [], flags).map((spec, o) => (spec === undefined ? undefined : { buffer: outs[o].buffer, offset: 0, dtype: spec[0], shape: spec[1] })),
  info: infoWords,
});
const outBytes = (name, flags) => linalgOutputSpecs(name, 'f64', n, cols(name), [], flags).map((spec) => (spec === undefined ? 0 : spec[1].reduce((p, e) => p * e, 1) * ELEMENT[spec[0]]));
const fresh = (sizes) => sizes.map((b) => (b === 0 ? undefined : new Uint8Array(new SharedArrayBuffer(b))));
const warmOuts = (sizes) => fresh(sizes).map((u) => (u === undefined ? undefined : u.fill(1)));

const mcDst = new Float64Array(n * n).fill(1);
const mc = [];
for (let r = 0; r < 9; r++) { const s = now(); mcDst.set(data); mc.push(now() - s); }

const mcMs = median(mc);
console.log(`n=${n} threads=${threads} reps=${reps}; OPENBLAS_CORETYPE=${process.env.OPENBLAS_CORETYPE}; memcpy (TypedArray.set, warm) ${mcMs.toFixed(3)} ms; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
{
  const H = { all: [], pre: [], lag: [], run: [], wake: [], post: [] };
  let task;
  const onTask = (e) => { task = e; };
  subscribe(DIAGNOSTICS_CHANNELS.task, onTask);
  for (let r = 0; r < 400; r++) {
    const s0 = process.hrtime.bigint();
    const out = await la.cholesky(a1);
    const s1 = process.hrtime.bigint();
    dispose(out);
    if (r < 50) continue;
    H.all.push(Number(s1 - s0) / 1e3);
    H.pre.push(Number(task.postedAt - s0) / 1e3);
    H.lag.push(Number(task.startLagNs) / 1e3);
    H.run.push(Number(task.runNs) / 1e3);
    H.wake.push(Number(task.wakeNs) / 1e3);
    H.post.push(Number(s1 - task.time) / 1e3);
  }
  unsubscribe(DIAGNOSTICS_CHANNELS.task, onTask);
  // Promises one call makes (an async_hooks init hook over 200 warm calls; the loop's own await not counted).
  let promises = 0;
  const hook = createHook({ init: (_id, type) => void (type === 'PROMISE' && promises++) });
  hook.enable();
  try {
    for (let r = 0; r < 200; r++) dispose(await la.cholesky(a1));
  } finally {
    hook.disable();
  }
  const m = (k) => median(H[k]).toFixed(1);
  console.log(`hop-hot (la.cholesky of 1×1 in a loop, median µs of 350): ${m('all')} = before the post ${m('pre')} + start lag ${m('lag')} + kernel ${m('run')} + wake ${m('wake')} + after the answer ${m('post')}; ${(promises / 200 - 1).toFixed(1)} promises a call`);
}
const statsBefore = backend.bufferPoolStats?.();
for (const name of ops) {
  const [fn, routine, flags] = OPS[name];
  const sizes = outBytes(name, flags);
  const warm = warmOuts(sizes);
  // provider-blas's worker kernel on this thread, on the words its own packing makes.
  const native = (outs) => {
    const args = lapackKernelArgs(name, request(name, flags, outs), threads);
    const s = now();
    blasLapack(args);
    const t = now() - s;
    if (infoWords[0] !== 0) throw new Error(`native ${name}: info ${infoWords[0]}`);
    return t;
  };
  dispose(await fn(la, A));
  for (let r = 0; r < 10; r++) await fn(laDrop, A); // the dropping loop's warm-up, from an empty pool
  native(warm);
  const T = { la: [], drop: [], native: [], cold: [], c: [], hop: [], pre: [], lag: [], run: [], wake: [], post: [] };
  let hits = 0, misses = 0;
  const onPool = (e) => {
    if (e.bytes >= sizes[0]) e.kind === 'hit' ? hits++ : e.kind === 'miss' ? misses++ : 0;
  };
  for (let r = 0; r < reps; r++) {
    T.c.push(await cMs(routine));
    // The la call split by tenferro:task (its one kernel task): main-thread work before the post
    // (validation, admission, fresh outputs, the request), the worker's start lag, the kernel on the
    // worker (copy-in, LAPACK, output conversions), the main thread's wake-up, and its work after.
    let task;
    const onTask = (e) => { task = e; };
    subscribe(DIAGNOSTICS_CHANNELS.task, onTask);
    const s0 = process.hrtime.bigint();
    const out = await fn(la, A);
    const s1 = process.hrtime.bigint();
    unsubscribe(DIAGNOSTICS_CHANNELS.task, onTask);
    T.la.push(Number(s1 - s0) / 1e6);
    T.pre.push(Number(task.postedAt - s0) / 1e6);
    T.lag.push(Number(task.startLagNs) / 1e6);
    T.run.push(Number(task.runNs) / 1e6);
    T.wake.push(Number(task.wakeNs) / 1e6);
    T.post.push(Number(s1 - task.time) / 1e6);
    dispose(out);
    // The same call with its outputs dropped, on a backend of its own (its garbage fills its own pool).
    subscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
    const s = now();
    await fn(laDrop, A);
    T.drop.push(now() - s);
    unsubscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
    T.native.push(native(warm));
    T.cold.push(native(fresh(sizes)));
  }
  // After the rounds: a call of another kind releases a workspace past 64 MiB kept for this op.
  for (let r = 0; r < reps; r++) {
    dispose(await fn(la, A));
    const s = now();
    dispose(await fn(la, a1));
    T.hop.push(now() - s);
  }
  const m = Object.fromEntries(Object.entries(T).map(([k, v]) => [k, median(v)]));
  const f = (x) => x.toFixed(3);
  console.log(`${name.padEnd(9)} la ${f(m.la)}  drop ${f(m.drop)}  native ${f(m.native)}  native-cold ${f(m.cold)}  C ${f(m.c)}  hop(1×1) ${f(m.hop)} | C/la ${(m.c / m.la).toFixed(3)}  C/drop ${(m.c / m.drop).toFixed(3)}  C/native ${(m.c / m.native).toFixed(3)}  la−native ${f(m.la - m.native)}  native−C ${f(m.native - m.c)}`);
  console.log(
    `${''.padEnd(9)} parts (ms): copy-in ≈ memcpy ${f(mcMs)} (inside the kernel, as C's) | kernel on the worker ${f(m.run)} (native here ${f(m.native)}, C ${f(m.c)}) | fresh outputs: pool hits ${hits}/${hits + misses} in the drop loop (a miss: native-cold − native = ${f(m.cold - m.native)}) | admission and main thread: before the post ${f(m.pre)}, start lag ${f(m.lag)}, wake ${f(m.wake)}, after the answer ${f(m.post)}`,
  );
}
const stats = backend.bufferPoolStats?.();
if (stats !== undefined) console.log(`buffer pool: ${JSON.stringify(stats)} (before: ${JSON.stringify(statsBefore)})`);
console.log(`anchor core ${anchorInfo?.core}; anchor config ${anchorInfo?.config}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
A.dispose();
B.dispose();
b1.dispose();
a1.dispose();
await backend.close();
await dropping.close();
runner.close();
