// @tenferro/linalg on runExtension (#35): every operation is one core operation — the inputs pinned
// while it waits (defect 7), an extension without executionCapabilities refused where the default
// is (defect 5), a namespace without state, outputs (and inv's identity) from the engine's pool and
// back on dispose or collection (defect 9), which kernel ran on tenferro:provider.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuProviderExecutionCapabilities,
  DEFAULT_EXECUTION_CAPABILITIES,
  EXECUTED,
  ExternalCpuDomain,
  Tensor,
  TenferroError,
  WorkerThreadsDomainExecutor,
  ops,
} from '@tenferro/core';
import { type CpuLinalgKernels, linalg, linalgKernelsKey } from '../src/index.js';
import { recordLinalgKernels } from '../src/testing/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const WELL_BEHAVED: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: false,
  acceptsInner: true,
});

/** A well-conditioned n×n matrix (diagonally dominant), column-major values. */
function values(n: number, seed = 1): number[] {
  const d: number[] = [];
  for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) d.push(i === j ? n + seed : ((i * 7 + j * 3 + seed) % 5) / 10);
  return d;
}

async function rejection(p: Promise<unknown>): Promise<TenferroError> {
  try {
    await p;
  } catch (e) {
    expect(TenferroError.is(e), String(e)).toBe(true);
    return e as TenferroError;
  }
  throw new Error('expected a rejection');
}

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2, providers: [] });
});
afterAll(async () => {
  await backend.close();
});

describe('the namespace', () => {
  it('is frozen and holds no state: no takeCallRecords, the same methods after 1,000 calls, nothing outstanding, no growing memory', async () => {
    const la = linalg(backend);
    expect(Object.isFrozen(la)).toBe(true);
    expect('takeCallRecords' in la).toBe(false);
    const names = Object.getOwnPropertyNames(la).sort();
    const a = Tensor.fromArray('f64', [8, 8], values(8));
    const b = Tensor.fromArray('f64', [8, 1], values(8).slice(0, 8));
    for (let i = 0; i < 50; i++) (await la.solve(a, b)).dispose(); // warm the pool
    const before = backend.bufferPoolStats();
    const bytes = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 1000; i++) {
      const x = await la.solve(a, b);
      x.dispose();
    }
    const after = backend.bufferPoolStats();
    expect(Object.getOwnPropertyNames(la).sort()).toEqual(names);
    expect(after.outstanding).toBe(0);
    expect(after.misses).toBe(before.misses); // every output (and the info words) from the pool, 1,000 times
    expect(after.buffers).toBe(before.buffers);
    expect(process.memoryUsage().arrayBuffers - bytes).toBeLessThan(1 << 20);
  });

  it('refuses what is not a backend or a session', () => {
    expect(() => linalg({} as never)).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
  });
});

describe('pinned inputs (defect 7)', () => {
  it('const p = la.det(a); a.dispose(): tensors of a\'s size made while a blocker holds the permit never take a\'s storage; p equals the reference', async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      const la = linalg(b);
      const n = 24;
      const src = Tensor.fromArray('f64', [n, n], values(n, 3));
      const a = await ops(b).add(src, Tensor.zeros('f64', [n, n])); // pooled storage
      const reference = (await la.det(a)).toArray()[0]!;
      let open!: () => void;
      const later = new Promise<void>((r) => (open = r));
      let entered!: () => void;
      const holding = new Promise<void>((r) => (entered = r));
      const blocker = b.withBackendSession(async (session) => {
        entered();
        await later;
        for (let i = 0; i < 6; i++) (await ops(session).mul(src, src)).dispose(); // tensors of a's size, made and disposed
      });
      await holding;
      const returned = b.bufferPoolStats().returnedByDispose;
      const p = la.det(a);
      a.dispose();
      expect(b.bufferPoolStats().returnedByDispose).toBe(returned); // pinned: not handed back yet
      open();
      await blocker;
      let got: number | TenferroError;
      try {
        got = (await p).toArray()[0]!;
      } catch (e) {
        got = e as TenferroError;
      }
      if (typeof got === 'number') expect(got).toBeCloseTo(reference, 8);
      else expect(got.code).toBe('TensorDisposed');
    } finally {
      await b.close();
    }
  });
});

