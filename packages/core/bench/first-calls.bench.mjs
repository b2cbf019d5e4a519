#!/usr/bin/env node
// What the first few thousand calls of a fresh process cost (#37, #38): V8 optimises tenferro's
// per-call path one function at a time, each after ~1,000–3,000 calls, on its platform threads —
// which share the machine's CPUs with the engine workers meanwhile — and the main thread runs
// unoptimised code until then. An application measured right after start (a request handler, a
// CLI run, a 1.5 s stream after three warm-up calls) sees these figures, not the steady state.
//
//   node bench/first-calls.bench.mjs [--kinds faer,blas] [--sizes 64,256] [--threads 1,2] [--dtypes f64]
//       [--base <built checkout>] [--json]
//
// Each stream runs in a fresh child process (per tree with `--base`, the trees alternating which
// goes first): `const c = await backend.matmul(a, a); c.dispose()` from the first call, timed in
// windows of calls. Per window, µs per call: the wall time, the main thread's CPU time, and the
// CPU time of Node's own threads that were there before the backend (V8's platform workers: the
// optimising compiler and GC helpers) — schedstat, 1st field. The last window is the reference
// the earlier ones are read against (`× last`).
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const arg = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const list = (name, fallback) => (arg(name) ?? fallback).split(',').filter((s) => s !== '');
const here = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Window edges (call indices): the first three calls apart, then ever longer windows. */
const EDGES = [0, 3, 100, 300, 1000, 2000, 3000, 5000];

/** CPU time of every thread of this process (ns). */
function cpuByThread() {
  const out = new Map();
  for (const t of readdirSync('/proc/self/task')) {
    try {
      out.set(t, Number(readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ')[0]));
    } catch {
      // the thread ended
    }
  }
  return out;
}

async function child({ tree, kind, n, threads, dtype }) {
  const core = await import(pathToFileURL(`${tree}/packages/core/dist/index.js`).href);
  const providerMod = await import(pathToFileURL(`${tree}/packages/provider-${kind}/dist/index.js`).href);
  const provider = kind === 'faer' ? providerMod.createFaerProvider() : providerMod.createBlasProvider();
  const before = new Set(readdirSync('/proc/self/task'));
  const backend = await core.CpuBackend.create({ kind, threads, providers: [provider] });
  await backend.ready();
  const a = core.Tensor.fromArray(dtype, [n, n], Array.from({ length: n * n }, (_, i) => (((i * 2654435761) >>> 0) % 16) / 4 - 2));
  const main = String(process.pid);
  const windows = [];
  for (let w = 0; w + 1 < EDGES.length; w++) {
    const c0 = cpuByThread();
    const t0 = process.hrtime.bigint();
    for (let i = EDGES[w]; i < EDGES[w + 1]; i++) (await backend.matmul(a, a)).dispose();
    const wall = Number(process.hrtime.bigint() - t0);
    const c1 = cpuByThread();
    let mainNs = 0;
    let nodeNs = 0;
    for (const [t, v] of c1) {
      const d = v - (c0.get(t) ?? v);
      if (t === main) mainNs += d;
      else if (before.has(t)) nodeNs += d;
    }
    const calls = EDGES[w + 1] - EDGES[w];
    windows.push({ from: EDGES[w], to: EDGES[w + 1], wall: wall / calls / 1e3, main: mainNs / calls / 1e3, node: nodeNs / calls / 1e3 });
  }
  await backend.close();
  process.stdout.write(`${JSON.stringify(windows)}\n`);
}

function parent() {
  const kinds = list('--kinds', 'faer,blas');
  const sizes = list('--sizes', '64,256').map(Number);
  const threadCounts = list('--threads', '1,2').map(Number);
  const dtypes = list('--dtypes', 'f64');
  const base = arg('--base');
  const trees = base === undefined ? [['this', here]] : [['base', resolve(base)], ['this', here]];
  const rows = [];
  let flip = false;
  for (const kind of kinds)
    for (const n of sizes)
      for (const threads of threadCounts)
        for (const dtype of dtypes) {
          const order = flip ? [...trees].reverse() : trees;
          flip = !flip;
          for (const [name, tree] of order) {
            const spec = { tree, kind, n, threads, dtype };
            const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', JSON.stringify(spec)], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
            if (r.status !== 0) {
              console.error(`${name} ${kind} ${dtype} n=${n} ${threads}t failed:\n${r.stderr}`);
              process.exitCode = 1;
              continue;
            }
            rows.push({ tree: name, kind, dtype, n, threads, windows: JSON.parse(r.stdout.trim().split('\n').at(-1)) });
          }
        }
  const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? 'unknown CPU';
  const load = readFileSync('/proc/loadavg', 'utf8').trim();
  if (args.includes('--json')) {
    console.log(JSON.stringify({ cpu, load, edges: EDGES, rows }));
    return;
  }
  const head = EDGES.slice(0, -1).map((e, i) => `${e}–${EDGES[i + 1]}`);
  console.log(`µs per call by window of calls from the first (wall | main thread CPU | Node's own threads' CPU); × last: wall ÷ the last window's`);
  console.log(['tree', 'stream', '', ...head, '100–300 ÷ last'].map((h, i) => (i < 3 ? h.padEnd(i === 1 ? 20 : 5) : h.padStart(10))).join(' '));
  for (const r of rows) {
    const last = r.windows.at(-1);
    for (const [label, key] of [
      ['wall', 'wall'],
      ['main', 'main'],
      ['node', 'node'],
    ]) {
      const cells = r.windows.map((w) => w[key].toFixed(1).padStart(10));
      const ratio = key === 'wall' ? `${(r.windows[2].wall / last.wall).toFixed(1)}×`.padStart(10) : '';
      console.log([r.tree.padEnd(5), `${r.kind} ${r.dtype} n=${r.n} ${r.threads}t`.padEnd(20), label.padEnd(5), ...cells, ratio].join(' '));
    }
  }
  console.log(`\nCPU: ${cpu}, ${readdirSync('/sys/devices/system/cpu').filter((d) => /^cpu\d+$/.test(d)).length} CPUs; load average after: ${load}`);
}

if (arg('--child') !== undefined) await child(JSON.parse(arg('--child')));
else parent();
