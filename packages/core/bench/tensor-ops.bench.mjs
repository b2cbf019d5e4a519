// Core's TypeScript reference tensor primitives through ops(backend) (what a user gets without
// @tenferro/provider-tprims), warm outputs, median of a few runs: add of two 2^22-element f32
// tensors, sum over one axis of 2048×2048 f64, and a transposing copyInto of 2048×2048 f64 —
// each as GB/s of the bytes it must move. `--json` prints the results as one JSON line.
import { CpuBackend, Tensor, ops } from '../dist/index.js';

const json = process.argv.includes('--json');
const reps = process.argv.includes('--quick') ? 3 : 7;
const results = {};

async function median(fn) {
  await fn(); // warm: kernel module, JIT, output pages
  const times = [];
  for (let r = 0; r < reps; r++) {
    const t0 = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

const backend = await CpuBackend.create({ threads: 1, providers: [] });
try {
  const o = ops(backend);
  const n = 1 << 22;
  const a = Tensor.from(new Float32Array(n).fill(1.5), [n]);
  const sumOut = Tensor.zeros('f32', [n]);
  const addMs = await median(() => o.add(a, a, { out: sumOut }));
  const m = Tensor.from(new Float64Array(2048 * 2048).fill(0.25), [2048, 2048]);
  const colOut = Tensor.zeros('f64', [2048]);
  const reduceMs = await median(() => o.sum(m, { axes: [0], out: colOut }));
  const tOut = Tensor.zeros('f64', [2048, 2048]);
  const mt = m.transpose();
  const transposeMs = await median(() => o.copyInto(tOut, mt));
  const gbps = (bytes, ms) => bytes / ms / 1e6;
  results.add = { ms: addMs, gbPerS: gbps(3 * 4 * n, addMs) };
  results.sumAxis0 = { ms: reduceMs, gbPerS: gbps(8 * 2048 * 2048, reduceMs) };
  results.transpose = { ms: transposeMs, gbPerS: gbps(2 * 8 * 2048 * 2048, transposeMs) };
} finally {
  await backend.close();
}
if (json) {
  console.log(JSON.stringify(results));
} else {
  console.log('reference tensor primitives (TypeScript, one worker), median of', reps);
  for (const [name, r] of Object.entries(results)) console.log(`  ${name.padEnd(10)} ${r.ms.toFixed(1).padStart(8)} ms ${r.gbPerS.toFixed(2).padStart(7)} GB/s`);
}
