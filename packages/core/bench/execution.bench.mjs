// Warm empty execution: `install` of a no-op kernel task on a pinned worker, against piscina
// running a no-op task in the same process with the same worker count; and the same empty
// execution with 1, 2 and 8 workers (entry cost must not grow with pool size, R91).
import { Piscina } from 'piscina';
import { CpuBackend, defineKernel, discoverCpuTopology, newExecutionOwner, processArbiter } from '../dist/index.js';
// Runtime internals, by relative path inside the repository (they are not part of any published entry point).
import { PoolLimit } from '../dist/buffer/pool-limit.js';
import { CpuEngine } from '../dist/runtime/engine/cpu-engine.js';
import { runInFrame } from '../dist/runtime/execution/execution-frame.js';
import { CpuOperationEntry } from '../dist/runtime/execution/operation-entry.js';
import { fmt, measure } from './measure.mjs';

const noopUrl = new URL('./noop-kernel.mjs', import.meta.url);
const noop = defineKernel(noopUrl, 'noop');
const quick = process.argv.includes('--quick');
const opts = quick ? { warmup: 5000, batches: 9, perBatch: 1000 } : { warmup: 3000, batches: 15, perBatch: 3000 };
const results = {};

// 1. tenferro install vs piscina, 2 workers each.
const backend = await CpuBackend.create({ threads: 2 });
const workers = backend.executionInfo().workerCount;
const ours = await measure(() => backend.install((ctx) => ctx.run(noop)), opts);
await backend.close();
const pool = new Piscina({ filename: noopUrl.href, minThreads: workers, maxThreads: workers, idleTimeout: 60_000 });
const theirs = await measure(() => pool.run(null, { name: 'noop' }), opts);
await pool.destroy();
results.installVsPiscina = { workers, tenferroMicros: ours.medianMicros, piscinaMicros: theirs.medianMicros, speedup: theirs.medianMicros / ours.medianMicros };

// 2. The same admission + entry + task path over engines of 1, 2 and 8 workers, measured in
// interleaved batches so that machine noise hits all three alike.
const cpus = discoverCpuTopology().allowedCpus;
const arbiter = processArbiter();
const counts = [1, 2, 8];
const engines = await Promise.all(
  counts.map((n) =>
    CpuEngine.managed({ id: 0, admissionMode: 'cooperativeCpuSet', placement: { kind: 'allAllowed', cpus }, ownership: 'managed', threadBudget: n }, cpus, new PoolLimit()),
  ),
);
const onceOn = (engine) => () => {
  const owner = newExecutionOwner();
  return runInFrame({ owner, live: true, scope: undefined }, async () => {
    const permit = await arbiter.acquire({ cpus }, { owner });
    try {
      await new CpuOperationEntry(engine, permit, owner).enter('sequential', (ctx) => ctx.run(noop), 'bench');
    } finally {
      permit.release();
    }
  });
};
const perBatch = { 1: [], 2: [], 8: [] };
for (const [i, engine] of engines.entries()) await measure(onceOn(engine), { ...opts, batches: 1 });
for (let b = 0; b < opts.batches; b++) {
  for (const [i, engine] of engines.entries()) {
    perBatch[counts[i]].push((await measure(onceOn(engine), { warmup: 200, batches: 1, perBatch: opts.perBatch })).medianMicros);
  }
}
await Promise.all(engines.map((e) => e.close()));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const byWorkers = Object.fromEntries(counts.map((n) => [n, median(perBatch[n])]));
const ratios = perBatch[8].map((x, i) => x / perBatch[1][i]);
results.emptyExecutionByWorkers = { ...byWorkers, ratio8to1: median(ratios) };

console.log('\nwarm empty execution (median of batch means, µs per execution)');
console.log(`  tenferro install + no-op task (${workers} workers) ${fmt(ours.medianMicros)}`);
console.log(`  piscina run no-op task        (${workers} workers) ${fmt(theirs.medianMicros)}`);
console.log(`  speed-up vs piscina                        ${fmt(results.installVsPiscina.speedup)}x   (goal >= 2)`);
for (const n of [1, 2, 8]) console.log(`  entry + no-op task, ${n} worker${n > 1 ? 's' : ' '}               ${fmt(byWorkers[n])}`);
console.log(`  ratio 8 workers / 1 worker (median of per-batch ratios) ${fmt(results.emptyExecutionByWorkers.ratio8to1)}    (goal <= 1.2)`);
if (process.env.TENFERRO_BENCH_JSON) console.log(JSON.stringify(results));
