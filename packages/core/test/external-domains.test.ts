import { Piscina } from 'piscina';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuDomainExecutor,
  CpuProviderBundle,
  CpuSet,
  discoverCpuTopology,
  ExternalCpuDomain,
  processArbiter,
  referenceGemmProvider,
  Tensor,
} from '../src/index.js';
import { PiscinaDomainExecutor } from '../src/piscina/index.js';
import { naiveDotGeneral, peakThreadsDuring, randomOperand, relativeError, seededRandom } from '../src/testing/index.js';
import { expectCode, kernel, onePerCpuTopology, reached, until } from './helpers.js';

const rendezvous = kernel<{ buffer: SharedArrayBuffer; mine: number; theirs: number; timeoutMs: number }, boolean>('rendezvous');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');
const nestedEntry = kernel<{ coreUrl: string }, string>('nestedBackendEntry');
const noop = kernel('noop');

const pools: Piscina[] = [];
function pool(threads: number): Piscina {
  const p = new Piscina({ minThreads: threads, maxThreads: threads, idleTimeout: 60_000 });
  pools.push(p);
  return p;
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.destroy()));
});

const allowed = discoverCpuTopology().allowedCpus;
const coreUrl = new URL('../dist/index.js', import.meta.url).href;

describe('ExternalCpuDomain constructors (R37, R38)', () => {
  const exec = () => new PiscinaDomainExecutor(pool(2));
  it('cooperative: declared placement, checks workers and budget', () => {
    const d = ExternalCpuDomain.cooperative(5, { allAllowed: true, cpus: allowed }, exec(), 2);
    expect(d.admissionMode()).toBe('cooperativeCpuSet');
    expect(d.cpus()?.equals(allowed)).toBe(true);
    expect(d.ownership()).toBe('externalManaged');
    expect(() => ExternalCpuDomain.cooperative(5, { allAllowed: true, cpus: allowed }, exec(), 3)).toThrow(expect.objectContaining({ code: 'ThreadBudgetExceedsWorkerCount' }));
    expect(() => ExternalCpuDomain.cooperative(5, { allAllowed: true, cpus: undefined as never }, exec(), 1)).toThrow(expect.objectContaining({ code: 'EmptyPlacementCpuSet' }));
    const real = exec();
    const zero: CpuDomainExecutor = {
      capabilities: () => ({ ...real.capabilities(), workerCount: 0 }),
      install: (job) => real.install(job),
      submit: (jobs) => real.submit(jobs),
      workerPool: () => real.workerPool(),
      runKernel: (task) => real.runKernel(task),
    };
    expect(() => ExternalCpuDomain.callerManaged(1, zero, 1)).toThrow(expect.objectContaining({ code: 'ZeroExecutorWorkers' }));
  });
  it('caller-managed: no CPU set, no placement claim', () => {
    const d = ExternalCpuDomain.callerManaged(9n, exec(), 1);
    expect(d.admissionMode()).toBe('callerManaged');
    expect(d.placement()).toBeUndefined();
    expect(d.cpus()).toBeUndefined();
  });
});

