#!/usr/bin/env node
// The hot path: what a user's `c = await backend.matmul(a, b)` costs against the native floor.
//
//   node bench/hot-path.bench.mjs [--quick] [--json] [--sizes 64,256] [--only breakdown|table|batched|timeline|fresh-memory]
//       [--base <built checkout>]
//
// `--only fresh-memory [--base <checkout>]` runs bench/fresh-memory.bench.mjs (#38): the n = 1024
// drop / dispose / into triple with the drop loop's pool hit rate, the 8 MiB first-touch cost with
// and without huge pages, and peak RSS with and without huge-page advice and pre-faulting.
//
// Three parts, each measured in interleaved rounds (every contender once per round, the median of
// per-round medians reported), anchors measured in the same run:
//  1. Per-call breakdown at n = 64 on a 1-thread faer backend (with the promises each call creates): the C call (`cblas_?gemm` in a C
//     program), the native kernel called directly, an empty execution, validation, planning, the
//     provider's own work, then `matmul` with a fresh output handed back with `dispose()`, the plain
//     loop that drops its outputs, and `dotGeneralInto` a reused output; goal 1 is checked for
//     both loops. Its budget is the C call + 3 µs + the empty execution of `--base` (#38 item 7:
//     as measured at 9ce24f7), sampled once per round in a child process running that checkout
//     (bench/empty-execution-child.mjs) beside this tree's measured the same way; without `--base`,
//     this tree's as measured in this process. Every part is reported twice: the median call, and
//     the loop's mean per call (its total ÷ calls: collections, event-loop turns and every slow call
//     included — what a program waits; the C anchor's too), and goal 1 is checked on both.
//  2. The table: faer and blas kinds, 1 and 2 threads, f32/f64/c64, loop styles dispose / tidy /
//     drop / into, as GFLOP/s and as a ratio of C in the same run; onnxruntime-node `MatMul` when
//     bench/peers is installed (`cd bench/peers && ONNXRUNTIME_NODE_INSTALL=skip npm i --ignore-scripts`).
//  3. Batched small GEMMs (`dotGeneral` with a batch axis, and `gemmGrouped` with one job per
//     matrix): 10,000 × 8×8 and 1,000 × 32×32 f64 against onnxruntime-node's batched MatMul and a
//     C loop calling `cblas_dgemm` per matrix.
//  4. Where a call's time goes (`--only timeline`): `dotGeneralInto` at n = 64 to 512 (of
//     --sizes), faer f64, 1 and 2 threads, split by the `tenferro:task` channel into main-thread
//     work before the post, the tasks' start lag, their run, the wake-up and the main-thread work
//     after; beside it the C cache-retention probe (bench/anchor/cache-retention.c), which shows
//     how much slower any code runs after a wait of that length on this machine.
//
// OpenBLAS's core type: `--coretype X` when given, else SkylakeX on an AVX-512 CPU (the right
// kernels; OpenBLAS 0.3.21 picks a slower one on these VMs, and this machine's environment may
// preset OPENBLAS_CORETYPE=Haswell), else the environment's. The anchor and the blas provider run
// with the same one, and the bench prints it.
import { createHook } from 'node:async_hooks';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';

