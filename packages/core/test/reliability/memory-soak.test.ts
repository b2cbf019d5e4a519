// Soak (#35 item 10): memory stays bounded when every call gets fresh inputs. Matmul and
// `ops(backend).add` on providers whose tasks cross as packed kernel arguments (the path of the
// native providers: operands named by id in the workers' buffer tables), outputs disposed and
// outputs dropped, with and without forced collections. After a warm-up (the first 1,000 calls,
// or a quarter of a shorter run) RSS stays within the pool's cap + 64 MiB; the pool, the workers'
// tables and the process's array-buffer memory stay within their bounds. No wall-clock assertion.
//
// The default run is sized for CI (TENFERRO_SOAK_CALLS=300 calls per case, 1 MiB of fresh inputs
// each: 225 MiB past the warm-up, more than the bound, were they kept); the soak of the issue is
// TENFERRO_SOAK_CALLS=20000.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, discoverCpuTopology, ops, Tensor } from '../../src/index.js';
import { packedProviders } from '../support/packed-providers.js';
import { gc } from '../helpers.js';

const CALLS = Math.max(100, Number(process.env.TENFERRO_SOAK_CALLS ?? 300));
const WARM_UP = Math.min(1000, Math.floor(CALLS / 4));
const GC_EVERY = Math.min(1000, WARM_UP);
const MiB = 1024 * 1024;
/** 512 KiB inputs (2×32768 and 32768×2 f64, or two 32768×2): cheap kernels, large storage. */
const ROWS = 32768;
const INNER = 2;


const lhsData = Float64Array.from({ length: ROWS * INNER }, (_, i) => (i % 13) - 6);

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: Math.min(2, discoverCpuTopology().allowedCpus.size), providers: [packedProviders()] });
});
afterAll(async () => {
  await backend?.close();
});

type Op = 'matmul' | 'add';
type Outputs = 'disposed' | 'dropped';

interface Sample {
  readonly calls: number;
  readonly rss: number;
  readonly arrayBuffers: number;
}

async function soak(op: Op, outputs: Outputs, forcedGc: boolean) {
  const o = ops(backend);
  const samples: Sample[] = [];
  const sample = (calls: number) => {
    const m = process.memoryUsage();
    samples.push({ calls, rss: m.rss, arrayBuffers: m.arrayBuffers });
  };
  let checked = false;
  for (let i = 1; i <= CALLS; i++) {
    // Fresh inputs every call, dropped afterwards (as the application of the issue wrote it).
    const out =
      op === 'matmul'
        ? await backend.matmul(Tensor.from(lhsData, [INNER, ROWS]), Tensor.from(lhsData, [ROWS, INNER]))
        : await o.add(Tensor.from(lhsData, [ROWS, INNER]), Tensor.from(lhsData, [ROWS, INNER]));
    if (!checked) {
      // Column-major data: matmul's (INNER-1, INNER-1) is Σ_p a[INNER-1, p]·b[p, INNER-1].
      const last = op === 'add' ? 2 * lhsData[ROWS * INNER - 1]! : lhsData.reduce((s, _, p) => (p < ROWS ? s + lhsData[INNER - 1 + p * INNER]! * lhsData[p + (INNER - 1) * ROWS]! : s), 0);
      expect((out.toTypedArray() as Float64Array).at(-1)).toBe(last);
      checked = true;
    }
    if (outputs === 'disposed') out.dispose();
    if (forcedGc && i % GC_EVERY === 0) gc();
    if (i === WARM_UP || i === CALLS || i % 1000 === 0) sample(i);
  }
  const pool = backend.bufferPoolStats();
  const tables = backend.executionInfo().workers.map((w) => w.bufferTable);
  const warm = samples.find((s) => s.calls === WARM_UP)!;
  const end = samples.at(-1)!;
  const line = `${op} outputs ${outputs} ${forcedGc ? 'gc' : 'no gc'}: RSS ${samples.map((s) => `${s.calls}:${Math.round(s.rss / MiB)}`).join(' ')} MiB; ` +
    `array buffers ${Math.round(warm.arrayBuffers / MiB)} → ${Math.round(end.arrayBuffers / MiB)} MiB; pool ${pool.buffers} buffers ${Math.round(pool.retainedBytes / MiB)} MiB; ` +
    `tables ${tables.map((t) => `${t.buffers}/${Math.round(t.bytes / MiB)} MiB`).join(', ')}`;
  console.log(line);
  return { pool, tables, warm, end };
}

describe(`memory soak: ${CALLS} calls per case with fresh inputs (TENFERRO_SOAK_CALLS; #35 item 10)`, () => {
  for (const op of ['matmul', 'add'] as const) {
    for (const outputs of ['disposed', 'dropped'] as const) {
      for (const forcedGc of [false, true]) {
        it(`${op}, outputs ${outputs}, ${forcedGc ? 'gc() every ' + GC_EVERY + ' calls' : 'no forced gc'}: RSS after the warm-up within the pool cap + 64 MiB at the end`, async () => {
          const { pool, tables, warm, end } = await soak(op, outputs, forcedGc);
          expect(end.rss - warm.rss).toBeLessThanOrEqual(pool.limitBytes + 64 * MiB);
          // The pool within its cap; nothing lent out once every call settled.
          expect(pool.retainedBytes).toBeLessThanOrEqual(pool.limitBytes);
          expect(pool.outstanding).toBe(0);
          // Each worker's table within its byte bound (it may hold the storage of the last task on top).
          for (const t of tables) expect(t.bytes).toBeLessThanOrEqual(t.limitBytes + 3 * ROWS * INNER * 8);
          // The process's shared storage: what the pool, the tables and the workers' pending
          // collections may hold, plus the main isolate's own garbage — not one input per call.
          const tableBound = tables.reduce((s, t) => s + t.limitBytes, 0);
          expect(end.arrayBuffers - warm.arrayBuffers).toBeLessThanOrEqual(pool.limitBytes + tableBound + 64 * MiB);
        });
      }
    }
  }
});
