// Micro-benchmark of both arbiters (contract §3.E, R33 fast path): ResourceArbiter (state in the
// isolate) and ProcessArbiter (state in @tenferro/os's native memory, shared by every isolate; run
// here on a private state, same code path), plus the cross-isolate hand-off latency: a worker
// releases a permit, the main thread's waiter runs (woken through its thread-safe function).
//
//   cd packages/core && npx tsc -b && node bench/arbiter.bench.mjs
//
// Imports the compiled arbiter from ../dist. To bench a build placed elsewhere (e.g. a one-off
// `tsc --outDir /tmp/arb`), set TENFERRO_CORE_DIST to that directory (it must contain
// arbiter/ and topology/). Options: --batches N (20), --ops N (100000), --timed N (10000).
// Acceptance goal: uncontended `await acquire({ cpus }) + release()` median ≤ 1 µs, for both.

import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const { values: args } = parseArgs({
  options: {
    batches: { type: 'string', default: '20' },
    ops: { type: 'string', default: '100000' },
    timed: { type: 'string', default: '10000' },
  },
});
const BATCHES = Number(args.batches);
const OPS = Number(args.ops);
const TIMED = Number(args.timed);
const TARGET_US = 1;

const distDir = process.env.TENFERRO_CORE_DIST;
const moduleUrl = (rel) =>
  distDir === undefined ? new URL(`../dist/${rel}`, import.meta.url).href : pathToFileURL(path.resolve(distDir, rel)).href;
const { ResourceArbiter } = await import(moduleUrl('arbiter/resource-arbiter.js'));
const { ProcessArbiter } = await import(moduleUrl('arbiter/process-arbiter.js'));
const { newExecutionOwner } = await import(moduleUrl('arbiter/execution-owner.js'));
const { CpuSet } = await import(moduleUrl('topology/cpu-set.js'));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

/** Runs `batch(n)` (which performs n ops) BATCHES times after a warm-up; returns per-op µs of each batch. */
async function batches(batch, ops = OPS) {
  await batch(ops * 2); // warm-up (JIT tiers)
  const perOp = [];
  for (let b = 0; b < BATCHES; b++) {
    const t0 = process.hrtime.bigint();
    await batch(ops);
    const t1 = process.hrtime.bigint();
    perOp.push(Number(t1 - t0) / 1e3 / ops);
  }
  return perOp;
}

// ---- scenarios ------------------------------------------------------------------------------

const req = { cpus: CpuSet.of([0, 1]) };

/** Baseline: the bare cost of awaiting an already resolved promise. */
async function awaitBaseline(n) {
  const v = {};
  for (let i = 0; i < n; i++) await Promise.resolve(v);
}

function uncontended(arb, request) {
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const p = await arb.acquire(request);
      p.release();
    }
  };
}

/** Same owner each time (the executor pattern), no queue. */
function uncontendedOwned(arb, request, owner) {
  const opts = { owner };
  return async (n) => {
    for (let i = 0; i < n; i++) {
      const p = await arb.acquire(request, opts);
      p.release();
    }
  };
}

/**
 * Contended hand-over: the holder's CPU set is requested again (→ queued), the holder releases,
 * the waiter is admitted and becomes the holder. One op = queued acquire + release + hand-over.
 */
function handover(arb, request) {
  return async (n) => {
    let held = await arb.acquire(request);
    for (let i = 0; i < n; i++) {
      const next = arb.acquire(request);
      held.release();
      held = await next;
    }
    held.release();
  };
}

async function individuallyTimed(arb, request, n) {
  for (let i = 0; i < n; i++) (await arb.acquire(request)).release(); // warm-up
  const samples = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const p = await arb.acquire(request);
    p.release();
    samples[i] = Number(process.hrtime.bigint() - t0) / 1e3;
  }
  // cost of the two hrtime calls themselves
  const overhead = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    overhead[i] = Number(process.hrtime.bigint() - t0) / 1e3;
  }
  samples.sort();
  overhead.sort();
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), timer: quantile(overhead, 0.5) };
}

// ---- run ------------------------------------------------------------------------------------

const fmt = (x) => x.toFixed(3);