if (process.argv.includes('fresh-memory') && process.argv[process.argv.indexOf('fresh-memory') - 1] === '--only') {
  const rest = process.argv.slice(2).filter((a, i, all) => a !== '--only' && !(a === 'fresh-memory' && all[i - 1] === '--only'));
  const r = spawnSync(process.execPath, [new URL('./fresh-memory.bench.mjs', import.meta.url).pathname, ...rest], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

// Contenders are isolated by a collection before each one (a loop that drops its outputs leaves
// garbage that would otherwise be collected during the next contender): rerun with --expose-gc.
if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, process.argv[1], ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, readFileSync } from 'node:fs';
import { collectGarbage } from './collect-garbage.mjs';
import { perCallStats } from './measure.mjs';
import { fileURLToPath } from 'node:url';

const avx512 = /\bavx512f\b/.test(readFileSync('/proc/cpuinfo', 'utf8'));
const coretypeArg = process.argv.indexOf('--coretype');
if (coretypeArg !== -1) process.env.OPENBLAS_CORETYPE = process.argv[coretypeArg + 1];
else if (avx512) process.env.OPENBLAS_CORETYPE = 'SkylakeX';

const { CpuBackend, Tensor, defineKernel } = await import('../dist/index.js');
const { validateDotGeneral } = await import('../dist/contraction/validate-dot-general.js');
const { analyseGemm } = await import('../dist/contraction/gemm-plan.js');
const { analysisKey } = await import('../dist/contraction/gemm-analysis-cache.js');
const { NumberKeyCache } = await import('../dist/util/number-key.js');
const { validateGemmRequest } = await import('../dist/index.js');
const { trustedGemmRequest } = await import('../dist/provider/validate-gemm-request.js');

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const json = args.includes('--json');
const arg = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const only = arg('--only');
const sizes = (arg('--sizes') ?? (quick ? '64,256,1024' : '16,64,256,512,1024,2048')).split(',').map(Number);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const log = (...xs) => {
  if (!json) console.log(...xs);
};

// ---- contenders ---------------------------------------------------------------------------
const faerDist = `${repo}packages/provider-faer/dist/index.js`;
const blasDist = `${repo}packages/provider-blas/dist/index.js`;
const faer = existsSync(faerDist) ? await import(faerDist) : undefined;
const blas = existsSync(blasDist) ? await import(blasDist) : undefined;
const { loadOrt, ortMatmul, settleOrt } = await import(`${repo}bench/peers/onnx-matmul.mjs`);
const ort = loadOrt();
const { buildAnchor, buildCacheProbe } = await import(`${repo}bench/anchor/build-anchor.mjs`);
let anchorBin;
try {
  anchorBin = buildAnchor();
} catch (e) {
  log(`C anchor unavailable: ${e.message}`);
}

const results = { machine: {}, breakdown: {}, table: [], batched: [], timeline: [] };
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** The median call and the loop's mean per call of `fn` (`perCallStats`, measure.mjs), after a young-generation collection. */
async function perCallBoth(fn, calls, warm = Math.min(200, calls)) {
  await collectGarbage();
  return perCallStats(fn, calls, warm);
}

/** Per-call µs of `fn`: its median call ({@link perCallBoth}). */
async function perCall(fn, calls, warm = Math.min(200, calls)) {
  return (await perCallBoth(fn, calls, warm)).median;
}

/** Promises `fn` creates per call, counted by an async_hooks init hook over 200 warm calls. */
async function promisesPerCall(fn) {
  for (let i = 0; i < 50; i++) await fn();
  let count = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') count++;
    },
  });
  hook.enable();
  try {
    for (let i = 0; i < 200; i++) await fn();
  } finally {
    hook.disable();
  }
  return count / 200 - 1; // the loop's own await of each call
}

/** The anchor's median µs per rep. */
function anchorMicros(dtype, n, threads, reps, batch = 1) {
  return anchorStats(dtype, n, threads, reps, batch)?.median;
}

/** The anchor's median µs per rep and its mean (the loop's total ÷ reps). */
function anchorStats(dtype, n, threads, reps, batch = 1) {
  if (anchorBin === undefined) return undefined;
  const letter = { f64: 'd', f32: 's', c128: 'z', c64: 'c' }[dtype];
  const out = JSON.parse(execFileSync(anchorBin, [letter, String(n), String(threads), String(reps), String(batch)], { encoding: 'utf8' }));
  results.machine.openblasCore = out.core;
  return { median: median(out.seconds) * 1e6, mean: (out.seconds.reduce((a, b) => a + b, 0) / out.seconds.length) * 1e6 };
}