describe('extension capabilities (defect 5)', () => {
  it('an extension with no executionCapabilities is refused on a caller-managed domain, like one declaring the default; a declared one runs', async () => {
    const executor = await WorkerThreadsDomainExecutor.create({ workers: 2 });
    const external = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, executor, 2)] });
    try {
      let ran = 0;
      const kernels = (caps?: CpuProviderExecutionCapabilities): CpuLinalgKernels => ({
        name: caps === undefined ? 'undeclared' : 'declared',
        ...(caps === undefined ? {} : { executionCapabilities: () => caps }),
        cholesky: (ctx, r) => {
          ran++;
          expect([ctx.parallelMode, ctx.threadBudget]).toEqual(['inner', 2]);
          new Float64Array(r.out[0]!.buffer, r.out[0]!.offset * 8, 1)[0] = 2;
          return EXECUTED;
        },
      });
      const on = (k: CpuLinalgKernels) => external.withProviderBundle(external.providerBundle().toBuilder().extension(linalgKernelsKey(), k).build());
      const a = Tensor.fromArray('f64', [1, 1], [4]);
      for (const k of [kernels(undefined), kernels(DEFAULT_EXECUTION_CAPABILITIES)]) {
        const e = await rejection(linalg(on(k)).cholesky(a));
        expect([e.code, (e.cause as TenferroError).code]).toEqual(['IncompatibleDomain', 'ThreadCountNotEnforceable']);
      }
      expect(ran).toBe(0);
      expect((await linalg(on(kernels(WELL_BEHAVED))).cholesky(a)).toArray()).toEqual([2]);
      expect(ran).toBe(1);
      // No extension: the built-in runs there.
      expect((await linalg(external).cholesky(a)).toArray()).toEqual([2]);
    } finally {
      await external.close();
      await executor.close();
    }
  });
});

describe('outputs come back (defect 9)', () => {
  it('inv: the identity is pooled scratch of the operation — a loop of disposed inverses allocates nothing after the first', async () => {
    const la = linalg(backend);
    const a = Tensor.fromArray('f64', [16, 16], values(16));
    (await la.inv(a)).dispose();
    const before = backend.bufferPoolStats();
    for (let i = 0; i < 200; i++) (await la.inv(a)).dispose();
    const after = backend.bufferPoolStats();
    expect(after.misses).toBe(before.misses);
    expect(after.outstanding).toBe(0);
    // X, the info words and the identity: three buffers per call, all from the pool (no miss above);
    // X back by its dispose, the other two (the operation's scratch) when the operation ended.
    expect(after.returnedByDispose - before.returnedByDispose).toBe(200);
    expect(after.hits - before.hits).toBe(600);
  });

  it('dropped outputs go back to the pool when collected', async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      const la = linalg(b);
      const a = Tensor.fromArray('f64', [64, 64], values(64));
      for (let i = 0; i < 20; i++) await la.luFactor(a); // dropped: lu and pivots
      await turn();
      for (let i = 0; i < 50 && b.bufferPoolStats().returnedByCollection < 40; i++) {
        gc();
        await turn();
      }
      expect(b.bufferPoolStats().returnedByCollection).toBeGreaterThanOrEqual(40);
      const misses = b.bufferPoolStats().misses;
      const { lu, pivots } = await la.luFactor(a);
      expect(b.bufferPoolStats().misses).toBe(misses); // served from what came back
      lu.dispose();
      pivots.dispose();
    } finally {
      await b.close();
    }
  });
});

describe('which kernel ran is on tenferro:provider', () => {
  it('extension, built-in, and the reason a call was declined', async () => {
    const kernels: CpuLinalgKernels = {
      name: 'half',
      executionCapabilities: () => WELL_BEHAVED,
      declinesBeforeWriting: true,
      cholesky: (_ctx, r) => {
        new Float64Array(r.out[0]!.buffer, r.out[0]!.offset * 8, 1)[0] = 2;
        return EXECUTED;
      },
      luFactor: () => ({ executed: false, reason: { kind: 'dtype', dtype: 'f64' } }),
    };
    const b = await CpuBackend.create({ threads: 1, providers: [{ kind: 'faer', name: 'half', extensions: [[linalgKernelsKey(), kernels]] }] });
    try {
      const la = linalg(b);
      const a = Tensor.fromArray('f64', [1, 1], [4]);
      const { calls } = await recordLinalgKernels(async () => {
        await la.cholesky(a);
        await la.det(a);
        await la.qr(a);
      });
      expect(calls).toEqual([
        { op: 'cholesky', kernel: 'extension' },
        { op: 'luFactor', kernel: 'builtin', declined: 'dtype: f64' },
        { op: 'qr', kernel: 'builtin' },
      ]);
    } finally {
      await b.close();
    }
  });
});
