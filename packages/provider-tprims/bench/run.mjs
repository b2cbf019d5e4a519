#!/usr/bin/env node
// tprims through ops(backend) vs C anchors (bench/anchor/tprims-anchor.c, built here with
// gcc -O3 -march=native — the anchor only), interleaved in one run, 1 and 2 threads:
//   transpose: copyInto(out, t.transpose()) of a 4096² f64 into a warm output vs memcpy of the same 128 MiB
//   add:       add(a, b, { out }) of 2^24 f32 into a warm output vs the C loop c[i] = a[i] + b[i]
//   sum0/sum1: sum over axis 0 / axis 1 of a 4096² f64 (column-major) vs the C loops
// Best and median of reps per side (ours, anchor, ours again); ratio = anchor time / our time.
//
//   node bench/run.mjs [--quick] [--json]
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CpuBackend, ops, Tensor } from '@tenferro/core';
import { createTprimsProvider, status } from '../dist/index.js';

const quick = process.argv.includes('--quick');
const json = process.argv.includes('--json');
const reps = quick ? 5 : 15;
const s = status();
if (!s.available) {
  console.error(`@tenferro/provider-tprims bench: the native addon is unavailable: ${s.reasons.join('; ')}`);
  process.exit(1);
}

const here = dirname(fileURLToPath(import.meta.url));
const bin = join(mkdtempSync(join(tmpdir(), 'tprims-anchor-')), 'tprims-anchor');
execFileSync('gcc', ['-O3', '-march=native', '-pthread', '-o', bin, join(here, 'anchor', 'tprims-anchor.c')]);
const anchor = (mode, n, threads) => JSON.parse(execFileSync(bin, [mode, String(n), String(threads), String(reps)], { encoding: 'utf8' }));

async function time(call) {
  await call();
  const t = [];
  for (let r = 0; r < reps; r++) {
    const t0 = process.hrtime.bigint();
    await call();
    t.push(Number(process.hrtime.bigint() - t0) * 1e-9);
  }
  t.sort((a, b) => a - b);
  return { best: t[0], median: t[Math.floor(t.length / 2)] };
}

const N = 4096;
const ADD = 2 ** 24;
const rows = [];
for (const threads of [1, 2]) {
  const backend = await CpuBackend.create({ kind: 'faer', threads, providers: [createTprimsProvider()] });
  const t = ops(backend);
  try {
    const big = Tensor.from(Float64Array.from({ length: N * N }, (_, i) => (i % 1000) * 0.001), [N, N]);
    const out = Tensor.zeros('f64', [N, N]);
    const fa = Tensor.from(Float32Array.from({ length: ADD }, (_, i) => i % 1000), [ADD]);
    const fb = Tensor.from(new Float32Array(ADD).fill(1), [ADD]);
    const fo = Tensor.zeros('f32', [ADD]);
    const s0 = Tensor.zeros('f64', [N]);
    const s1 = Tensor.zeros('f64', [N]);
    const cases = [
      { name: 'transpose 4096² f64 (copyInto) vs memcpy', run: () => t.copyInto(out, big.transpose()), anchor: () => anchor('memcpy', N * N, threads), bytes: 2 * 8 * N * N },
      { name: 'add 2^24 f32 vs C loop', run: () => t.add(fa, fb, { out: fo }), anchor: () => anchor('add', ADD, threads), bytes: 3 * 4 * ADD },
      { name: 'sum axis 0 of 4096² f64 vs C loop', run: () => t.sum(big, { axes: [0], out: s0 }), anchor: () => anchor('sum0', N, threads), bytes: 8 * N * N },
      { name: 'sum axis 1 of 4096² f64 vs C loop', run: () => t.sum(big, { axes: [1], out: s1 }), anchor: () => anchor('sum1', N, threads), bytes: 8 * N * N },
    ];
    for (const c of cases) {
      const a1 = await time(c.run);
      const an = c.anchor();
      const a2 = await time(c.run);
      const ours = { best: Math.min(a1.best, a2.best), median: Math.min(a1.median, a2.median) };
      rows.push({ case: c.name, threads, oursMs: ours.best * 1e3, anchorMs: an.best * 1e3, ratio: an.best / ours.best, medianRatio: an.median / ours.median, oursGBs: c.bytes / ours.best / 1e9, anchorGBs: c.bytes / an.best / 1e9 });
    }
  } finally {
    await backend.close();
  }
}
if (json) {
  console.log(JSON.stringify({ isa: s.details.isa, rows }, null, 2));
} else {
  console.log(`tprims (${s.details.isa}) vs C anchors, best of ${reps} (ratio = anchor time / tprims time; ≥ 1 is faster than the anchor)`);
  for (const r of rows) {
    console.log(`${r.case.padEnd(42)} ${r.threads}T  tprims ${r.oursMs.toFixed(2).padStart(8)} ms (${r.oursGBs.toFixed(1)} GB/s)  C ${r.anchorMs.toFixed(2).padStart(8)} ms (${r.anchorGBs.toFixed(1)} GB/s)  ratio ${r.ratio.toFixed(2)} (median ${r.medianRatio.toFixed(2)})`);
  }
}
