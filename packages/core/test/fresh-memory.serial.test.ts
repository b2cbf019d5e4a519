// Fresh memory inside the permit (#38), on a backend of two threads (serial: its workers take
// every CPU of a 2-CPU machine):
// - fresh pooled storage an operation overwrites is pre-faulted by the engine's workers inside the
//   operation's admitted execution, before its kernel (a `tenferro:pool` `prefault` event inside
//   the `tenferro:execution` interval, before the `tenferro:provider` GEMM call);
// - only the bytes the operation writes are pre-faulted; TENFERRO_PREFAULT=0 turns it off;
// - the pool's cap (R113) holds with huge-page advice and pre-faulting on;
// - a loop that drops 4 MiB outputs gets ≥ 90 % pool hits after 10 warm-up calls, without gc().
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CpuExecutionContext,
  type CpuGemmProvider,
  CpuBackend,
  CpuProviderBundle,
  DIAGNOSTICS_CHANNELS,
  type ExecutionEvent,
  type PoolEvent,
  type ProviderEvent,
  Tensor,
  discoverCpuTopology,
  referenceGemmProvider,
} from '../src/index.js';
import { resetHugePagePolicy } from '../src/buffer/huge-pages.js';

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;
const MiB = 1024 * 1024;

/** The reference GEMM declared as a provider that runs on the engine's workers (Inner mode at budget 2, R75). */
function innerGemm(): { bundle: CpuProviderBundle; pools: (number | undefined)[] } {
  const pools: (number | undefined)[] = [];
  const provider: CpuGemmProvider = {
    ...referenceGemmProvider,
    name: 'reference on the engine workers',
    executionCapabilities: () => ({ ...referenceGemmProvider.executionCapabilities(), threadCount: 'perCallUpperBound', placement: 'engineWorkers' }),
    gemm(ctx: CpuExecutionContext, req) {
      pools.push(ctx.workerPool()?.size);
      return referenceGemmProvider.gemm(ctx, req);
    },
  };
  return { bundle: CpuProviderBundle.builder('faer').gemmProvider(provider).build(), pools };
}

/** A cheap product with a 1024×1024 output (K = 1): an 8 MiB f64 or 4 MiB f32 fresh output. */
function outer(dtype: 'f64' | 'f32', m = 1024, n = 1024): [Tensor, Tensor] {
  return [Tensor.fromArray(dtype, [m, 1], Array.from({ length: m }, (_, i) => i % 7)), Tensor.fromArray(dtype, [1, n], Array.from({ length: n }, (_, i) => i % 5))];
}

const saved = process.env.TENFERRO_PREFAULT;
afterEach(() => {
  if (saved === undefined) delete process.env.TENFERRO_PREFAULT;
  else process.env.TENFERRO_PREFAULT = saved;
  resetHugePagePolicy();
});

