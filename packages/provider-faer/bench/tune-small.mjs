#!/usr/bin/env node
// Measures the direct (unpacked) path against the packed engine for small square-ish GEMMs, on
// this thread, through the addon (no workers): the data behind the direct-path threshold
// (`kSmallDefault` in native/src/dispatch.cc). Each mode runs in its own child process because
// the threshold is read once per process (TENFERRO_FAER_SMALL=inf forces direct, 0 forces packed).
//
//   node bench/tune-small.mjs
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const addon = fileURLToPath(new URL('../native/build/Release/tenferro_faer.node', import.meta.url));
const child = `
const b = require(${JSON.stringify(addon)});
const out = {};
for (const dt of (process.env.DTYPES ?? "1,0,3,2").split(",").map(Number)) for (const n of (process.env.SIZES ?? "4,8,12,16,20,24,32,40,48,64,96,128,160,192,256").split(",").map(Number)) {
  const L = dt >= 2 ? 2 : 1, Arr = dt === 0 || dt === 2 ? Float32Array : Float64Array;
  const A = new Arr(n * n * L).map(() => Math.random()), B = A.slice(), C = new Arr(n * n * L);
  const d = new Float64Array(27);
  d.set([dt, n, n, n, 0, 1, n, 0, 1, n, 0, 1, n, 1, 0, 0, 0, 0, 0, -1, 0, n, 0, n, 0, 1, 0]);
  const reps = Math.max(20, Math.min(20000, Math.round(2e8 / (2 * n ** 3 * L * L))));
  for (let i = 0; i < 10; i++) b.gemm(d, A, B, C);
  let best = Infinity;
  for (let t = 0; t < 5; t++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) b.gemm(d, A, B, C);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / reps);
  }
  out[dt + ':' + n] = (2 * n ** 3 * L * L) / best;
}
console.log(JSON.stringify(out));`;
const run = (small) => JSON.parse(execFileSync(process.execPath, ['-e', child], { encoding: 'utf8', env: { ...process.env, TENFERRO_FAER_SMALL: small } }));
const direct = run('1e30');
const packed = run('0');
console.log('GFLOP/s on one thread: direct (unpacked) vs packed engine');
console.log('dtype      n    m·n·k   direct   packed');
for (const key of Object.keys(direct)) {
  const [dt, n] = key.split(':').map(Number);
  const name = ['f32', 'f64', 'c64', 'c128'][dt];
  console.log(`${name.padEnd(6)} ${String(n).padStart(5)} ${String(n ** 3).padStart(8)} ${direct[key].toFixed(1).padStart(8)} ${packed[key].toFixed(1).padStart(8)}`);
}
