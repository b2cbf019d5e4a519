#!/usr/bin/env node
// The tensor-network case: a contraction whose operands need a layout transform before GEMM.
//   C[i,l] = Σ_{j,k} A[i,j,k]·B[k,j,l], d = 64, f64, row-major inputs (strides [d², d, 1])
//   dotGeneral(A, B, { contracting: [[1, 2], [1, 0]] })
// dot-general's canonical retry materialises an operand; with tprims installed the layout
// transform runs natively on the engine's workers, without it core's TypeScript reference does it.
// Contenders, interleaved in rounds, 1 and 2 threads, best and median ms:
//   tprims   — faer backend with provider-tprims (the layout transform on the engine's workers)
//   ts-ref   — faer backend without it (core's TypeScript layout transform)
//   ORT      — onnxruntime-node's Einsum 'ijk,kjl->il' (only when bench/peers is installed)
// The check: C equals between contenders (max abs difference printed).
//
//   node bench/contraction.mjs [--quick] [--json] [--d 64] [--kind faer|blas]
// --kind blas runs the tenferro contenders on the blas kind (provider-blas's GEMM; a sibling package).
import { CpuBackend, Tensor } from '@tenferro/core';
import { createFaerProvider } from '../../provider-faer/dist/index.js'; // the faer GEMM (a sibling package, not a dependency of tprims)
import { createBlasProvider } from '../../provider-blas/dist/index.js'; // the blas GEMM, for --kind blas (a sibling package too)
import { createTprimsProvider, status } from '../dist/index.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const json = argv.includes('--json');
const dAt = argv.indexOf('--d');
const d = dAt >= 0 ? Number(argv[dAt + 1]) : 64;
const kindAt = argv.indexOf('--kind');
const kind = kindAt >= 0 ? argv[kindAt + 1] : 'faer';
if (kind !== 'faer' && kind !== 'blas') throw new Error(`--kind faer|blas, not ${kind}`);
const gemmProvider = () => (kind === 'blas' ? createBlasProvider() : createFaerProvider());
const rounds = quick ? 3 : 7;
const perRound = quick ? 5 : 15;
const s = status();
if (!s.available) {
  console.error(`@tenferro/provider-tprims contraction bench: the native addon is unavailable: ${s.reasons.join('; ')}`);
  process.exit(1);
}

let peers;
try {
  peers = await import(new URL('../../../bench/peers/onnx-matmul.mjs', import.meta.url).href);
} catch {
  peers = undefined;
}
const ort = peers?.loadOrt();

const count = d * d * d;
const aData = Float64Array.from({ length: count }, (_, i) => Math.sin(i * 0.001) * 2);
const bData = Float64Array.from({ length: count }, (_, i) => Math.cos(i * 0.0007));
const rowMajor = (data) => Tensor.fromDescriptor({ dtype: 'f64', shape: [d, d, d], strides: [d * d, d, 1], offset: 0, buffer: Tensor.from(data, [count]).buffer });
const dims = { contracting: [[1, 2], [1, 0]] };
const flops = 2 * d ** 4;

async function contenders(threads) {
  const list = [];
  const withT = await CpuBackend.create({ kind, threads, providers: [gemmProvider(), createTprimsProvider()] });
  const without = await CpuBackend.create({ kind, threads, providers: [gemmProvider()] });
  const A = rowMajor(aData);
  const B = rowMajor(bData);
  const ours = (backend) => async () => {
    const c = await backend.dotGeneral(A, B, dims);
    const v = c.toTypedArray({ order: 'row' });
    c.dispose();
    return v;
  };
  list.push({ name: 'tprims', run: ours(withT), close: () => withT.close() });
  list.push({ name: 'ts-ref', run: ours(without), close: () => without.close() });
  if (ort !== undefined) {
    const r = await peers.ortEinsum(ort, 'f64', 'ijk,kjl->il', aData, [d, d, d], bData, [d, d, d], [d, d], threads);
    list.push({ name: 'ORT', run: async () => (await r.run()).C.data, close: () => r.release() });
  }
  return list;
}

/**
 * Untimed calls of `run` for at least SETTLE_MS before a contender's timed block, so that each is
 * measured in its own steady state rather than in what the previous contender left behind: any
 * contender's first calls after a switch run cold (2–3× here, onnxruntime-node's as much as ours).
 * After an ORT block the bench also waits for ORT's spinning pool thread (`settleOrt`): measured
 * beside it, the contender after ORT ran at half speed on 2 threads (3.0 against 1.6 ms per call).
 */
const SETTLE_MS = 150;
async function settle(run) {
  for (const until = performance.now() + SETTLE_MS; performance.now() < until; ) await run();
}

const rows = [];
for (const threads of [1, 2]) {
  const list = await contenders(threads);
  try {
    const results = [];
    for (const c of list) results.push(await c.run());
    let diff = 0;
    for (const r of results.slice(1)) for (let i = 0; i < r.length; i++) diff = Math.max(diff, Math.abs(r[i] - results[0][i]));
    const times = list.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < list.length; k++) {
        await settle(list[k].run);
        for (let i = 0; i < perRound; i++) {
          const t0 = process.hrtime.bigint();
          await list[k].run();
          times[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
        if (list[k].name === 'ORT' && threads > 1) await peers.settleOrt();
      }
    }
    list.forEach((c, k) => {
      const t = times[k].sort((x, y) => x - y);
      rows.push({ threads, contender: c.name, bestMs: t[0], medianMs: t[t.length >> 1], gflops: flops / (t[0] * 1e6), maxAbsDiff: diff });
    });
  } finally {
    for (const c of list) await c.close();
  }
}
if (json) {
  console.log(JSON.stringify({ d, kind, isa: s.details.isa, ort: ort !== undefined, rows }, null, 2));
} else {
  console.log(`C[i,l] = Σ A[i,j,k]·B[k,j,l], d=${d}, f64, row-major inputs, ${kind} kind — best/median ms of ${rounds}×${perRound} interleaved (tprims ${s.details.isa}${ort ? '' : '; onnxruntime-node not installed: cd bench/peers && ONNXRUNTIME_NODE_INSTALL=skip npm i --ignore-scripts'})`);
  for (const threads of [1, 2]) {
    const rs = rows.filter((r) => r.threads === threads);
    const ortRow = rs.find((r) => r.contender === 'ORT');
    for (const r of rs) {
      const vsOrt = ortRow && r !== ortRow ? `  vs ORT ${(ortRow.bestMs / r.bestMs).toFixed(2)}× (median ${(ortRow.medianMs / r.medianMs).toFixed(2)}×)` : '';
      console.log(`${threads}T ${r.contender.padEnd(7)} ${r.bestMs.toFixed(3).padStart(8)} ms / ${r.medianMs.toFixed(3).padStart(8)} ms  ${r.gflops.toFixed(1).padStart(6)} GFLOP/s${vsOrt}`);
    }
    console.log(`   max |ΔC| between contenders: ${rs[0].maxAbsDiff.toExponential(2)}`);
  }
}