describe('registry validation in the order of R39', () => {
  const exec = () => new PiscinaDomainExecutor(pool(1));
  const coop = (id: number, placement: Parameters<typeof ExternalCpuDomain.cooperative>[1]) => ExternalCpuDomain.cooperative(id, placement, exec(), 1);
  const first = CpuSet.of([allowed.first]);
  const outside = CpuSet.of([allowed.last + 1]);
  it.each([
    ['EmptyRegistry', () => ({ defaultDomain: 1, domains: [] })],
    ['DuplicateDomainId', () => ({ defaultDomain: 1, domains: [coop(1, { numaNode: 0, cpus: first }), coop(1, { numaNode: 1, cpus: first })] })],
    ['DuplicatePlacementIdentity', () => ({ defaultDomain: 1, domains: [coop(1, { numaNode: 0, cpus: first }), coop(2, { numaNode: 0, cpus: first })] })],
    ['DuplicatePlacementIdentity', () => ({ defaultDomain: 1, domains: [coop(1, { allAllowed: true, cpus: allowed }), coop(2, { allAllowed: true, cpus: allowed })] })],
    ['ExactAllAllowedMismatch', () => ({ defaultDomain: 1, domains: [coop(1, { allAllowed: true, cpus: first.union(outside) })] })],
    ['CpuOutsideAllowedSet', () => ({ defaultDomain: 1, domains: [coop(1, { numaNode: 3, cpus: first.union(outside) })] })],
    ['MissingDefaultDomain', () => ({ defaultDomain: 42, domains: [coop(1, { numaNode: 0, cpus: first })] })],
    // an earlier rule wins over a later one in the same input
    ['DuplicateDomainId', () => ({ defaultDomain: 42, domains: [coop(1, { numaNode: 0, cpus: first }), coop(1, { numaNode: 0, cpus: first.union(outside) })] })],
  ] as const)('%s', async (code, options) => {
    await expectCode(CpuBackend.fromExternalDomains(options() as never), code, 'Validation');
  });

  it('different placement identities may overlap; the all-allowed declaration must equal the process set', async () => {
    const b = await CpuBackend.fromExternalDomains({
      defaultDomain: 1,
      domains: [coop(1, { numaNode: 0, cpus: allowed }), coop(2, { numaNode: 1, cpus: first }), coop(3, { allAllowed: true, cpus: allowed })],
    });
    expect(b.forDomain(2).executionInfo().domainCpus).toBe(first.toString());
    expect(b.forPlacement({ numaNode: 1 }).executionInfo().domainId).toBe(2);
    expect(b.forPlacement('allAllowed').executionInfo().domainId).toBe(3);
    await expectCode(() => b.forPlacement({ numaNode: 9 }), 'UnregisteredExternalPlacement', 'RuntimeState');
    await expectCode(() => b.forDomain(77), 'UnregisteredExternalDomain', 'RuntimeState');
    await b.close();
  });

  it('forDomain on a managed backend is UnregisteredExternalDomain', async () => {
    const m = await CpuBackend.create({ threads: 1 });
    await expectCode(() => m.forDomain(0), 'UnregisteredExternalDomain');
    await m.close();
  });
});

describe('cooperative external domains (R34, R46)', () => {
  it.skipIf(allowed.size < 2)('overlapping declared sets never run together; disjoint ones do (needs 2 CPUs: two disjoint declared sets)', async () => {
    const topo = onePerCpuTopology();
    const [c0, c1] = topo.allowedCpus.toArray();
    const p = pool(2);
    const b = await CpuBackend.fromExternalDomains({
      defaultDomain: 1,
      domains: [
        ExternalCpuDomain.cooperative(1, { numaNode: 0, cpus: CpuSet.of([c0!]) }, new PiscinaDomainExecutor(p), 1),
        ExternalCpuDomain.cooperative(2, { numaNode: 2, cpus: CpuSet.of([c1!]) }, new PiscinaDomainExecutor(p), 1),
        ExternalCpuDomain.cooperative(3, { allAllowed: true, cpus: topo.allowedCpus }, new PiscinaDomainExecutor(p), 1),
      ],
      topology: topo,
    });
    try {
      const info = b.executionInfo();
      expect(info.executionMode).toBe('externalManaged');
      expect(info.executorAffinity).toBe('callerDeclaredUnverified');
      expect(info.executorShutdown).toBe('callerOwned');
      const flags = new SharedArrayBuffer(8);
      expect(
        await Promise.all([
          b.install((ctx) => ctx.run(rendezvous, { buffer: flags, mine: 0, theirs: 1, timeoutMs: 10_000 })),
          b.forDomain(2).install((ctx) => ctx.run(rendezvous, { buffer: flags, mine: 1, theirs: 0, timeoutMs: 10_000 })),
        ]),
      ).toEqual([true, true]);
      const gate = new SharedArrayBuffer(12);
      const g = new Int32Array(gate);
      const first = b.install((ctx) => ctx.run(holdUntil, { buffer: gate, index: 0, enteredIndex: 1, timeoutMs: 10_000 }));
      await reached(g, 1);
      let started = false;
      const second = b.forDomain(3).install(async () => {
        started = true;
      });
      await until(() => processArbiter().stats().waiting === 1);
      expect(started).toBe(false);
      Atomics.store(g, 0, 1);
      Atomics.notify(g, 0);
      await Promise.all([first, second]);
      expect(started).toBe(true);
    } finally {
      await b.close();
    }
  });

  it('withExecutionScope on an external domain is Unsupported with zero executor entries (R48)', async () => {
    const b = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, new PiscinaDomainExecutor(pool(1)), 1)] });
    await expectCode(b.withExecutionScope(() => 1), 'Unsupported', 'Unsupported');
    expect(b.executionInfo().executorEntries.installs).toBe(0);
    await b.close();
  });
});

