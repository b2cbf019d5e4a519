#!/usr/bin/env node
// The native GEMM called directly on this thread (no worker hop) against C calling OpenBLAS's
// cblas_?gemm (bench/anchor) at small and medium square sizes, interleaved in one run.
//
//   node bench/small-vs-c.mjs [--sizes 16,32,64,128,256] [--dtypes f64,f32,c128,c64] [--rounds 7] [--best]
//
// Three numbers for tenferro per size, median µs per GEMM of per-round medians (--best: of the best
// round, for a machine other processes load):
//   call   — one `gemm(desc, A, B, C)` N-API call per GEMM (what `faerGemm` costs minus packing the
//            task), like one cblas call per GEMM, on operands where a SharedArrayBuffer puts them
//            (glibc's calloc: 16 bytes past a cache line for large ones);
//   aligned — the same call on operands that start on a 64-byte line, as the C anchor's do
//            (aligned_alloc(64)): an element offset into a slightly larger buffer, found from the
//            buffer's address (@tenferro/os);
//   kernel — one N-API call running R identical GEMMs (batch strides 0): the kernel alone.
// The C anchor (`cblas-anchor <t> n 1 reps`) is one cblas call per GEMM on warm operands.
// OpenBLAS's core type: SkylakeX on an AVX-512 CPU unless --coretype is given (as hot-path.bench).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(name);
  return i === -1 ? dflt : args[i + 1];
};
const avx512 = /\bavx512f\b/.test(readFileSync('/proc/cpuinfo', 'utf8'));
process.env.OPENBLAS_CORETYPE = arg('--coretype', avx512 ? 'SkylakeX' : process.env.OPENBLAS_CORETYPE);
const sizes = arg('--sizes', '16,32,64,128,256').split(',').map(Number);
const dtypes = arg('--dtypes', 'f64,f32,c128,c64').split(',');
const rounds = Number(arg('--rounds', '7'));
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const { buildAnchor } = await import(`${repo}bench/anchor/build-anchor.mjs`);
const anchor = buildAnchor();
const { sharedMemoryRange } = await import(`${repo}packages/os/dist/index.js`);
const binding = createRequire(import.meta.url)(fileURLToPath(new URL('../native/build/Release/tenferro_faer.node', import.meta.url)));
const CODE = { f32: 0, f64: 1, c64: 2, c128: 3 };
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** Operands of `batch` n×n GEMMs in SharedArrayBuffers; `aligned`: each starts on a 64-byte line (element offset `off`). */
function setup(dtype, n, batch, aligned = false) {
  const lanes = dtype === 'c64' || dtype === 'c128' ? 2 : 1;
  const Arr = dtype === 'f32' || dtype === 'c64' ? Float32Array : Float64Array;
  const count = n * n * lanes * batch;
  const element = Arr.BYTES_PER_ELEMENT * lanes;
  const operand = (seed) => {
    const buffer = new SharedArrayBuffer(count * Arr.BYTES_PER_ELEMENT + 64);
    const skip = aligned ? (64 - Number(sharedMemoryRange(buffer).address % 64n)) % 64 : 0;
    if (skip % element !== 0) throw new Error(`a buffer at an address that is not a whole number of ${element}-byte elements from a 64-byte line`);
    const view = new Arr(buffer);
    for (let i = 0; i < count; i++) view[skip / Arr.BYTES_PER_ELEMENT + i] = seed === 0 ? 0 : ((((i * 2654435761 + seed) >>> 0) % 16) - 8) / 4;
    return { view, off: skip / element };
  };
  const a = operand(1), b = operand(2), c = operand(0);
  const d = new Float64Array(27 + 4);
  // dtype m n k | offA rsA csA | offB rsB csB | offC rsC csC | alpha(2) beta(2) conj(2) isa | m0 m1 n0 n1 b0 b1 rank
  d.set([CODE[dtype], n, n, n, a.off, 1, n, b.off, 1, n, c.off, 1, n, 1, 0, 0, 0, 0, 0, -1, 0, n, 0, n, 0, batch, 1, batch, 0, 0, 0]);
  return { a: a.view, b: b.view, c: c.view, d };
}

function micros(fn, perCall, target = 0.04) {
  // calls so that one sample takes about `target` seconds
  let reps = 1;
  for (;;) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) fn();
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    if (s > target / 4 || reps > 1e6) break;
    reps *= 4;
  }
  const xs = [];
  for (let s = 0; s < 15; s++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < reps; i++) fn();
    xs.push(Number(process.hrtime.bigint() - t0) / 1e3 / reps / perCall);
  }
  return median(xs);
}

const rows = [];
for (const dtype of dtypes) {
  for (const n of sizes) {
    const flops = (dtype.startsWith('c') ? 8 : 2) * n ** 3;
    const batch = Math.max(1, Math.min(2000, Math.round(2e6 / flops)));
    const one = setup(dtype, n, 1);
    const onAligned = setup(dtype, n, 1, true);
    const many = setup(dtype, n, batch);
    const per = { call: [], aligned: [], kernel: [], c: [] };
    for (let r = 0; r < rounds; r++) {
      per.call.push(micros(() => binding.gemm(one.d, one.a, one.b, one.c), 1));
      per.aligned.push(micros(() => binding.gemm(onAligned.d, onAligned.a, onAligned.b, onAligned.c), 1));
      per.kernel.push(micros(() => binding.gemm(many.d, many.a, many.b, many.c), batch));
      const reps = Math.max(50, Math.min(20000, Math.round(0.05 / (flops / 40e9))));
      const out = JSON.parse(execFileSync(anchor, [{ f64: 'd', f32: 's', c128: 'z', c64: 'c' }[dtype], String(n), '1', String(reps)], { encoding: 'utf8', maxBuffer: 64 << 20 }));
      per.c.push(median(out.seconds) * 1e6);
    }
    // --best: the best round of each (robust to other processes loading the machine), else the median round.
    const pick = args.includes('--best') ? (xs) => Math.min(...xs) : median;
    const row = { dtype, n, c: pick(per.c), call: pick(per.call), aligned: pick(per.aligned), kernel: pick(per.kernel) };
    rows.push(row);
    const gf = (us) => (flops / us / 1e3).toFixed(1);
    console.log(
      `${dtype.padEnd(5)} n=${String(n).padEnd(4)} C ${row.c.toFixed(2)} µs (${gf(row.c)} GF/s) | call ${row.call.toFixed(2)} µs (${gf(row.call)}; C/call ${(row.c / row.call).toFixed(2)}) | aligned ${row.aligned.toFixed(2)} µs (C/aligned ${(row.c / row.aligned).toFixed(2)}) | kernel ${row.kernel.toFixed(2)} µs (${gf(row.kernel)}; C/kernel ${(row.c / row.kernel).toFixed(2)})`,
    );
  }
}
if (args.includes('--json')) console.log(JSON.stringify(rows));