describe.skipIf(!twoCpus)('pre-faulting inside the permit (needs 2 CPUs: a backend of 2 threads)', () => {
  it('a fresh output is pre-faulted by the workers inside the execution, before the GEMM, and only the bytes it writes', async () => {
    const { bundle, pools } = innerGemm();
    const b = await CpuBackend.create({ threads: 2, providers: [] });
    const h = b.withProviderBundle(bundle);
    const events: PoolEvent[] = [];
    const executions: ExecutionEvent[] = [];
    const gemms: ProviderEvent[] = [];
    const onPool = (e: unknown) => void events.push(e as PoolEvent);
    const execution = { start: (e: unknown) => void executions.push(e as ExecutionEvent) };
    const provider = { start: (e: unknown) => void gemms.push(e as ProviderEvent) };
    subscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
    tracingChannel(DIAGNOSTICS_CHANNELS.execution).subscribe(execution as never);
    tracingChannel(DIAGNOSTICS_CHANNELS.provider).subscribe(provider as never);
    try {
      const [x, y] = outer('f64');
      const out = await h.matmul(x, y);
      expect(pools).toEqual([2]); // the GEMM ran Inner on the pool of 2: pre-faulting may use it
      const prefaults = events.filter((e) => e.kind === 'prefault');
      expect(prefaults).toHaveLength(1);
      expect(prefaults[0]!.bytes).toBe(1024 * 1024 * 8); // the output's data, not its padded capacity
      expect(events.findIndex((e) => e.kind === 'miss')).toBeLessThan(events.indexOf(prefaults[0]!));
      const exec = executions.find((e) => e.op === 'CpuBackend.matmul')!;
      expect(exec.durationNs).toBeDefined();
      const t = prefaults[0]!.time;
      expect(t).toBeGreaterThanOrEqual(exec.startTime);
      expect(t).toBeLessThanOrEqual(exec.startTime + BigInt(exec.durationNs!));
      const gemm = gemms.find((e) => e.slot === 'gemm')!;
      expect(t).toBeLessThanOrEqual(gemm.startTime); // before the kernel
      expect(out.toArray()[1023 + 1024 * 1023]).toBe((1023 % 7) * (1023 % 5));
      // A retained buffer is resident already: reused, it is not pre-faulted again.
      out.dispose();
      events.length = 0;
      (await h.matmul(x, y)).dispose();
      expect(events.map((e) => e.kind)).toEqual(['hit']);
      // Below 4 MiB nothing is pre-faulted (the task round trip would cost more): a 2 MiB f32 output (no f32 buffer retained).
      const [sx, sy] = outer('f32', 1024, 512);
      events.length = 0;
      (await h.matmul(sx, sy)).dispose();
      expect(events.map((e) => e.kind)).toEqual(['miss']);
    } finally {
      unsubscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
      tracingChannel(DIAGNOSTICS_CHANNELS.execution).unsubscribe(execution as never);
      tracingChannel(DIAGNOSTICS_CHANNELS.provider).unsubscribe(provider as never);
      await b.close();
    }
  });

  it('TENFERRO_PREFAULT=0 turns pre-faulting off', async () => {
    process.env.TENFERRO_PREFAULT = '0';
    resetHugePagePolicy();
    const { bundle } = innerGemm();
    const b = await CpuBackend.create({ threads: 2, providers: [] });
    const kinds: string[] = [];
    const onPool = (e: unknown) => void kinds.push((e as PoolEvent).kind);
    subscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
    try {
      const [x, y] = outer('f64');
      const out = await b.withProviderBundle(bundle).matmul(x, y);
      expect(kinds).toEqual(['miss']);
      expect(out.toArray()[5]).toBe(5 % 7 * 0);
    } finally {
      unsubscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
      await b.close();
    }
  });

  it('the pool cap holds with huge-page advice and pre-faulting on (R113)', async () => {
    const { bundle } = innerGemm();
    const b = await CpuBackend.create({ threads: 2, providers: [] });
    const cap = 24 * MiB;
    b.setBufferPoolLimitBytes(cap);
    const h = b.withProviderBundle(bundle);
    const retained: number[] = [];
    let prefaults = 0;
    const onPool = (e: unknown) => {
      const event = e as PoolEvent;
      retained.push(event.retainedBytes);
      if (event.kind === 'prefault') prefaults++;
    };
    subscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
    try {
      const [x, y] = outer('f64');
      // Six 8 MiB outputs alive at once (48 MiB of fresh storage), then all disposed together: at
      // most what fits under 24 MiB stays.
      const outs = [];
      for (let i = 0; i < 6; i++) outs.push(await h.matmul(x, y));
      for (const o of outs) o.dispose();
      expect(prefaults).toBe(6);
      const stats = b.bufferPoolStats();
      expect(stats.retainedBytes).toBeLessThanOrEqual(cap);
      expect(stats.retainedBytes).toBeGreaterThan(0);
      expect(Math.max(...retained)).toBeLessThanOrEqual(cap);
    } finally {
      unsubscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
      await b.close();
    }
  });
});

describe('a loop that drops its outputs reuses their storage', () => {
  it('4 MiB f32 outputs: after 10 warm-up calls, at least 90 % of the next 30 are pool hits, without gc()', async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    let hits = 0;
    let misses = 0;
    const onPool = (e: unknown) => {
      const event = e as PoolEvent;
      if (event.dtype !== 'f32' || event.bytes < 4 * MiB) return;
      if (event.kind === 'hit') hits++;
      else if (event.kind === 'miss') misses++;
    };
    try {
      const [x, y] = outer('f32');
      for (let i = 0; i < 10; i++) await b.matmul(x, y);
      subscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
      for (let i = 0; i < 30; i++) await b.matmul(x, y);
      unsubscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
      expect(hits + misses).toBe(30);
      expect(hits / 30).toBeGreaterThanOrEqual(0.9);
      expect(b.bufferPoolStats().returnedByCollection).toBeGreaterThan(0);
    } finally {
      unsubscribe(DIAGNOSTICS_CHANNELS.pool, onPool);
      await b.close();
    }
  });
});
