#!/usr/bin/env node
// Does the event loop stay free while tenferro computes, and how much CPU do tenferro's own
// non-worker threads take meanwhile (#37)?
//
//   node bench/responsiveness.bench.mjs [--base <built checkout>] [--quick] [--json] [--seconds 1.5] [--warmup 0.3]
//       [--kinds faer,blas] [--sizes 64,256,512,1024] [--threads 1,2] [--dtypes f64,f32] [--trace-gc]
//       [--this <built checkout>]
//
// Each stream is what an application does: `const c = await backend.matmul(a, a); c.dispose()` in
// a loop, after a warm-up, in a fresh child process per stream (and per tree: with `--base`, the
// same stream runs in the other checkout's build, the two trees alternating which goes first;
// `--this` measures another built checkout in place of this one).
// Two phases per stream, each `--seconds` long:
//  A. Responsiveness: a `setImmediate` heartbeat beside the loop (every gap between two beats is
//     a stretch the event loop could not serve anything else), and `monitorEventLoopDelay`
//     (1 ms resolution). For every gap above 2 ms the main thread's run-queue delay during it
//     (`/proc/self/task/<pid>/schedstat`, 2nd field: time runnable but not running — a gap that
//     the kernel scheduler made, e.g. two busy workers or OpenBLAS helpers spinning after a call,
//     on 2 CPUs) and whether a garbage collection overlapped it (`PerformanceObserver` 'gc').
//  B. CPU share: the same loop without the heartbeat (a heartbeat that re-arms itself keeps the
//     loop from ever sleeping), each thread's CPU time over the phase (`schedstat`, 1st field, ns)
//     ÷ the phase's wall time: the main thread, tenferro's helper threads (a thread named
//     `tf-*`), the engine workers (`backend.census()`), every other thread that appeared with
//     the backend (a provider's runtime threads, e.g. OpenBLAS helpers, which may spin after a call),
//     and Node's own threads that were there before it (`node`: V8's platform workers, which compile
//     the hot path with TurboFan for the first few thousand calls, and GC helpers).
// onnxruntime-node's MatMul runs beside, the same way, when bench/peers is installed. So does a
// control with no tenferro in it: worker_threads that busy-loop as long as tenferro's calls took
// (f64, per n and thread count) — the gaps any worker_thread offload sees on this machine, from
// V8's own collector and helper threads and the kernel scheduler.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const args = process.argv.slice(2);
const arg = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const here = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');


// ---- /proc readers ---------------------------------------------------------------------------

/** `schedstat` of one thread: [ns on CPU, ns runnable waiting for a CPU]; one fd, re-read at offset 0. */
function schedstatReader(tid) {
  let fd;
  try {
    fd = openSync(`/proc/self/task/${tid}/schedstat`, 'r');
  } catch {
    return undefined;
  }
  const buf = Buffer.alloc(128);
  return {
    read() {
      try {
        const n = readSync(fd, buf, 0, buf.length, 0);
        const [run, wait] = buf.toString('latin1', 0, n).split(' ');
        return [Number(run), Number(wait)];
      } catch {
        return undefined; // the thread ended
      }
    },
    close: () => closeSync(fd),
  };
}

