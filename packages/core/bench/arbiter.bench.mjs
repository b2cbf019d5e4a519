// Micro-benchmark of ResourceArbiter (contract §3.E, R33 fast path).
//
//   cd packages/core && npx tsc -b && node bench/arbiter.bench.mjs
//
// Imports the compiled arbiter from ../dist. To bench a build placed elsewhere (e.g. a one-off
// `tsc --outDir /tmp/arb`), set TENFERRO_CORE_DIST to that directory (it must contain
// arbiter/ and topology/). Options: --batches N (20), --ops N (100000), --timed N (10000).
// Acceptance goal: uncontended `await acquire({ cpus }) + release()` median ≤ 1 µs.

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
const { ResourceArbiter, newExecutionOwner } = await import(moduleUrl('arbiter/resource-arbiter.js'));
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

const rows = [];
const row = (name, perOp) => {
  const sorted = [...perOp].sort((a, b) => a - b);
  rows.push({ scenario: name, 'median µs/op': median(perOp), 'min µs/op': sorted[0], 'max µs/op': sorted.at(-1) });
};

row('await Promise.resolve (baseline)', await batches(awaitBaseline));

const arbEmpty = new ResourceArbiter();
const uncontendedRuns = await batches(uncontended(arbEmpty, req));
row('uncontended acquire+release', uncontendedRuns);

const arbOwned = new ResourceArbiter();
row('uncontended, same owner', await batches(uncontendedOwned(arbOwned, req, newExecutionOwner())));

const arbBusy = new ResourceArbiter();
const others = [];
for (const cpu of [2, 3, 4, 5]) others.push(await arbBusy.acquire({ cpus: CpuSet.of([cpu]) }));
row('uncontended, 4 disjoint active', await batches(uncontended(arbBusy, req)));
for (const p of others) p.release();

const arbExcl = new ResourceArbiter();
row('uncontended provider-exclusive', await batches(uncontended(arbExcl, { providerExclusive: true })));

const arbHand = new ResourceArbiter();
row('contended hand-over (1 waiter)', await batches(handover(arbHand, req), Math.max(1, OPS >> 1)));

const timed = await individuallyTimed(new ResourceArbiter(), req, TIMED);

const fmt = (x) => x.toFixed(3);
console.log(`ResourceArbiter micro-benchmark — node ${process.version}, ${BATCHES} batches × ${OPS} ops (hand-over: ${Math.max(1, OPS >> 1)})`);
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
console.log(`target: uncontended median ≤ ${TARGET_US} µs → ${fmt(med)} µs ${med <= TARGET_US ? 'PASS' : 'FAIL'}`);