const backends = new Map();
async function backend(kind, threads) {
  const key = `${kind}/${threads}`;
  if (!backends.has(key)) {
    const provider = kind === 'faer' ? faer?.createFaerProvider() : blas?.createBlasProvider();
    backends.set(key, provider === undefined ? undefined : await CpuBackend.create({ kind, threads, providers: [provider] }).catch(() => undefined));
  }
  return backends.get(key);
}

function operands(dtype, shape, seed) {
  const size = shape.reduce((a, b) => a * b, 1) * (dtype === 'c64' || dtype === 'c128' ? 2 : 1);
  return Tensor.fromArray(dtype, shape, Array.from({ length: size }, (_, i) => (((i * 2654435761 + seed) >>> 0) % 16) / 4 - 2));
}

/** The loop styles of the table: what each iteration does. */
function styles(b, x, y, dims) {
  const op = dims === undefined ? () => b.matmul(x, y) : () => b.dotGeneral(x, y, dims);
  const out = dims === undefined ? Tensor.zeros(x.dtype, [x.shape[0], y.shape[1]]) : undefined;
  return {
    dispose: async () => (await op()).dispose(),
    // The tidy idiom: the scope disposes what it made and does not return.
    tidy: () =>
      b.tidy(async () => {
        await op();
      }),
    drop: op,
    ...(out === undefined ? {} : { into: () => b.dotGeneralInto(out, x, y, { contracting: [[1], [0]] }) }),
  };
}

/**
 * The empty execution of a built `checkout`, measured in a child process (two copies of
 * @tenferro/os in one process would share, or refuse, one arbiter): one sample per `sample` call.
 */
function emptyExecutionChild(checkout) {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./empty-execution-child.mjs', import.meta.url)), checkout], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`the empty-execution child of ${checkout} ended early`);
    return JSON.parse(value);
  };
  const ready = next();
  return {
    /** The median call and the loop's mean per call, µs. */
    async sample(calls) {
      await ready;
      child.stdin.write(`${calls}\n`);
      const { micros, meanMicros } = await next();
      return { median: micros, mean: meanMicros };
    },
    close: () => child.stdin.end(),
  };
}
const baseCheckout = arg('--base');