const tids = () => readdirSync('/proc/self/task').map(Number);
const comm = (tid) => {
  try {
    return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
};

// ---- one stream, in a child process --------------------------------------------------------

async function child(cfg) {
  const { tree, peer, kind, n, threads, dtype, seconds } = cfg;
  const before = new Set(tids());
  let op;
  let close = async () => undefined;
  let census = () => undefined;
  if (peer === 'control') {
    // No tenferro: `threads` worker_threads that each busy-loop for `callMs` per call, the
    // tenferro stream's mean call time — the floor any worker_thread offload has on this machine.
    const { Worker } = await import('node:worker_threads');
    const spin = `const { parentPort } = require('node:worker_threads');
      parentPort.on('message', (ms) => { const end = performance.now() + ms; while (performance.now() < end); parentPort.postMessage(0); });`;
    const workers = Array.from({ length: threads }, () => new Worker(spin, { eval: true }));
    const one = (w) => new Promise((r) => {
      w.once('message', r);
      w.postMessage(cfg.callMs);
    });
    op = () => Promise.all(workers.map(one));
    close = () => Promise.all(workers.map((w) => w.terminate()));
  } else if (peer === 'onnxruntime') {
    const { loadOrt, ortMatmul } = await import(pathToFileURL(`${tree}/bench/peers/onnx-matmul.mjs`).href);
    const ort = loadOrt();
    const r = await ortMatmul(ort, dtype, [], n, threads);
    op = () => r.run();
    close = async () => r.release();
  } else {
    const core = await import(pathToFileURL(`${tree}/packages/core/dist/index.js`).href);
    const providerMod = await import(pathToFileURL(`${tree}/packages/provider-${kind}/dist/index.js`).href);
    const provider = kind === 'faer' ? providerMod.createFaerProvider() : providerMod.createBlasProvider();
    const backend = await core.CpuBackend.create({ kind, threads, providers: [provider] });
    await backend.ready();
    const a = core.Tensor.fromArray(dtype, [n, n], Array.from({ length: n * n }, (_, i) => (((i * 2654435761) >>> 0) % 16) / 4 - 2));
    op = async () => (await backend.matmul(a, a)).dispose();
    close = () => backend.close();
    census = () => backend.census();
  }
  // Warm-up: three calls, then `--warmup` seconds (0.3) for the moving averages and the JIT. V8
  // still compiles tenferro's hot path on its helper threads for a few seconds after that: with 3 s
  // the longest gaps of faer/blas n = 256 on 1 thread fell from 10–25 ms to 5–9 ms (2-vCPU Xeon).
  for (let i = 0; i < 3; i++) await op();
  for (const end = performance.now() + cfg.warmup * 1000; performance.now() < end; ) await op();

  // Phase A: heartbeat.
  const main = schedstatReader(process.pid);
  const gcs = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push([e.startTime, e.startTime + e.duration]);
  });
  obs.observe({ entryTypes: ['gc'] });
  const eld = monitorEventLoopDelay({ resolution: 1 });
  // The heartbeat keeps no per-beat garbage (a beat is ~1 µs: an array of every gap would grow to
  // millions of entries and its own collections would show as gaps): a histogram of 10 µs bins.
  const bins = new Float64Array(10_001);
  let beats = 0;
  let longestGap = 0;
  const long = [];
  let beating = true;
  let last = performance.now();
  let lastWait = main.read()[1];
  const beat = () => {
    const t = performance.now();
    const gap = t - last;
    bins[Math.min(10_000, Math.floor(gap * 100))]++;
    beats++;
    if (gap > longestGap) longestGap = gap;
    if (gap > 2) {
      const wait = main.read()[1];
      long.push({ at: last, gap, runQueueMs: (wait - lastWait) / 1e6 });
      lastWait = wait;
    } else if ((beats & 63) === 0) lastWait = main.read()[1];
    last = t;
    if (beating) setImmediate(beat);
  };
  eld.enable();
  setImmediate(beat);
  let callsA = 0;
  const mainA = main.read()[0];
  const t0A = performance.now();
  for (const end = t0A + seconds * 1000; performance.now() < end; callsA++) await op();
  const mainShareA = (main.read()[0] - mainA) / ((performance.now() - t0A) * 1e6);
  beating = false;
  eld.disable();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 20));
  obs.disconnect();
  for (const g of long) g.gc = gcs.some(([s, e]) => s < g.at + g.gap && e > g.at);
  const q = (p) => {
    for (let i = 0, seen = 0; i < bins.length; i++) if ((seen += bins[i]) >= p * beats) return i / 100;
    return longestGap;
  };
  const longest = long.reduce((m, g) => (g.gap > (m?.gap ?? 0) ? g : m), undefined);
  const gcMax = gcs.reduce((m, [s, e]) => Math.max(m, e - s), 0);

  // Phase B: CPU share per thread, no heartbeat.
  const readers = new Map(tids().map((tid) => [tid, schedstatReader(tid)]));
  const start = new Map([...readers].map(([tid, r]) => [tid, r?.read()]));
  let callsB = 0;
  const t0B = process.hrtime.bigint();
  for (const end = performance.now() + seconds * 1000; performance.now() < end; callsB++) await op();
  const wallNs = Number(process.hrtime.bigint() - t0B);
  const share = new Map();
  for (const [tid, r] of readers) {
    const s = start.get(tid);
    const e = r?.read();
    if (s !== undefined && e !== undefined) share.set(tid, (e[0] - s[0]) / wallNs);
    r?.close();
  }
  const c = census();
  const workerTids = new Set((c?.threads ?? []).filter((t) => t.owner.kind === 'engineWorker').map((t) => t.tid));
  const cpu = { main: 0, helpers: 0, workers: 0, others: 0, node: 0 };
  for (const [tid, s] of share) {
    if (tid === process.pid) cpu.main += s;
    else if (comm(tid).startsWith('tf-')) cpu.helpers += s;
    else if (workerTids.has(tid)) cpu.workers += s;
    else if (!before.has(tid)) cpu.others += s;
    else cpu.node += s;
  }
  main.close();
  await close();
  process.stdout.write(
    `${JSON.stringify({
      calls: callsA,
      p99: q(0.99),
      longest: longestGap,
      longestRunQueue: longest?.runQueueMs ?? 0,
      longestGc: longest?.gc ?? false,
      over5: long.filter((g) => g.gap > 5).length,
      over5RunQueue: long.filter((g) => g.gap > 5).reduce((s, g) => s + g.runQueueMs, 0),
      eldP99: eld.percentile(99) / 1e6,
      eldMax: eld.max / 1e6,
      gcMax,
      mainShareA,
      callsB,
      cpu,
    })}\n`,
  );
}

