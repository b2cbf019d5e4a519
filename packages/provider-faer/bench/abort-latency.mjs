#!/usr/bin/env node
// How fast an aborted faer GEMM lets go: the time from `controller.abort()` to the operation
// settling (core settles it with ExecutionAborted once the running kernels returned; the native
// GEMM polls the execution's abort word at its block boundaries). Goal: at most 10 ms.
//
//   node bench/abort-latency.mjs [--quick] [--reps N] [--json]
//
// Each row: a square f64 GEMM of size n on CpuBackend.create({ kind: 'faer', threads: 2 }) through
// dotGeneralInto (the output is the caller's and starts as NaN, so the bench sees when the kernel
// has started writing it). First one run to its end (its full time), then `reps` runs that are
// aborted half-way (or, for the huge-K row, after a fixed delay): the latency is abort → settle.
// The huge-K row multiplies 64 x 2^32 by 2^32 x 64 broadcast operands (stride 0: one element of
// storage each), a GEMM that would run for many seconds.
import { performance } from 'node:perf_hooks';
import { CpuBackend, Tensor } from '@tenferro/core';
import { createFaerProvider, faerProviderStatus } from '../dist/index.js';

const quick = process.argv.includes('--quick');
const json = process.argv.includes('--json');
const repsArg = process.argv.indexOf('--reps');
const reps = repsArg > 0 ? Number(process.argv[repsArg + 1]) : quick ? 3 : 7;
const sizes = quick ? [256, 512, 1024, 2048] : [256, 512, 1024, 2048, 4096];

const status = faerProviderStatus();
if (!status.available) {
  console.error(`@tenferro/provider-faer abort-latency: the native addon is unavailable: ${status.reason}`);
  process.exit(1);
}

const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [createFaerProvider()] });
const DIMS = { contracting: [[1], [0]] };
const tick = () => new Promise((resolve) => setImmediate(resolve));
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function dense(n, k) {
  const a = Tensor.fromArray('f64', [n, k], Float64Array.from({ length: n * k }, (_, i) => ((i * 7919) % 1000) / 1000 - 0.5));
  const b = Tensor.fromArray('f64', [k, n], Float64Array.from({ length: n * k }, (_, i) => ((i * 104729) % 1000) / 1000 - 0.5));
  return { a, b, out: Tensor.zeros('f64', [n, n]) };
}

function broadcastK(n, k) {
  const one = new SharedArrayBuffer(8);
  new Float64Array(one)[0] = 1;
  const a = Tensor.fromDescriptor({ dtype: 'f64', shape: [n, k], strides: [0, 0], offset: 0, buffer: one });
  const b = Tensor.fromDescriptor({ dtype: 'f64', shape: [k, n], strides: [0, 0], offset: 0, buffer: one });
  return { a, b, out: Tensor.zeros('f64', [n, n]) };
}

/** One run aborted `after` ms after the kernel started writing the output; the abort → settle latency. */
async function abortedRun({ a, b, out }, after) {
  const c = new Float64Array(out.buffer, out.offset * 8, out.size);
  c.fill(Number.NaN);
  const controller = new AbortController();
  const started = performance.now();
  const op = backend.dotGeneralInto(out, a, b, DIMS, { signal: controller.signal });
  let outcome;
  op.then(() => (outcome = 'finished'), (e) => (outcome = e.code));
  // The kernel is running once it wrote the first tile of C (a spin on the event loop, not a sleep).
  while (Number.isNaN(c[0]) && outcome === undefined) await tick();
  if (after > 0 && outcome === undefined) await pause(after);
  const t0 = performance.now();
  controller.abort();
  await op.catch(() => undefined);
  return { latency: performance.now() - t0, runBefore: t0 - started, outcome };
}

const rows = [];
const cases = [...sizes.map((n) => ({ label: `n=${n}`, n, k: n, make: () => dense(n, n) })), { label: 'n=64, k=2^32 (broadcast)', n: 64, k: 2 ** 32, make: () => broadcastK(64, 2 ** 32) }];
for (const c of cases) {
  const operands = c.make();
  let full;
  let after;
  if (c.k === c.n) {
    await backend.dotGeneralInto(operands.out, operands.a, operands.b, DIMS); // warm-up
    const t = performance.now();
    await backend.dotGeneralInto(operands.out, operands.a, operands.b, DIMS);
    full = performance.now() - t;
    after = full / 2;
  } else {
    full = undefined; // seconds to minutes; not run to its end
    after = 200;
  }
  const latencies = [];
  const outcomes = {};
  for (let r = 0; r < reps; r++) {
    const run = await abortedRun(operands, after);
    outcomes[run.outcome] = (outcomes[run.outcome] ?? 0) + 1;
    if (run.outcome === 'ExecutionAborted') latencies.push(run.latency);
  }
  latencies.sort((x, y) => x - y);
  const row = {
    case: c.label,
    fullMs: full === undefined ? null : Number(full.toFixed(1)),
    abortAfterMs: Number(after.toFixed(1)),
    outcomes,
    medianMs: latencies.length ? Number(latencies[Math.floor(latencies.length / 2)].toFixed(2)) : null,
    maxMs: latencies.length ? Number(latencies[latencies.length - 1].toFixed(2)) : null,
  };
  rows.push(row);
  if (!json) {
    console.log(
      `${row.case.padEnd(26)} full ${row.fullMs === null ? '(not run to its end)'.padStart(20) : `${row.fullMs} ms`.padStart(20)}  abort at +${row.abortAfterMs} ms  ` +
        `abort→settle median ${row.medianMs} ms, max ${row.maxMs} ms  ${JSON.stringify(outcomes)}`,
    );
  }
}
await backend.close();
const worst = Math.max(...rows.map((r) => r.maxMs ?? 0));
if (json) console.log(JSON.stringify({ reps, rows, worstMs: worst, goalMs: 10 }));
else console.log(`worst abort→settle: ${worst.toFixed(2)} ms (goal ≤ 10 ms)`);