// ---- 1. per-call breakdown ------------------------------------------------------------------
async function breakdown() {
  const b = await backend('faer', 1);
  if (b === undefined) return log('breakdown: provider-faer unavailable');
  const { faerGemm, packGemmTask } = await import(`${repo}packages/provider-faer/dist/kernels/gemm.js`);
  const noop = defineKernel(new URL('./noop-kernel.mjs', import.meta.url), 'noop');
  // The dropping loop runs on a backend of its own: the storage its garbage brings home fills that
  // backend's pool, not the one the other parts measure (the cap evicts the smallest buffers first,
  // R113, so thousands of collected 64×64 f64 buffers left no room for the f32 parts' outputs).
  const dropping = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [faer.createFaerProvider()] });
  // `--base`: that checkout's empty execution and this tree's, each measured the same way (a lean child process).
  const baseEmpty = baseCheckout === undefined ? undefined : emptyExecutionChild(baseCheckout);
  const thisEmpty = baseCheckout === undefined ? undefined : emptyExecutionChild(repo);
  try {
    const n = 64;
    const rounds = quick ? 5 : 11;
    const calls = quick ? 400 : 1000;
    for (const dtype of ['f64', 'f32']) {
      const a = operands(dtype, [n, n], 1);
      const c = operands(dtype, [n, n], 2);
      const out = Tensor.zeros(dtype, [n, n]);
      const dims = { contracting: [[1], [0]] };
      const spec = validateDotGeneral('bench', a, c, dims, {}, { out });
      const operand = (t) => Object.freeze({ buffer: t.buffer, offset: t.offset, rowStride: 1, colStride: n, batchStrides: Object.freeze([]) });
      // As core hands it to the provider: frozen and marked as checked, so the provider's validation answers at once.
      const request = trustedGemmRequest({ dtype, m: n, n, k: n, batch: Object.freeze([]), lhs: operand(a), rhs: operand(c), out: operand(out), alpha: 1, beta: 0, conjLhs: false, conjRhs: false });
      const task = { request, isa: -1, m0: 0, m1: n, n0: 0, n1: n, b0: 0, b1: 1 };
      const cache = new NumberKeyCache(16);
      const parts = {
        validation: () => validateDotGeneral('bench', a, c, dims, {}),
        planning: () => {
          const key = analysisKey(spec, out.strides);
          let hit = cache.get(key);
          if (hit === undefined) cache.set(key, (hit = analyseGemm(spec, out.strides)));
          return hit;
        },
        provider: () => {
          validateGemmRequest('gemm', request);
          return packGemmTask(task);
        },
        native: () => faerGemm(packGemmTask(task)),
        admission: () => b.install(() => undefined),
        emptyExecution: () => b.install((ctx) => ctx.run(noop)),
        matmulDispose: async () => (await b.matmul(a, c)).dispose(),
        matmulDrop: () => dropping.matmul(a, c),
        into: () => b.dotGeneralInto(out, a, c, dims),
      };
      const ortRun = ort === undefined ? undefined : await ortMatmul(ort, dtype, [], n, 1);
      if (ortRun !== undefined) parts.onnxruntime = ortRun.run;
      const names = [...Object.keys(parts), 'c', ...(baseEmpty === undefined ? [] : ['baseEmpty', 'thisEmpty'])];
      // Each part's median call and its loop's mean per call (`<part>Mean`), per round.
      const perRound = Object.fromEntries(names.flatMap((k) => [[k, []], [`${k}Mean`, []]]));
      const push = (name, stats) => {
        perRound[name].push(stats.median);
        perRound[`${name}Mean`].push(stats.mean);
      };
      // The loop that drops its outputs runs after the others, not among them: the collections and
      // finalizers its garbage brings spill into whatever runs next (interleaved, it made the empty
      // execution 0.3 µs and a disposing matmul 0.5 µs slower).
      const { matmulDrop, ...interleaved } = parts;
      for (let r = 0; r < rounds; r++) {
        for (const [name, fn] of Object.entries(interleaved)) push(name, await perCallBoth(fn, calls));
        const cStats = anchorStats(dtype, n, 1, calls);
        if (cStats !== undefined) push('c', cStats);
        if (baseEmpty !== undefined) {
          push('baseEmpty', await baseEmpty.sample(calls));
          push('thisEmpty', await thisEmpty.sample(calls));
        }
      }
      // Its cost comes in collections, one per ~1,000–2,000 calls at this size (#38): each round is a
      // window of 20 × `calls` calls, after as many to reach the steady state; a round of `calls`
      // alone mostly missed them, and the median of such rounds left them out.
      await perCall(matmulDrop, calls * 20);
      for (let r = 0; r < rounds; r++) push('matmulDrop', await perCallBoth(matmulDrop, calls * 20));
      ortRun?.release();
      const m = Object.fromEntries(Object.entries(perRound).filter(([, v]) => v.length > 0).map(([k, v]) => [k, median(v)]));
      m.budget = (m.baseEmpty ?? m.emptyExecution) + (m.c ?? NaN) + 3;
      m.goal1 = m.matmulDispose <= m.budget;
      m.goal1Drop = m.matmulDrop <= m.budget;
      // The same goal on what the loops pay: each part's mean per call.
      m.budgetMean = (m.baseEmptyMean ?? m.emptyExecutionMean) + (m.cMean ?? NaN) + 3;
      m.goal1Mean = m.matmulDisposeMean <= m.budgetMean;
      m.goal1DropMean = m.matmulDropMean <= m.budgetMean;
      m.hopAndEntry = m.emptyExecution - m.admission;
      m.unexplained = m.matmulDispose - (m.validation + m.planning + m.emptyExecution + m.provider + m.native);
      // Promises created per call (a task that outlasts the blocking poll adds those of the event-loop
      // polling): each costs more while AsyncLocalStorage's hooks are on.
      for (const [name, key] of [['emptyExecution', 'promisesEmpty'], ['matmulDispose', 'promisesMatmul'], ['into', 'promisesInto']]) m[key] = await promisesPerCall(parts[name]);
      results.breakdown[dtype] = m;
    }
  } finally {
    await dropping.close();
    baseEmpty?.close();
    thisEmpty?.close();
  }
  log('\n1. Per-call cost, n = 64, faer, 1 thread (median µs of interleaved rounds)');
  const rows = [
    ['C cblas call', 'c'],
    ['native kernel, direct', 'native'],
    ['validation', 'validation'],
    ['planning (analysis cache hit)', 'planning'],
    ['admission (install, no task)', 'admission'],
    ['empty execution (install + hop)', 'emptyExecution'],
    ...(baseEmpty === undefined
      ? []
      : [
          ['empty execution, child process', 'thisEmpty'],
          ['empty execution at --base, child', 'baseEmpty'],
        ]),
    ['provider (main-thread part)', 'provider'],
    ['unexplained', 'unexplained'],
    ['matmul, fresh output, dispose()', 'matmulDispose'],
    ['matmul, plain loop (drop)', 'matmulDrop'],
    ['dotGeneralInto, reused output', 'into'],
    ['onnxruntime-node MatMul', 'onnxruntime'],
    [`goal: empty${baseEmpty === undefined ? '' : ' at --base'} + C + 3 µs`, 'budget'],
    ['loop mean per call (all calls, collections included):', undefined],
    ['  C cblas call', 'cMean'],
    ['  empty execution', 'emptyExecutionMean'],
    ...(baseEmpty === undefined
      ? []
      : [
          ['  empty execution, child process', 'thisEmptyMean'],
          ['  empty execution at --base, child', 'baseEmptyMean'],
        ]),
    ['  matmul, fresh output, dispose()', 'matmulDisposeMean'],
    ['  matmul, plain loop (drop)', 'matmulDropMean'],
    ['  dotGeneralInto, reused output', 'intoMean'],
    [`  goal: empty${baseEmpty === undefined ? '' : ' at --base'} + C + 3 µs`, 'budgetMean'],
    ['promises per call: empty execution', 'promisesEmpty'],
    ['promises per call: matmul + dispose', 'promisesMatmul'],
    ['promises per call: dotGeneralInto', 'promisesInto'],
  ];
  log(`${'part'.padEnd(34)}${'f64'.padStart(9)}${'f32'.padStart(9)}`);
  for (const [label, k] of rows) {
    const cell = (d) => (k === undefined ? '' : results.breakdown[d]?.[k] === undefined ? '—' : results.breakdown[d][k].toFixed(1));
    log(`${label.padEnd(34)}${cell('f64').padStart(9)}${cell('f32').padStart(9)}`);
  }
  for (const d of ['f64', 'f32']) {
    const m = results.breakdown[d];
    if (m === undefined) continue;
    log(`goal 1 (${d}): matmul + dispose ${m.matmulDispose.toFixed(1)} µs ${m.goal1 ? '≤' : '>'} ${m.budget.toFixed(1)} µs`);
    log(`goal 1 (${d}): matmul, plain loop ${m.matmulDrop.toFixed(1)} µs ${m.goal1Drop ? '≤' : '>'} ${m.budget.toFixed(1)} µs`);
    log(`goal 1 (${d}), loop means: matmul + dispose ${m.matmulDisposeMean.toFixed(1)} µs ${m.goal1Mean ? '≤' : '>'} ${m.budgetMean.toFixed(1)} µs; plain loop ${m.matmulDropMean.toFixed(1)} µs ${m.goal1DropMean ? '≤' : '>'} ${m.budgetMean.toFixed(1)} µs`);
  }
}