// ---- the table -------------------------------------------------------------------------------

async function parent() {
  const quick = args.includes('--quick');
  const json = args.includes('--json');
  const base = arg('--base') === undefined ? undefined : resolve(arg('--base'));
  const seconds = Number(arg('--seconds') ?? (quick ? 0.6 : 1.5));
  const warmup = Number(arg('--warmup') ?? 0.3);
  const list = (name, dflt) => (arg(name) ?? dflt).split(',');
  const kinds = list('--kinds', 'faer,blas');
  const sizes = list('--sizes', quick ? '64,512,1024' : '64,256,512,1024').map(Number);
  const threadCounts = list('--threads', '1,2').map(Number);
  const dtypes = list('--dtypes', 'f64,f32');
  const nodeFlags = args.includes('--trace-gc') ? ['--trace-gc'] : [];
  const self = arg('--this') === undefined ? here : resolve(arg('--this'));
  const trees = base === undefined ? [['this', self]] : [['base', base], ['this', self]];
  for (const [, tree] of trees) {
    if (!existsSync(`${tree}/packages/core/dist/index.js`)) throw new Error(`${tree} has no built packages/core/dist`);
  }
  const ortInstalled = existsSync(`${here}/bench/peers/node_modules/onnxruntime-node`);
  const streams = [];
  for (const n of sizes)
    for (const threads of threadCounts)
      for (const dtype of dtypes) {
        // f32 where the issue asks for it (the long kernels); f64 everywhere.
        if (dtype !== 'f64' && n < 512) continue;
        for (const kind of kinds) streams.push({ peer: 'tenferro', kind, n, threads, dtype });
        if (ortInstalled && dtype === 'f64') streams.push({ peer: 'onnxruntime', kind: 'onnxruntime', n, threads, dtype });
        if (dtype === 'f64') streams.push({ peer: 'control', kind: 'control', n, threads, dtype });
      }
  const rows = [];
  let round = 0;
  for (const s of streams) {
    const order = round++ % 2 === 0 ? trees : [...trees].reverse();
    for (const [label, tree] of order) {
      if (s.peer !== 'tenferro' && label === 'base') continue;
      // The control's calls last as long as this tree's tenferro calls of the same n and threads did.
      const mates = rows.filter((r) => r.peer === 'tenferro' && r.tree === 'this' && r.n === s.n && r.threads === s.threads && r.dtype === s.dtype);
      const callMs = mates.reduce((sum, r) => sum + (seconds * 1000) / r.calls, 0) / Math.max(1, mates.length);
      if (s.peer === 'control' && mates.length === 0) continue;
      const cfg = { ...s, tree, seconds, warmup, callMs };
      const r = spawnSync(process.execPath, [...nodeFlags, fileURLToPath(import.meta.url), '--child', JSON.stringify(cfg)], {
        encoding: 'utf8',
        maxBuffer: 64 << 20,
        env: { ...process.env, ...(/\bavx512f\b/.test(readFileSync('/proc/cpuinfo', 'utf8')) ? { OPENBLAS_CORETYPE: 'SkylakeX' } : {}) },
      });
      const line = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).at(-1);
      if (r.status !== 0 || line === undefined) {
        process.stderr.write(`${s.kind} n=${s.n} ${s.threads}t ${s.dtype} (${label}) failed: ${r.stderr}\n`);
        continue;
      }
      if (nodeFlags.length > 0) process.stderr.write(r.stderr + r.stdout.split('\n').filter((l) => !l.startsWith('{')).join('\n'));
      const row = { tree: label, ...s, ...JSON.parse(line) };
      rows.push(row);
      if (!json) printRow(row, rows.length === 1);
    }
  }
  if (json) console.log(JSON.stringify({ cpu: cpuModel(), load: readFileSync('/proc/loadavg', 'utf8').trim(), rows }));
  else console.log(`\nCPU: ${cpuModel()}, ${readdirSync('/sys/devices/system/cpu').filter((d) => /^cpu\d+$/.test(d)).length} CPUs; load average after: ${readFileSync('/proc/loadavg', 'utf8').trim()}`);
}

