#!/usr/bin/env node
// What the diagnostics channels cost on the hot path: `(await backend.matmul(a, b)).dispose()` of
// 64×64 f64 on a 1-thread faer backend, per call, with no subscriber and with a subscriber on all
// four channels (`forwardDiagnostics` to a no-op sink: every payload is built, timed and cloned
// into the forwarded shape) — and, with `--baseline <repo>`, the same call through another
// checkout's build (e.g. main before the channels). Each sample is a child process (two copies of
// core cannot share a process); the contenders alternate within every round.
//
//   node bench/diagnostics.bench.mjs [--baseline /work/main] [--rounds 9] [--calls 2000] [--json]
//
// Every contender runs once per round in turn; the median of per-round samples is reported. This
// machine is a shared, noisy VM: differences below ~0.2 µs are within run-to-run noise.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { collectGarbage } from './collect-garbage.mjs';
import { perCallMedian } from './measure.mjs';

if (typeof globalThis.gc !== 'function') {
  const r = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, process.argv[1], ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args[i + 1];
};
const json = args.includes('--json');
const rounds = Number(arg('--rounds', '9'));
const calls = Number(arg('--calls', '2000'));
const n = 64;
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const baselineRepo = arg('--baseline');

async function load(root) {
  const core = await import(`${root}/packages/core/dist/index.js`);
  const faerPath = `${root}/packages/provider-faer/dist/index.js`;
  const faer = existsSync(faerPath) ? await import(faerPath) : undefined;
  const backend = await core.CpuBackend.create({ kind: 'faer', threads: 1, ...(faer === undefined ? {} : { providers: [faer.createFaerProvider()] }) });
  const operand = (seed) => core.Tensor.fromArray('f64', [n, n], Array.from({ length: n * n }, (_, i) => (((i * 2654435761 + seed) >>> 0) % 16) / 4 - 2));
  const a = operand(1);
  const b = operand(2);
  return { core, backend, call: async () => (await backend.matmul(a, b)).dispose() };
}

const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];

async function perCall(fn) {
  await collectGarbage();
  return perCallMedian(fn, calls, 200);
}

// Two copies of core cannot share one process (the process arbiter refuses the other copy's
// CpuSets), so each measurement runs in a child process; the parent interleaves them by round.
const child = arg('--child');
if (child !== undefined) {
  const subscribed = args.includes('--subscribed');
  const side = await load(child);
  let forwarded = 0;
  const stop = subscribed ? side.core.forwardDiagnostics(() => void forwarded++) : undefined;
  try {
    // Three measurements per child, the median kept: one child is one sample of the round.
    const xs = [await perCall(side.call), await perCall(side.call), await perCall(side.call)];
    console.log(JSON.stringify({ micros: median(xs), forwarded }));
  } finally {
    stop?.();
    await side.backend.close();
  }
  process.exit(0);
}

const root = repo.replace(/\/$/, '');
const contenders = {
  'no subscriber': [root, false],
  'subscribed (all channels)': [root, true],
  ...(baselineRepo === undefined ? {} : { 'baseline, no subscriber': [baselineRepo.replace(/\/$/, ''), false] }),
};
const perRound = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
let forwarded = 0;
for (let r = 0; r < rounds; r++) {
  for (const [name, [dir, subscribed]] of Object.entries(contenders)) {
    const out = spawnSync(process.execPath, ['--expose-gc', process.argv[1], '--child', dir, '--calls', String(calls), ...(subscribed ? ['--subscribed'] : [])], {
      encoding: 'utf8',
      env: { ...process.env, NODE_NO_WARNINGS: '1' },
    });
    if (out.status !== 0) throw new Error(`${name}: ${out.stderr}`);
    const m = JSON.parse(out.stdout.trim().split('\n').pop());
    perRound[name].push(m.micros);
    forwarded += m.forwarded;
  }
}
const result = Object.fromEntries(Object.entries(perRound).map(([k, v]) => [k, { medianMicros: median(v), minMicros: Math.min(...v), maxMicros: Math.max(...v) }]));
const none = result['no subscriber'].medianMicros;
const summary = {
  case: `matmul ${n}x${n} f64, faer, 1 thread, fresh output disposed`,
  rounds,
  calls,
  result,
  subscriberCostMicros: result['subscribed (all channels)'].medianMicros - none,
  ...(baselineRepo === undefined ? {} : { noSubscriberVsBaselineMicros: none - result['baseline, no subscriber'].medianMicros }),
  forwardedEvents: forwarded,
};
if (json) console.log(JSON.stringify(summary));
else {
  console.log(`${summary.case}: median of ${rounds} interleaved rounds of ${calls} calls (µs per call; min–max of round medians)`);
  for (const [k, v] of Object.entries(result)) console.log(`  ${k.padEnd(28)} ${v.medianMicros.toFixed(2).padStart(8)}   (${v.minMicros.toFixed(2)}–${v.maxMicros.toFixed(2)})`);
  console.log(`  subscriber cost             ${summary.subscriberCostMicros.toFixed(2).padStart(8)} µs/call (${forwarded} events forwarded)`);
  if (summary.noSubscriberVsBaselineMicros !== undefined) console.log(`  no subscriber − baseline    ${summary.noSubscriberVsBaselineMicros.toFixed(2).padStart(8)} µs/call (goal ≤ 0.2)`);
}