// ---- 2. the table -----------------------------------------------------------------------------
/**
 * Every loop style of both kinds and thread counts, 300 ms each at n = 64, before the first cell is
 * timed: V8 compiles the operation path over its first thousands of calls, its compiler threads
 * sharing the two CPUs with the loops, and without this the first cell (1 thread, f64, n = 64) ran
 * at a third of its speed — tidy 11.6 and drop 18.1 GFLOP/s against 41.1 for dispose in the same
 * cell, f32's tidy at 51.3 (docs/performance.md, "2026-12-07 (night)").
 */
async function warmTable(dtypes) {
  for (const threads of [1, 2]) {
    for (const dtype of dtypes) {
      const x = operands(dtype, [64, 64], 1);
      for (const kind of ['faer', 'blas']) {
        const b = await backend(kind, threads);
        if (b === undefined) continue;
        for (const fn of Object.values(styles(b, x, x))) {
          const until = performance.now() + 300;
          while (performance.now() < until) await fn();
        }
      }
    }
  }
  await collectGarbage();
}

async function table() {
  const dtypes = quick ? ['f64', 'f32'] : ['f64', 'f32', 'c64'];
  log('\n2. matmul GFLOP/s (ratio of C in the same run); median of interleaved rounds');
  await warmTable(dtypes);
  for (const threads of [1, 2]) {
    for (const dtype of dtypes) {
      for (const n of sizes) {
        const flops = (dtype === 'c64' || dtype === 'c128' ? 8 : 2) * n ** 3;
        const callSeconds = flops / 40e9;
        const calls = Math.max(3, Math.min(quick ? 200 : 1000, Math.round((quick ? 0.05 : 0.15) / callSeconds)));
        const rounds = quick ? 3 : 5;
        const x = operands(dtype, [n, n], 1);
        const y = operands(dtype, [n, n], 2);
        const contenders = {};
        for (const kind of ['faer', 'blas']) {
          const b = await backend(kind, threads);
          if (b === undefined) continue;
          for (const [style, fn] of Object.entries(styles(b, x, y))) contenders[`${kind}.${style}`] = fn;
        }
        const ortRun = ort !== undefined && dtype !== 'c64' ? await ortMatmul(ort, dtype, [], n, threads) : undefined;
        if (ortRun !== undefined) contenders.onnxruntime = ortRun.run;
        const perRound = Object.fromEntries([...Object.keys(contenders), 'c'].map((k) => [k, []]));
        // Each row starts from empty pools (the pool keeps the largest buffers under its cap).
        for (const b of backends.values()) b?.resetBufferPool();
        const order = Object.entries(contenders);
        for (let r = 0; r < rounds; r++) {
          // Each round starts one contender later: whatever runs first after the C anchor (a
          // process that held both CPUs) ran measurably slower, and no contender takes that in
          // more than one round of the median.
          for (let i = 0; i < order.length; i++) {
            const [name, fn] = order[(i + r) % order.length];
            // A loop that drops its outputs gets storage back only through collections: measure
            // its steady state (at least 40 calls after 16), not its first allocations.
            const plain = name.endsWith('.drop') || name === 'onnxruntime';
            perRound[name].push(await perCall(fn, plain ? Math.max(calls, 40) : calls, plain ? Math.max(16, Math.min(calls, 20)) : Math.min(calls, 20)));
            // Not beside ORT's still-spinning pool thread (see settleOrt).
            if (name === 'onnxruntime' && threads > 1) await settleOrt();
          }
          const c = anchorMicros(dtype, n, threads, calls);
          if (c !== undefined) perRound.c.push(c);
        }
        ortRun?.release();
        const row = { threads, dtype, n };
        for (const [k, v] of Object.entries(perRound)) if (v.length > 0) row[k] = flops / median(v) / 1e3; // GFLOP/s
        results.table.push(row);
        const cell = (k) => (row[k] === undefined ? '—' : `${row[k].toFixed(1)}${row.c === undefined || k === 'c' ? '' : ` (${(row[k] / row.c).toFixed(2)})`}`);
        log(
          `t=${threads} ${dtype.padEnd(4)} n=${String(n).padEnd(5)} C ${cell('c')} | faer dispose ${cell('faer.dispose')} tidy ${cell('faer.tidy')} drop ${cell('faer.drop')} into ${cell('faer.into')} | blas dispose ${cell('blas.dispose')} drop ${cell('blas.drop')} into ${cell('blas.into')} | ORT ${cell('onnxruntime')}`,
        );
      }
    }
  }
}