async function suite(label, make) {
  const rows = [];
  const row = (name, perOp) => {
    const sorted = [...perOp].sort((a, b) => a - b);
    rows.push({ scenario: name, 'median µs/op': median(perOp), 'min µs/op': sorted[0], 'max µs/op': sorted.at(-1) });
  };

  row('await Promise.resolve (baseline)', await batches(awaitBaseline));

  const uncontendedRuns = await batches(uncontended(make(), req));
  row('uncontended acquire+release', uncontendedRuns);

  row('uncontended, same owner', await batches(uncontendedOwned(make(), req, newExecutionOwner())));

  const arbBusy = make();
  const others = [];
  for (const cpu of [2, 3, 4, 5]) others.push(await arbBusy.acquire({ cpus: CpuSet.of([cpu]) }));
  row('uncontended, 4 disjoint active', await batches(uncontended(arbBusy, req)));
  for (const p of others) p.release();

  row('uncontended provider-exclusive', await batches(uncontended(make(), { providerExclusive: true })));

  row('contended hand-over (1 waiter)', await batches(handover(make(), req), Math.max(1, OPS >> 1)));

  const timed = await individuallyTimed(make(), req, TIMED);

  console.log(`${label} micro-benchmark — node ${process.version}, ${BATCHES} batches × ${OPS} ops (hand-over: ${Math.max(1, OPS >> 1)})`);
  console.table(
    rows.map((r) => ({
      scenario: r.scenario,
      'median µs/op': fmt(r['median µs/op']),
      'min µs/op': fmt(r['min µs/op']),
      'max µs/op': fmt(r['max µs/op']),
    })),
  );
  console.log(
    `individually timed uncontended acquire+release (${TIMED} ops): p50 ${fmt(timed.p50)} µs, p99 ${fmt(timed.p99)} µs ` +
      `(includes hrtime pair overhead, p50 ${fmt(timed.timer)} µs)`,
  );
  const med = median(uncontendedRuns);
  console.log(`target: uncontended median ≤ ${TARGET_US} µs → ${fmt(med)} µs ${med <= TARGET_US ? 'PASS' : 'FAIL'}\n`);
}

await suite('ResourceArbiter (isolate)', () => new ResourceArbiter());
await suite('ProcessArbiter (process, private state)', () => ProcessArbiter.open({ isolated: true }));

// ---- cross-isolate hand-off ---------------------------------------------------------------------
// Per round: the worker holds a permit on the process-wide state, the main thread queues a
// conflicting request, the worker stamps hrtime and releases; the main thread stamps hrtime when
// its waiter runs. Latency = the difference (one clock: process.hrtime is process-wide).

const ROUNDS = Math.max(10, Math.min(TIMED, 2000));
const { Worker } = await import('node:worker_threads');
const sync = new Int32Array(new SharedArrayBuffer(16)); // [round the worker holds, round the main queued]
const stamps = new BigInt64Array(new SharedArrayBuffer(8 * ROUNDS));
const worker = new Worker(
  `const { workerData: { url, sync, stamps, rounds } } = require('node:worker_threads');
   import(url).then(async ({ ProcessArbiter, CpuSet }) => {
     const arb = ProcessArbiter.open();
     const req = { cpus: CpuSet.of([0, 1]) };
     for (let r = 1; r <= rounds; r++) {
       const p = await arb.acquire(req);
       Atomics.store(sync, 0, r); Atomics.notify(sync, 0);
       while (Atomics.load(sync, 1) !== r) Atomics.wait(sync, 1, Atomics.load(sync, 1));
       stamps[r - 1] = process.hrtime.bigint();
       p.release();
       // the main thread's turn; wait until it has released again before the next round
       while (Atomics.load(sync, 2) !== r) Atomics.wait(sync, 2, Atomics.load(sync, 2));
     }
   });`,
  { eval: true, workerData: { url: moduleUrl('index.js'), sync, stamps, rounds: ROUNDS } },
);
const main = ProcessArbiter.open();
const latencies = new Float64Array(ROUNDS);
for (let r = 1; r <= ROUNDS; r++) {
  while (Atomics.load(sync, 0) !== r) {
    const w = Atomics.waitAsync(sync, 0, Atomics.load(sync, 0));
    if (w.async) await w.value;
  }
  const waiting = main.acquire(req);
  Atomics.store(sync, 1, r);
  Atomics.notify(sync, 1);
  const p = await waiting;
  const t1 = process.hrtime.bigint();
  latencies[r - 1] = Number(t1 - stamps[r - 1]) / 1e3;
  p.release();
  Atomics.store(sync, 2, r);
  Atomics.notify(sync, 2);
}
await worker.terminate();
latencies.sort();
console.log(
  `cross-isolate hand-off (release in a worker → waiter on the main thread running), ${ROUNDS} rounds: ` +
    `p50 ${fmt(quantile(latencies, 0.5))} µs, p90 ${fmt(quantile(latencies, 0.9))} µs, p99 ${fmt(quantile(latencies, 0.99))} µs`,
);
