#!/usr/bin/env node
// What the diagnostics channels cost on the hot path: `(await backend.matmul(a, b)).dispose()` of
// 64×64 f64 on a 1-thread faer backend, per call, with no subscriber and with a subscriber on all
// four channels (`forwardDiagnostics` to a no-op sink: every payload is built, timed and cloned
// into the forwarded shape) — and, with `--baseline <repo>`, the same call through another
// checkout's build (e.g. main before the channels) in the same process, interleaved.
//
//   node bench/diagnostics.bench.mjs [--baseline /work/main] [--rounds 15] [--calls 2000] [--json]
//
// Every contender runs once per round in turn; the median of per-round medians is reported. This
// machine is a shared, noisy VM: differences below ~0.2 µs are within run-to-run noise.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
const rounds = Number(arg('--rounds', '15'));
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
  globalThis.gc();
  const until = performance.now() + 150;
  for (let i = 0; i < 200 || performance.now() < until; i++) await fn();
  const t = new Array(calls);
  for (let i = 0; i < calls; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    t[i] = Number(process.hrtime.bigint() - t0) / 1e3;
  }
  return median(t);
}

const branch = await load(repo.replace(/\/$/, ''));
const baseline = baselineRepo === undefined ? undefined : await load(baselineRepo.replace(/\/$/, ''));
let forwarded = 0;
const contenders = {
  'no subscriber': { run: branch.call },
  'subscribed (all channels)': { run: branch.call, subscribe: () => branch.core.forwardDiagnostics(() => void forwarded++) },
  ...(baseline === undefined ? {} : { 'baseline, no subscriber': { run: baseline.call } }),
};
const perRound = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
try {
  for (let r = 0; r < rounds; r++) {
    for (const [name, c] of Object.entries(contenders)) {
      const stop = c.subscribe?.();
      try {
        perRound[name].push(await perCall(c.run));
      } finally {
        stop?.();
      }
    }
  }
} finally {
  await branch.backend.close();
  await baseline?.backend.close();
}
const result = Object.fromEntries(Object.entries(perRound).map(([k, v]) => [k, { medianMicros: median(v), minMicros: Math.min(...v), maxMicros: Math.max(...v) }]));
const none = result['no subscriber'].medianMicros;
const summary = {
  case: `matmul ${n}x${n} f64, faer, 1 thread, fresh output disposed`,
  rounds,
  calls,
  result,
  subscriberCostMicros: result['subscribed (all channels)'].medianMicros - none,
  ...(baseline === undefined ? {} : { noSubscriberVsBaselineMicros: none - result['baseline, no subscriber'].medianMicros }),
  forwardedEvents: forwarded,
};
if (json) console.log(JSON.stringify(summary));
else {
  console.log(`${summary.case}: median of ${rounds} interleaved rounds of ${calls} calls (µs per call; min–max of round medians)`);
  for (const [k, v] of Object.entries(result)) console.log(`  ${k.padEnd(28)} ${v.medianMicros.toFixed(2).padStart(8)}   (${v.minMicros.toFixed(2)}–${v.maxMicros.toFixed(2)})`);
  console.log(`  subscriber cost             ${summary.subscriberCostMicros.toFixed(2).padStart(8)} µs/call (${forwarded} events forwarded)`);
  if (summary.noSubscriberVsBaselineMicros !== undefined) console.log(`  no subscriber − baseline    ${summary.noSubscriberVsBaselineMicros.toFixed(2).padStart(8)} µs/call (goal ≤ 0.2)`);
}