// ---- 3. batched small GEMMs -------------------------------------------------------------------
async function batched() {
  log('\n3. Batched small GEMMs, f64 (median ms per batch; ratio = C loop / ours)');
  const cases = [
    [10_000, 8],
    [1_000, 32],
  ];
  for (const threads of [1, 2]) {
    for (const [count, n] of cases) {
      const x = operands('f64', [n, n, count], 1);
      const y = operands('f64', [n, n, count], 2);
      const dims = { contracting: [[1], [0]], batch: [[2], [2]] };
      const contenders = {};
      for (const kind of ['faer', 'blas']) {
        const b = await backend(kind, threads);
        if (b !== undefined) contenders[kind] = async () => (await b.dotGeneral(x, y, dims)).dispose();
      }
      // The same matrices as a grouped GEMM (R110): one job per matrix, slices of the batched
      // tensors into a reused output; engine-scheduled over the lanes at 2 threads (faer opts in),
      // one provider-owned call at 1.
      const fb = await backend('faer', threads);
      if (fb !== undefined) {
        const out = Tensor.zeros('f64', [n, n, count]);
        const jobs = Array.from({ length: count }, (_, i) => ({ out: out.slice(undefined, undefined, i), lhs: x.slice(undefined, undefined, i), rhs: y.slice(undefined, undefined, i) }));
        contenders['faer.grouped'] = () => fb.gemmGrouped(jobs);
      }
      const ortRun = ort === undefined ? undefined : await ortMatmul(ort, 'f64', [count], n, threads);
      if (ortRun !== undefined) contenders.onnxruntime = ortRun.run;
      const calls = quick ? 20 : 60;
      const perRound = Object.fromEntries([...Object.keys(contenders), 'c'].map((k) => [k, []]));
      for (let r = 0; r < (quick ? 3 : 5); r++) {
        for (const [name, fn] of Object.entries(contenders)) {
          perRound[name].push((await perCall(fn, calls, 5)) / 1e3);
          if (name === 'onnxruntime' && threads > 1) await settleOrt();
        }
        const c = anchorMicros('f64', n, threads, calls, count);
        if (c !== undefined) perRound.c.push(c / 1e3);
      }
      ortRun?.release();
      const row = { threads, count, n };
      for (const [k, v] of Object.entries(perRound)) if (v.length > 0) row[k] = median(v);
      results.batched.push(row);
      const cell = (k) => (row[k] === undefined ? '—' : `${row[k].toFixed(2)} ms${row.c === undefined || k === 'c' ? '' : ` (${(row.c / row[k]).toFixed(2)})`}`);
      log(`t=${threads} ${count} × ${n}×${n}: C loop ${cell('c')} | faer ${cell('faer')} | faer grouped ${cell('faer.grouped')} | blas ${cell('blas')} | ORT ${cell('onnxruntime')}`);
    }
  }
}

