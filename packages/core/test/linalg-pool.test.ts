// withLinalgPool (R73's mode, one admission, the session's pool) and validateLinalgCapabilities
// (R55–R59 for a linear-algebra extension against every reachable domain).
import { Piscina } from 'piscina';
import { afterAll, describe, expect, it } from 'vitest';
import { CpuBackend, type CpuDomainExecutor, type CpuProviderExecutionCapabilities, DEFAULT_EXECUTION_CAPABILITIES, ExternalCpuDomain, referenceGemmProvider } from '../src/index.js';
import { PiscinaDomainExecutor } from '../src/piscina/index.js';
import { expectCode } from './helpers.js';

const backends: CpuBackend[] = [];
const pools: Piscina[] = [];
afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
  await Promise.all(pools.map((p) => p.destroy()));
});
async function create(options: Parameters<typeof CpuBackend.create>[0]): Promise<CpuBackend> {
  const b = await CpuBackend.create(options);
  backends.push(b);
  return b;
}
function piscina(threads: number): PiscinaDomainExecutor {
  const p = new Piscina({ minThreads: threads, maxThreads: threads, idleTimeout: 60_000 });
  pools.push(p);
  return new PiscinaDomainExecutor(p);
}
/** An executor like `inner` but offering no pool (R72: the preferred mode is then Sequential). */
function withoutPool(inner: CpuDomainExecutor): CpuDomainExecutor {
  return {
    capabilities: () => ({ ...inner.capabilities(), innerParallelism: 'none' }),
    install: (job) => inner.install(job),
    submit: (jobs) => inner.submit(jobs),
    workerPool: () => undefined,
    runKernel: (task) => inner.runKernel(task),
  };
}
const fakeBlas = [{ kind: 'blas' as const, name: 'fake blas', gemm: referenceGemmProvider }];

const WELL_BEHAVED: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: false,
  acceptsInner: true,
});


describe('withLinalgPool: the linalg mode of R73', () => {
  it('faer, budget 2 → Inner with a pool of 2; budget 1 → Sequential without one', async () => {
    const b2 = await create({ threads: 2, providers: [] });
    const seen = await b2.withLinalgPool((ctx) => [ctx.parallelMode, ctx.threadBudget, ctx.workerPool()?.size]);
    expect(seen).toEqual(b2.numThreads() > 1 ? ['inner', 2, 2] : ['sequential', 1, undefined]);
    const b1 = await create({ threads: 1, providers: [] });
    expect(await b1.withLinalgPool((ctx) => [ctx.parallelMode, ctx.workerPool()])).toEqual(['sequential', undefined]);
  });

  it('blas → Inner above budget 1 (the runtime owns its threads), Sequential at 1', async () => {
    const b = await create({ kind: 'blas', providers: fakeBlas });
    const mode = await b.withLinalgPool((ctx) => ctx.parallelMode);
    expect(mode).toBe(b.numThreads() > 1 ? 'inner' : 'sequential');
    const one = await create({ kind: 'blas', threads: 1, providers: fakeBlas });
    expect(await one.withLinalgPool((ctx) => ctx.parallelMode)).toBe('sequential');
  });

  it('faer on an executor without a pool → Sequential (the preferred engine mode, R72)', async () => {
    const b = await CpuBackend.fromExternalDomains({ defaultDomain: 3, domains: [ExternalCpuDomain.callerManaged(3, withoutPool(piscina(2)), 2)] });
    backends.push(b);
    expect(await b.withLinalgPool((ctx) => [ctx.parallelMode, ctx.threadBudget])).toEqual(['sequential', 2]);
    const pooled = await CpuBackend.fromExternalDomains({ defaultDomain: 4, domains: [ExternalCpuDomain.callerManaged(4, piscina(2), 2)] });
    backends.push(pooled);
    expect(await pooled.withLinalgPool((ctx) => ctx.parallelMode)).toBe('inner');
  });

  it('one admission and one executor entry; outputs from the engine pool go back on dispose', async () => {
    const b = await create({ threads: 2, providers: [] });
    const entries = () => b.executionInfo().executorEntries.installs;
    const before = entries();
    const returned = b.bufferPoolStats().returnedByDispose;
    const out = await b.withLinalgPool((_ctx, pool) => {
      const t = pool.freshTensor('f64', [3, 2]);
      expect(t.toArray()).toEqual([0, 0, 0, 0, 0, 0]);
      return t;
    });
    expect(entries() - before).toBe(1);
    expect(out.shape).toEqual([3, 2]);
    out.dispose();
    expect(b.bufferPoolStats().returnedByDispose).toBe(returned + 1);
  });

  it('inside a session: reuses its entry (no new install), same linalg mode', async () => {
    const b = await create({ threads: 2, providers: [] });
    const entries = () => b.executionInfo().executorEntries.installs;
    const before = entries();
    const modes = await b.withBackendSession(async (s) => [await s.withLinalgPool((ctx) => ctx.parallelMode), await s.withLinalgPool((ctx) => ctx.parallelMode)]);
    expect(entries() - before).toBe(1);
    expect(modes).toEqual(b.numThreads() > 1 ? ['inner', 'inner'] : ['sequential', 'sequential']);
  });

  it('errors before admission: not a function, unknown option keys; a thrown callback releases everything', async () => {
    const b = await create({ threads: 2, providers: [] });
    await expectCode(b.withLinalgPool(42 as never), 'InvalidArgument', 'Validation');
    await expectCode(b.withLinalgPool(() => 1, { signa: undefined } as never), 'InvalidArgument');
    const aborted = new AbortController();
    aborted.abort();
    await expectCode(b.withLinalgPool(() => 1, { signal: aborted.signal }), 'AdmissionAborted');
    const entries = b.executionInfo().executorEntries.installs;
    await expect(b.withLinalgPool(() => { throw new RangeError('mine'); })).rejects.toThrow(RangeError);
    expect(b.executionInfo().executorEntries.installs).toBe(entries + 1);
    // The permit came back: the next call is admitted.
    expect(await b.withLinalgPool(() => 'again')).toBe('again');
  });
});