describe('caller-managed domains (R35, R43, R57, R47)', () => {
  let p: Piscina;
  let b: CpuBackend;
  beforeAll(async () => {
    p = pool(2);
    b = await CpuBackend.fromExternalDomains({ defaultDomain: 7, domains: [ExternalCpuDomain.callerManaged(7, new PiscinaDomainExecutor(p), 2)] });
  });
  afterAll(async () => {
    await b.close();
  });

  it('reports caller-managed diagnostics without a placement claim', () => {
    const info = b.executionInfo();
    expect(info.executionMode).toBe('callerManaged');
    expect(info.admissionMode).toBe('callerManaged');
    expect(info.resolvedPlacement).toBeUndefined();
    expect(info.domainCpus).toBeUndefined();
    expect(info.executorShutdown).toBe('callerOwned');
    expect(info.workerCount).toBe(2);
    expect(info.threadBudget).toBe(2);
    expect(info.backendKind).toBe('faer');
    expect(info.providerDiagnostic).toContain('caller-managed');
  });

  it('never enters the arbiter: runs while an overlapping cooperative domain holds its permit', async () => {
    const coop = await CpuBackend.create({ threads: 1 });
    try {
      const gate = new SharedArrayBuffer(12);
      const g = new Int32Array(gate);
      const held = coop.install((ctx) => ctx.run(holdUntil, { buffer: gate, index: 0, enteredIndex: 1, timeoutMs: 10_000 }));
      await reached(g, 1);
      expect(await b.install(async (ctx) => (await ctx.run(noop), 'ran'))).toBe('ran');
      expect(processArbiter().stats().waiting).toBe(0);
      Atomics.store(g, 0, 1);
      Atomics.notify(g, 0);
      await held;
    } finally {
      await coop.close();
    }
  });

  it('entry from a pool worker while active is Reentered, a top-level call queues behind the running execution; the guard clears after success and after an error', async () => {
    const gate = new SharedArrayBuffer(12);
    const g = new Int32Array(gate);
    const order: string[] = [];
    const first = b.withBackendSession(async (s) =>
      s.run('inner', async (ctx) => {
        const pool = ctx.workerPool()!;
        const hold = pool.runOn(0, holdUntil, { buffer: gate, index: 0, enteredIndex: 1, timeoutMs: 10_000 });
        await reached(g, 1);
        const fromWorker = await pool.runOn(1, nestedEntry, { coreUrl });
        Atomics.store(g, 0, 1);
        Atomics.notify(g, 0);
        await hold;
        order.push('first done');
        return fromWorker;
      }),
    );
    await reached(g, 1);
    const queued = b.install(() => order.push('queued')); // unrelated top-level entry: waits for the guard
    expect(await first).toBe('Reentered');
    await queued;
    expect(order).toEqual(['first done', 'queued']);
    expect(await b.install(() => 'after success')).toBe('after success');
    await expect(b.install(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await b.install(() => 'after error')).toBe('after error');
  });

  it('a faer GEMM with budget 2 uses only the pool\'s threads and gives reference results; fresh outputs carry the domain id', async () => {
    const rand = seededRandom(3);
    const x = randomOperand(rand, 'f64', [48, 40], true);
    const y = randomOperand(rand, 'f64', [40, 36], true);
    await b.matmul(x, y); // warm: the pool's workers import the kernels
    const { result, newThreads } = await peakThreadsDuring(() => b.withBackendSession((s) => s.dotGeneral(x, y, { contracting: [[1], [0]] })));
    expect(newThreads).toEqual([]);
    expect(relativeError(result.toArray() as number[], naiveDotGeneral(x, y, { contracting: [[1], [0]] }).values)).toBeLessThan(1e-12);
    expect(result.placement.cpuAffinity).toBe(7);
  });

  it('refuses the blas family (R47) and uncontrolled or external-worker providers (R57) where the bundle or backend is made, so no operation can reach them', async () => {
    // The refusals come from withProviderBundle and fromExternalDomains themselves: there is no
    // bundle or backend to call an operation on, so the test asserts the refusing call (#39: it
    // used to chain a dotGeneralInto that never ran and check its output "untouched").
    const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    const y = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);
    let gemmCalls = 0;
    const counted = { ...referenceGemmProvider, gemm: (ctx: Parameters<typeof referenceGemmProvider.gemm>[0], req: Parameters<typeof referenceGemmProvider.gemm>[1]) => (gemmCalls++, referenceGemmProvider.gemm(ctx, req)) };
    const entries = () => b.executionInfo().executorEntries;
    const entriesBefore = entries();

    // R47 goes by what the GEMM provider declares, not by the bundle's kind: a BLAS-family provider
    // in a faer-kind bundle is refused …
    const blasFamily = { ...counted, declaredSupport: () => ({ ...referenceGemmProvider.declaredSupport!(), family: 'blas' as const }) };
    const blasBundle = CpuProviderBundle.builder('faer').gemmProvider(blasFamily).build();
    const e = await expectCode(() => b.withProviderBundle(blasBundle), 'IncompatibleDomain', 'Validation');
    expect((e.cause as { code: string }).code).toBe('CallerManagedBlasUnsupported');

    const external = { ...counted, executionCapabilities: () => ({ ...referenceGemmProvider.executionCapabilities(), placement: 'externalWorkers' as const }) };
    const externalBundle = CpuProviderBundle.builder('faer').gemmProvider(external).build();
    const e2 = await expectCode(() => b.withProviderBundle(externalBundle), 'IncompatibleDomain', 'Validation');
    expect((e2.cause as { code: string }).code).toBe('CallerManagedPlacementNotEnforceable');

    await expectCode(
      CpuBackend.fromExternalDomains({ kind: 'blas', defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, new PiscinaDomainExecutor(p), 1)], providers: [{ kind: 'blas', name: 'x', gemm: counted }] }),
      'CallerManagedBlasUnsupported',
      'Unsupported',
    );
    expect(gemmCalls).toBe(0);
    expect(entries()).toEqual(entriesBefore);
    // … while a blas-kind bundle whose GEMM provider is not of the BLAS family runs.
    const notBlas = b.withProviderBundle(CpuProviderBundle.builder('blas').gemmProvider(counted).build());
    expect((await notBlas.matmul(x, y)).toArray()).toEqual([1, 2, 3, 4]);
    expect(gemmCalls).toBe(1);
  });

  it('two caller-managed domains run concurrently whatever their affinity', async () => {
    const other = await CpuBackend.fromExternalDomains({ defaultDomain: 8, domains: [ExternalCpuDomain.callerManaged(8, new PiscinaDomainExecutor(pool(1)), 1)] });
    try {
      const flags = new SharedArrayBuffer(8);
      expect(
        await Promise.all([
          b.install((ctx) => ctx.run(rendezvous, { buffer: flags, mine: 0, theirs: 1, timeoutMs: 10_000 })),
          other.install((ctx) => ctx.run(rendezvous, { buffer: flags, mine: 1, theirs: 0, timeoutMs: 10_000 })),
        ]),
      ).toEqual([true, true]);
    } finally {
      await other.close();
    }
  });
});

describe('executor failures (R49)', () => {
  it('an executor that refuses entry surfaces as ExecutorFailed carrying the original error; the permit is released', async () => {
    const refusing = new PiscinaDomainExecutor(pool(1));
    const refusal = new Error('admission refused');
    Object.defineProperty(refusing, 'install', { value: async () => Promise.reject(refusal) });
    const b = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.cooperative(1, { allAllowed: true, cpus: allowed }, refusing, 1)] });
    try {
      const e = await expectCode(b.install(() => 1), 'ExecutorFailed', 'BackendFailure');
      expect(e.cause).toBe(refusal);
      expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
    } finally {
      await b.close();
    }
  });

  it('closing the backend never destroys the caller\'s pool', async () => {
    const p = pool(1);
    const b = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, new PiscinaDomainExecutor(p), 1)] });
    await b.install((ctx) => ctx.run(noop));
    await b.close();
    expect(await p.run(null, { filename: new URL('../bench/noop-kernel.mjs', import.meta.url).href, name: 'noop' })).toBeUndefined();
  });
});