// ---- 4. where a call's time goes -------------------------------------------------------------
/** The C probe's medians (µs) for a 1 MiB walk: warm, and after `ms` of other work / asleep. */
function cacheRetention(ms) {
  try {
    return JSON.parse(execFileSync(buildCacheProbe(), ['1024', '4096', String(ms)], { encoding: 'utf8' }));
  } catch (e) {
    log(`cache-retention probe unavailable: ${e.message}`);
    return undefined;
  }
}

async function timeline() {
  const ns = sizes.filter((n) => n >= 64 && n <= 512);
  if (ns.length === 0) return;
  log('\n4. Where a dotGeneralInto call goes, faer f64 (median µs per call; tenferro:task)');
  log(`${'case'.padEnd(12)}${['total', 'main before', 'start lag', 'kernel', 'wake-up', 'main after', 'main share'].map((h) => h.padStart(12)).join('')}`);
  const events = [];
  const onTask = (e) => void events.push(e);
  for (const threads of [1, 2]) {
    const b = await backend('faer', threads);
    if (b === undefined) continue;
    for (const n of ns) {
      const x = operands('f64', [n, n], 1);
      const y = operands('f64', [n, n], 2);
      const out = Tensor.zeros('f64', [n, n]);
      const call = () => b.dotGeneralInto(out, x, y, { contracting: [[1], [0]] });
      const calls = Math.min(4000, Math.max(20, Math.round((quick ? 0.15 : 0.4) / (2 * n ** 3 / 30e9))));
      await perCall(call, 20);
      subscribe('tenferro:task', onTask);
      const rows = [];
      try {
        for (let i = 0; i < calls; i++) {
          events.length = 0;
          const t0 = process.hrtime.bigint();
          await call();
          const t1 = process.hrtime.bigint();
          if (events.length === 0) continue;
          const posted = events.reduce((m, e) => (e.postedAt < m ? e.postedAt : m), events[0].postedAt);
          const answered = events.map((e) => Number(e.postedAt) + e.startLagNs + e.runNs);
          const seen = events.reduce((m, e) => (e.time > m ? e.time : m), events[0].time);
          const before = Number(posted - t0);
          const after = Number(t1 - seen);
          rows.push({
            total: Number(t1 - t0),
            before,
            lag: Math.max(...events.map((e) => e.startLagNs)),
            run: Math.max(...events.map((e) => e.runNs)),
            wake: Math.max(0, Number(seen) - Math.max(...answered)),
            after,
            share: (before + after) / Number(t1 - t0),
          });
        }
      } finally {
        unsubscribe('tenferro:task', onTask);
      }
      const med = (k) => median(rows.map((r) => r[k]));
      const row = { threads, n, total: med('total') / 1e3, before: med('before') / 1e3, lag: med('lag') / 1e3, run: med('run') / 1e3, wake: med('wake') / 1e3, after: med('after') / 1e3, share: med('share') };
      results.timeline.push(row);
      const cells = [row.total, row.before, row.lag, row.run, row.wake, row.after].map((v) => v.toFixed(1).padStart(12)).join('');
      log(`${`t=${threads} n=${n}`.padEnd(12)}${cells}${`${(100 * row.share).toFixed(1)} %`.padStart(12)}`);
    }
  }
  const probe = cacheRetention(2);
  if (probe !== undefined) {
    results.machine.cacheRetention = probe;
    log(`cache retention (C, a dependent walk over 1 MiB): ${probe.warmUs} µs warm, ${probe.afterWorkUs} µs after 2 ms of other work, ${probe.afterSleepUs} µs after 2 ms asleep`);
  }
}

results.machine = {
  cpu: /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1],
  openblasCoretype: process.env.OPENBLAS_CORETYPE ?? '(auto)',
  faer: faer === undefined ? 'not built' : faer.faerProviderStatus().available ? faer.faerProviderStatus().isa : 'unavailable',
  blas: blas === undefined ? 'not built' : 'built',
  onnxruntime: ort === undefined ? 'not installed (bench/peers)' : 'onnxruntime-node',
};
log(`machine: ${results.machine.cpu}; OPENBLAS_CORETYPE=${results.machine.openblasCoretype}; faer ${results.machine.faer}; onnxruntime ${results.machine.onnxruntime}`);
try {
  if (only === undefined || only === 'breakdown') await breakdown();
  if (only === undefined || only === 'table') await table();
  if (only === undefined || only === 'batched') await batched();
  if (only === undefined || only === 'timeline') await timeline();
} finally {
  await Promise.all([...backends.values()].map((b) => b?.close()));
}
if (json) console.log(JSON.stringify(results));
else log(`\nOpenBLAS core type the anchor reported: ${results.machine.openblasCore ?? '—'}`);