function cpuModel() {
  return /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
}

function printRow(r, header) {
  const pct = (x) => `${(x * 100).toFixed(0)} %`;
  const cols = [
    ['tree', 5, r.tree],
    ['stream', 22, `${r.kind} ${r.dtype} n=${r.n} ${r.threads}t`],
    ['calls', 7, String(r.calls)],
    ['gap p99', 9, `${r.p99.toFixed(2)} ms`],
    ['longest', 9, `${r.longest.toFixed(1)} ms`],
    ['(runq/gc)', 12, `${r.longestRunQueue.toFixed(1)}${r.longestGc ? ' gc' : ''}`],
    ['>5ms', 5, String(r.over5)],
    ['eld max', 9, `${r.eldMax.toFixed(1)} ms`],
    ['gc max', 8, `${r.gcMax.toFixed(1)} ms`],
    ['main A', 7, pct(r.mainShareA)],
    ['main', 6, pct(r.cpu.main)],
    ['helpers', 8, pct(r.cpu.helpers)],
    ['workers', 8, pct(r.cpu.workers)],
    ['others', 7, pct(r.cpu.others)],
    ['node', 6, pct(r.cpu.node)],
    ['calls B', 8, String(r.callsB)],
  ];
  if (header) console.log(cols.map(([h, w]) => h.padStart(w)).join(' '));
  console.log(cols.map(([, w, v]) => v.padStart(w)).join(' '));
}

if (arg('--child') !== undefined) {
  await child(JSON.parse(arg('--child')));
} else {
  await parent();
}
