// Soak (#35 item 10) for linear algebra: cholesky, solve, inv and luFactor with fresh inputs every
// call (batched 16×16 f64, 2 MiB per input), outputs disposed and outputs dropped, with and without
// forced collections. After a warm-up (the first 1,000 calls, or a quarter of a shorter run) RSS
// stays within the pool's cap + 64 MiB; the pool, the workers' buffer tables
// (`executionInfo().workers[i].bufferTable`) and the process's array-buffer memory within their
// bounds. No wall-clock assertion. Core's own soak (matmul, ops.add) is
// packages/core/test/reliability/memory-soak.test.ts.
//
// The default run is sized for CI (TENFERRO_SOAK_CALLS=160 calls per case: 240 MiB of fresh inputs
// past the warm-up, more than the bound, were they kept); the soak of the issue is
// TENFERRO_SOAK_CALLS=20000.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, discoverCpuTopology, Tensor } from '@tenferro/core';
import { linalg } from '../src/index.js';

const CALLS = Math.max(40, Number(process.env.TENFERRO_SOAK_CALLS ?? 160));
const WARM_UP = Math.min(1000, Math.floor(CALLS / 4));
const GC_EVERY = Math.min(1000, WARM_UP);
const MiB = 1024 * 1024;
const N = 16;
const BATCH = 1024;
const K = 4;

const gc: () => void =
  typeof (globalThis as { gc?: unknown }).gc === 'function'
    ? ((globalThis as { gc?: unknown }).gc as () => void)
    : (() => {
        setFlagsFromString('--expose-gc');
        try {
          return runInNewContext('gc') as () => void;
        } finally {
          setFlagsFromString('--no-expose-gc');
        }
      })();

/** BATCH symmetric positive definite N×N matrices, column-major, batch last. */
const spd = new Float64Array(N * N * BATCH);
for (let b = 0; b < BATCH; b++) for (let j = 0; j < N; j++) for (let i = 0; i < N; i++) spd[b * N * N + i + j * N] = (i === j ? N + (b % 7) : 0) + 1 / (1 + Math.abs(i - j));
const rhs = Float64Array.from({ length: N * K * BATCH }, (_, i) => (i % 11) - 5);

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: Math.min(2, discoverCpuTopology().allowedCpus.size), providers: [] });
});
afterAll(async () => {
  await backend?.close();
});

type Op = 'cholesky' | 'solve' | 'inv' | 'luFactor';

/** One call with fresh inputs; the output tensors. */
async function call(op: Op): Promise<Tensor[]> {
  const la = linalg(backend);
  const a = Tensor.from(spd, [N, N, BATCH], { dtype: 'f64' });
  switch (op) {
    case 'cholesky':
      return [await la.cholesky(a)];
    case 'solve':
      return [await la.solve(a, Tensor.from(rhs, [N, K, BATCH], { dtype: 'f64' }))];
    case 'inv':
      return [await la.inv(a)];
    case 'luFactor': {
      const { lu, pivots } = await la.luFactor(a);
      return [lu, pivots];
    }
  }
}

async function soak(op: Op, outputs: 'disposed' | 'dropped', forcedGc: boolean) {
  const samples: { calls: number; rss: number; arrayBuffers: number }[] = [];
  for (let i = 1; i <= CALLS; i++) {
    const out = await call(op);
    if (i === 1) expect(out[0]!.shape.slice(0, 2)).toEqual(op === 'solve' ? [N, K] : [N, N]);
    if (outputs === 'disposed') for (const t of out) t.dispose();
    if (forcedGc && i % GC_EVERY === 0) gc();
    if (i === WARM_UP || i === CALLS || i % 1000 === 0) {
      const m = process.memoryUsage();
      samples.push({ calls: i, rss: m.rss, arrayBuffers: m.arrayBuffers });
    }
  }
  const pool = backend.bufferPoolStats();
  const tables = backend.executionInfo().workers.map((w) => w.bufferTable);
  const warm = samples.find((s) => s.calls === WARM_UP)!;
  const end = samples.at(-1)!;
  console.log(
    `${op} outputs ${outputs} ${forcedGc ? 'gc' : 'no gc'}: RSS ${samples.map((s) => `${s.calls}:${Math.round(s.rss / MiB)}`).join(' ')} MiB; ` +
      `array buffers ${Math.round(warm.arrayBuffers / MiB)} → ${Math.round(end.arrayBuffers / MiB)} MiB; pool ${pool.buffers} buffers ${Math.round(pool.retainedBytes / MiB)} MiB; ` +
      `tables ${tables.map((t) => `${t.buffers}/${Math.round(t.bytes / MiB)} MiB`).join(', ')}`,
  );
  return { pool, tables, warm, end };
}

describe(`linalg memory soak: ${CALLS} calls per case with fresh inputs (TENFERRO_SOAK_CALLS; #35 item 10)`, () => {
  for (const op of ['cholesky', 'solve', 'inv', 'luFactor'] as const) {
    for (const outputs of ['disposed', 'dropped'] as const) {
      for (const forcedGc of [false, true]) {
        it(`${op}, outputs ${outputs}, ${forcedGc ? `gc() every ${GC_EVERY} calls` : 'no forced gc'}: RSS after the warm-up within the pool cap + 64 MiB at the end`, async () => {
          const { pool, tables, warm, end } = await soak(op, outputs, forcedGc);
          expect(end.rss - warm.rss).toBeLessThanOrEqual(pool.limitBytes + 64 * MiB);
          expect(pool.retainedBytes).toBeLessThanOrEqual(pool.limitBytes);
          for (const t of tables) expect(t.bytes).toBeLessThanOrEqual(t.limitBytes + 4 * N * N * BATCH * 8);
          const tableBound = tables.reduce((s, t) => s + t.limitBytes, 0);
          expect(end.arrayBuffers - warm.arrayBuffers).toBeLessThanOrEqual(pool.limitBytes + tableBound + 64 * MiB);
        });
      }
    }
  }
});
