// #35 defect 8: storage handed to an operation stayed alive until `backend.close()` — each worker's
// buffer table held every buffer it was sent, and forgot one only after the main isolate collected
// it *and* that worker ran another task; the worker's own heap, never collected while it serves
// tasks, kept what it had dropped. Now a worker forgets caller storage as soon as its last tensor
// is disposed or it is collected, whether or not it runs another task, and releases it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, discoverCpuTopology, ops, Tensor, type WorkerBufferTableStats } from '../src/index.js';
import { packedProviders } from './support/packed-providers.js';
import { gc, kernel } from './helpers.js';

const LANES = Math.min(2, discoverCpuTopology().allowedCpus.size);
/** A tall input (256 KiB) and a small one: cheap to multiply, large enough to see in memory figures. */
const ROWS = 4096;
const INNER = 8;
const CALLS = 64;
const MiB = 1024 * 1024;
/** A pool cap below four 8 MiB slabs: outputs of 256 KiB are not carved from slabs. */
const SLAB_CAPPED = 16 * MiB;


const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Collect this isolate and let its finalizers run (they run on the event loop). */
async function collectHere(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    gc();
    await turn();
    await turn();
  }
}

function tables(backend: CpuBackend): WorkerBufferTableStats[] {
  return backend.executionInfo().workers.map((w) => w.bufferTable);
}

/**
 * Wait until every worker has released what it was told to forget: an idle worker collects its
 * heap by itself (after a short idle period) — no task is sent to it. Polls the diagnostic; the
 * deadline only turns a hang into a failure.
 */
async function released(backend: CpuBackend): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (tables(backend).some((t) => t.releasingBytes > 0)) {
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(tables(backend).map((t) => t.releasingBytes)).toEqual(tables(backend).map(() => 0));
}

/** Wait until this process's array-buffer memory has come down to `bound` (after collections here). */
async function arrayBuffersWithin(bound: number): Promise<number> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await collectHere();
    const now = process.memoryUsage().arrayBuffers;
    if (now <= bound || Date.now() > deadline) return now;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const lhsData = Float64Array.from({ length: ROWS * INNER }, (_, i) => (i % 13) - 6);
const rhsData = Float64Array.from({ length: INNER * INNER }, (_, i) => (i % 5) - 2);
/** Fresh inputs, as an application makes them (`Tensor.from` copies an unshared array). */
const freshLhs = () => Tensor.from(lhsData, [ROWS, INNER]);
const freshRhs = () => Tensor.from(rhsData, [INNER, INNER]);
/** Element (i, j) of lhs·rhs, column-major data. */
const expected = (i: number, j: number) => {
  let s = 0;
  for (let p = 0; p < INNER; p++) s += lhsData[i + p * ROWS]! * rhsData[p + j * INNER]!;
  return s;
};

/** Elements (0, 0) and (ROWS-1, INNER-1) of a product. */
const corners = (c: Tensor) => {
  const data = c.toTypedArray() as Float64Array;
  return [data[0], data[ROWS - 1 + (INNER - 1) * ROWS]];
};
const CORNERS = [expected(0, 0), expected(ROWS - 1, INNER - 1)];

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: LANES, providers: [packedProviders()] });
  // A pool capped below four 8 MiB slabs gives the 256 KiB outputs buffers of their own
  // (`buffer/storage-slab.ts`): the tables then hold exactly what the pool retains.
  backend.setBufferPoolLimitBytes(SLAB_CAPPED);
});
afterAll(async () => {
  await backend?.close();
});