describe('validateLinalgCapabilities: R55–R59 against every reachable domain', () => {
  it('accepts a per-call-bounded kernel set on engine workers', async () => {
    const b = await create({ threads: 2, providers: [] });
    expect(() => b.validateLinalgCapabilities('good', WELL_BEHAVED)).not.toThrow();
  });

  it('refuses uncontrolled threads (R55) and a mode it would run in but does not accept (R59)', async () => {
    const b = await create({ threads: 2, providers: [] });
    let e = expectThrown(() => b.validateLinalgCapabilities('ambient', DEFAULT_EXECUTION_CAPABILITIES));
    expect([e.code, (e.cause as { code?: string }).code, e.detail]).toEqual(['IncompatibleDomain', 'ThreadCountNotEnforceable', expect.objectContaining({ slot: 'linalg', provider: 'ambient' })]);
    const sequentialOnly = { ...WELL_BEHAVED, acceptsInner: false };
    if (b.numThreads() > 1) {
      e = expectThrown(() => b.validateLinalgCapabilities('seq', sequentialOnly));
      expect([e.code, (e.cause as { code?: string }).code]).toEqual(['IncompatibleDomain', 'ParallelModeNotSupported']);
    }
    // At budget 1 the linalg mode is Sequential: the same declaration is fine there.
    const one = await create({ threads: 1, providers: [] });
    expect(() => one.validateLinalgCapabilities('seq', sequentialOnly)).not.toThrow();
  });

  it('caller-managed domains: placement must stay on the caller executor (R57), whatever the policy', async () => {
    const b = await CpuBackend.fromExternalDomains({ defaultDomain: 5, domains: [ExternalCpuDomain.callerManaged(5, piscina(2), 2)] });
    backends.push(b);
    const e = expectThrown(() => b.validateLinalgCapabilities('own threads', { ...WELL_BEHAVED, placement: 'externalWorkers' }));
    expect([e.code, (e.cause as { code?: string }).code]).toEqual(['IncompatibleDomain', 'CallerManagedPlacementNotEnforceable']);
    expect(() => b.validateLinalgCapabilities('good', WELL_BEHAVED)).not.toThrow();
  });

  it('the blas kind trusts the runtime on its managed domain (R54), like its bundle', async () => {
    const b = await create({ kind: 'blas', providers: fakeBlas });
    expect(() => b.validateLinalgCapabilities('lapack', { ...DEFAULT_EXECUTION_CAPABILITIES, placement: 'externalWorkers' })).not.toThrow();
  });

  it('a malformed declaration is InvalidArgument naming the field', async () => {
    const b = await create({ threads: 1, providers: [] });
    const e = expectThrown(() => b.validateLinalgCapabilities('odd', { ...WELL_BEHAVED, threadCount: 'lots' } as never));
    expect(e.code).toBe('InvalidArgument');
    expect(e.message).toContain('threadCount');
    expect(expectThrown(() => b.validateLinalgCapabilities(7 as never, WELL_BEHAVED)).code).toBe('InvalidArgument');
  });
});

function expectThrown(fn: () => unknown): { code: string; cause: unknown; message: string; detail?: unknown } {
  try {
    fn();
  } catch (e) {
    return e as { code: string; cause: unknown; message: string; detail?: unknown };
  }
  throw new Error('expected a throw');
}