describe('worker buffer tables keep only storage the main isolate can still name (#35)', () => {
  it('disposed inputs are forgotten by every worker at once, and released without another task', async () => {
    await collectHere();
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < CALLS; i++) {
      const a = freshLhs();
      const b = freshRhs();
      const c = await backend.matmul(a, b);
      if (i === 0) expect(corners(c)).toEqual(CORNERS);
      c.dispose();
      a.dispose();
      b.dispose();
    }
    const pool = backend.bufferPoolStats();
    const after = tables(backend);
    expect(after).toHaveLength(LANES);
    // Every worker took part (the GEMM splits over the lanes) and keeps only the pool's storage.
    for (const t of after) {
      expect(t.bytes).toBeLessThanOrEqual(pool.retainedBytes);
      expect(t.buffers).toBeLessThanOrEqual(pool.buffers);
      expect(t.limitBytes).toBeGreaterThan(0);
    }
    await released(backend);
    // What 64 calls sent (32 MiB of inputs) is gone from the process; the pool keeps its outputs.
    const now = await arrayBuffersWithin(before + pool.retainedBytes + 4 * MiB);
    expect(now - before).toBeLessThanOrEqual(pool.retainedBytes + 4 * MiB);
  });

  it('dropped inputs are forgotten once collected, whether or not the workers run another task', async () => {
    await collectHere();
    const before = process.memoryUsage().arrayBuffers;
    const sent = async (n: number) => {
      for (let i = 0; i < n; i++) (await backend.matmul(freshLhs(), freshRhs())).dispose();
    };
    await sent(CALLS);
    await collectHere();
    const pool = backend.bufferPoolStats();
    for (const t of tables(backend)) expect(t.bytes).toBeLessThanOrEqual(pool.retainedBytes);
    const first = tables(backend).map((t) => t.bytes);
    // Not growing with the number of calls.
    await sent(2 * CALLS);
    await collectHere();
    expect(tables(backend).map((t) => t.bytes)).toEqual(first);
    await released(backend);
    const now = await arrayBuffersWithin(before + pool.retainedBytes + 4 * MiB);
    expect(now - before).toBeLessThanOrEqual(pool.retainedBytes + 4 * MiB);
  });

  it('caller memory wrapped again after a dispose is sent again (never named after the worker dropped it)', async () => {
    const shared = new Float64Array(new SharedArrayBuffer(lhsData.byteLength));
    shared.set(lhsData);
    const b = freshRhs();
    for (let i = 0; i < 20; i++) {
      const a = Tensor.from(shared, [ROWS, INNER]); // no copy: the caller's memory
      const c = await backend.matmul(a, b);
      a.dispose(); // every worker drops the caller's buffer now
      expect(corners(c)).toEqual(CORNERS);
      c.dispose();
    }
    b.dispose();
  });

  it('structured-clone payloads (core reference kernels) are released by the worker too', async () => {
    const reference = await CpuBackend.create({ threads: 1, providers: [] });
    reference.setBufferPoolLimitBytes(SLAB_CAPPED);
    try {
      const o = ops(reference);
      await collectHere();
      const before = process.memoryUsage().arrayBuffers;
      for (let i = 0; i < CALLS; i++) (await o.add(freshLhs(), freshLhs())).dispose();
      const pool = reference.bufferPoolStats();
      const now = await arrayBuffersWithin(before + pool.retainedBytes + 4 * MiB);
      expect(now - before).toBeLessThanOrEqual(pool.retainedBytes + 4 * MiB);
    } finally {
      await reference.close();
    }
  });
});

describe('a payload the main isolate still holds does not buy a collection per task (#35)', () => {
  it('the same 64 MiB buffer in every payload: the worker collects at most once per twenty collections\' worth of work, not per task', async () => {
    const backend = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      const noop = kernel('noop');
      const buf = new SharedArrayBuffer(64 * MiB);
      const before = tables(backend)[0]!.collections;
      const calls = 100;
      for (let i = 0; i < calls; i++) await backend.install((ctx) => ctx.run(noop, { buf }));
      // Each payload counts 64 MiB let go of; a collection per task (the rule without its duty
      // limit) makes 100 here — each a full collection of the worker's heap.
      expect(tables(backend)[0]!.collections - before).toBeLessThan(calls / 4);
    } finally {
      await backend.close();
    }
  });
});

describe('a worker buffer table is bounded in bytes (TENFERRO_WORKER_BUFFER_TABLE_MAX_BYTES, #35)', () => {
  it('keeps at most its limit of live storage; evicted buffers are sent again when named', async () => {
    const limit = 1 * MiB;
    const saved = process.env.TENFERRO_WORKER_BUFFER_TABLE_MAX_BYTES;
    process.env.TENFERRO_WORKER_BUFFER_TABLE_MAX_BYTES = String(limit);
    const bounded = await CpuBackend.create({ threads: LANES, providers: [packedProviders()] });
    bounded.setBufferPoolLimitBytes(SLAB_CAPPED);
    try {
      const b = freshRhs();
      const live = Array.from({ length: 16 }, freshLhs); // 4 MiB kept alive by the caller
      for (const round of [0, 1]) {
        for (const a of live) {
          const c = await bounded.matmul(a, b);
          expect(corners(c)).toEqual(CORNERS);
          c.dispose();
          for (const t of tables(bounded)) {
            expect(t.limitBytes).toBe(limit);
            // Within the limit, plus the task just run (it may name more than the limit).
            expect(t.bytes).toBeLessThanOrEqual(limit + a.size * 8 + b.size * 8 + c.size * 8 + 1024);
          }
        }
        expect(round).toBeLessThan(2);
      }
      for (const a of live) a.dispose();
      b.dispose();
      for (const t of tables(bounded)) expect(t.bytes).toBeLessThanOrEqual(bounded.bufferPoolStats().retainedBytes);
    } finally {
      if (saved === undefined) delete process.env.TENFERRO_WORKER_BUFFER_TABLE_MAX_BYTES;
      else process.env.TENFERRO_WORKER_BUFFER_TABLE_MAX_BYTES = saved;
      await bounded.close();
    }
  });
});
