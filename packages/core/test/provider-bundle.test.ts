import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuGemmProvider,
  type CpuProviderExecutionCapabilities,
  CpuProviderBundle,
  defineExtensionKey,
  discoverCpuTopology,
  referenceGemmProvider,
  referenceLayoutProvider,
  Tensor,
} from '../src/index.js';
import { expectCode, onePerCpuTopology, topologyOverRealCpus } from './helpers.js';

const caps = (c: Partial<CpuProviderExecutionCapabilities>): CpuProviderExecutionCapabilities => ({
  ...referenceGemmProvider.executionCapabilities(),
  ...c,
});
function gemmWith(c: Partial<CpuProviderExecutionCapabilities>) {
  let calls = 0;
  let sampled = 0;
  const provider: CpuGemmProvider = {
    name: 'test gemm',
    executionCapabilities: () => {
      sampled++;
      return caps(c);
    },
    async gemm(ctx, req) {
      calls++;
      return referenceGemmProvider.gemm(ctx, req);
    },
  };
  return { provider, calls: () => calls, sampled: () => sampled };
}

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;
let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2 });
});
afterAll(async () => {
  await backend.close();
});

describe('CpuProviderBundle', () => {
  it('builder(kind) defaults per R50; customBuilder starts empty; build needs gemm and layout', () => {
    const faer = CpuProviderBundle.builder('faer').build();
    expect(faer.gemm).toBe(referenceGemmProvider);
    expect(faer.layoutTransform).toBe(referenceLayoutProvider);
    expect(faer.groupedScheduling).toBe('engineOuter');
    expect(faer.capabilityPolicy).toBe('strict');
    expect(faer.generalContraction).toBeUndefined();
    expect(() => CpuProviderBundle.builder('blas').build()).toThrow(expect.objectContaining({ code: 'BundleIncomplete' }));
    const custom = CpuProviderBundle.customBuilder();
    expect(() => custom.build()).toThrow(expect.objectContaining({ code: 'BundleIncomplete', kind: 'Validation' }));
    expect(custom.gemmProvider(referenceGemmProvider).layoutTransformProvider(referenceLayoutProvider).build().groupedScheduling).toBe('providerOwned');
  });

  it('setting a GEMM provider resets grouped scheduling; engineOuterGroupedGemm opts in again (R51)', () => {
    const b = CpuProviderBundle.builder('faer').gemmProvider(referenceGemmProvider);
    expect(b.build().groupedScheduling).toBe('providerOwned');
    expect(b.engineOuterGroupedGemm().build().groupedScheduling).toBe('engineOuter');
  });

  it('samples each slot\'s capabilities exactly once, at build (R52)', async () => {
    const g = gemmWith({});
    const bundle = CpuProviderBundle.builder('faer').gemmProvider(g.provider).build();
    expect(g.sampled()).toBe(1);
    const h = backend.withProviderBundle(bundle);
    await h.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]));
    expect(g.sampled()).toBe(1);
    expect(g.calls()).toBe(1);
  });

  it('rejects malformed providers and capabilities', () => {
    expect(() => CpuProviderBundle.customBuilder().gemmProvider({} as never)).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    const bad = { ...referenceGemmProvider, executionCapabilities: () => ({ threadCount: 'lots' }) } as unknown as CpuGemmProvider;
    expect(() => CpuProviderBundle.builder('faer').gemmProvider(bad).build()).toThrow(/threadCount/);
  });
});

describe('typed extensions (R53)', () => {
  const KEY = defineExtensionKey<{ solve: (x: number) => number }>('test.bundle.solver');
  it('are stored by key, last insert wins, absent keys give undefined, never validated', async () => {
    const first = { solve: (x: number) => x };
    const second = { solve: (x: number) => 2 * x };
    const other = defineExtensionKey<string>('test.bundle.other');
    const bundle = CpuProviderBundle.builder('faer').extension(KEY, first).extension(KEY, second).build();
    expect(bundle.extension(KEY)).toBe(second);
    expect(bundle.extension(other)).toBeUndefined();
    expect(bundle.extensionCount).toBe(1);
    const h = backend.withProviderBundle(bundle);
    expect(h.providerBundle().extension(KEY)?.solve(21)).toBe(42);
    expect(backend.providerBundle().extension(KEY)).toBeUndefined();
  });

  it('an extension a provider package registers is visible through bundle.extension', async () => {
    const KERNELS = defineExtensionKey<string>('test.bundle.family-kernels');
    const b = await CpuBackend.create({ threads: 1, providers: [{ kind: 'faer', name: 'pkg', extensions: [[KERNELS, 'kernels']] }] });
    try {
      expect(b.providerBundle().extension(KERNELS)).toBe('kernels');
    } finally {
      await b.close();
    }
  });

  it('keys are identity-by-name: a second definition returns the same key', () => {
    expect(defineExtensionKey('test.bundle.once')).toBe(defineExtensionKey('test.bundle.once'));
  });
});

describe('validation before execution (R3, R54–R62)', () => {
  it('a globalOrUncontrolled GEMM is rejected by withProviderBundle on a managed faer backend before anything runs', async () => {
    const g = gemmWith({ threadCount: 'globalOrUncontrolled', placement: 'externalWorkers', acceptsSequential: false, workerLocalSequential: false });
    const entriesBefore = backend.executionInfo().executorEntries;
    const e = await expectCode(() => backend.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(g.provider).build()), 'IncompatibleDomain', 'Validation');
    expect((e.cause as { code: string }).code).toBe('ThreadCountNotEnforceable');
    expect(e.detail.slot).toBe('gemm');
    expect(g.calls()).toBe(0);
    expect(backend.executionInfo().executorEntries).toEqual(entriesBefore);
  });

  it.skipIf(!twoCpus)('a provider that does not accept the mode the domain needs is ParallelModeNotSupported (needs 2 CPUs: budget 2)', async () => {
    const seqOnly = gemmWith({ acceptsInner: false });
    backend.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(seqOnly.provider).build()); // falls back to Sequential
    const nothing = gemmWith({ acceptsInner: false, acceptsSequential: false });
    const e = await expectCode(() => backend.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(nothing.provider).build()), 'IncompatibleDomain');
    expect((e.cause as { code: string }).code).toBe('ParallelModeNotSupported');
    const noOuter = gemmWith({ acceptsOuter: false });
    const e2 = await expectCode(() => backend.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(noOuter.provider).engineOuterGroupedGemm().build()), 'IncompatibleDomain');
    expect((e2.cause as { detail: { mode: string } }).detail.mode).toBe('outer');
  });

  it.skipIf(!twoCpus)('validates every reachable domain, NUMA engines included (R60) (needs 2 CPUs: a NUMA node smaller than the all-allowed set)', async () => {
    // Budget 2 on the all-allowed engine, budget 1 on every one-CPU NUMA node. A GEMM provider
    // that accepts Inner but refuses Sequential is valid on the first and invalid only on the
    // nodes, whose engines are not built yet: the bundle must still be refused, or a later
    // forPlacement({ numaNode }) would run it in a mode it does not accept.
    const innerOnly = () => gemmWith({ acceptsSequential: false }).provider;
    const flat = await CpuBackend.create({ threads: 2, topology: topologyOverRealCpus([]) });
    const numa = await CpuBackend.create({ threads: 2, topology: onePerCpuTopology() });
    try {
      // control: without NUMA nodes the same bundle installs (only the all-allowed domain is reachable)
      expect(flat.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(innerOnly()).build()).providerBundle().gemm.name).toBe('test gemm');
      expect(numa.numThreads()).toBe(2);
      const firstNode = numa.topology().nodes[0]!;
      expect(numa.forPlacement({ numaNode: firstNode.id }).executionInfo().engineBuilt).toBe(false);
      const e = await expectCode(() => numa.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(innerOnly()).build()), 'IncompatibleDomain', 'Validation');
      expect(e.detail.domainId).toBe(1); // NUMA node 1 + position 0, not the all-allowed domain 0
      expect(e.cause).toMatchObject({ code: 'ParallelModeNotSupported', detail: { mode: 'sequential' } });
      expect(numa.forPlacement({ numaNode: firstNode.id }).providerBundle()).toBe(numa.providerBundle());
    } finally {
      await flat.close();
      await numa.close();
    }
  });

  it('gives a new identity; existing clones keep their bundle', () => {
    const bundle = CpuProviderBundle.builder('faer').build();
    const clone = backend.clone();
    const h = backend.withProviderBundle(bundle);
    expect(h.runtimeIdentity()).not.toBe(backend.runtimeIdentity());
    expect(h.providerBundle()).toBe(bundle);
    expect(clone.providerBundle()).toBe(backend.providerBundle());
    expect(clone.providerBundle()).not.toBe(bundle);
  });

  it('the blas standard bundle uses provider-default compatibility: an uncontrolled GEMM is accepted', async () => {
    const g = gemmWith({ threadCount: 'globalOrUncontrolled', placement: 'externalWorkers', acceptsSequential: false, workerLocalSequential: false });
    const b = await CpuBackend.create({ kind: 'blas', providers: [{ kind: 'blas', name: 'fake blas', gemm: g.provider }] });
    try {
      expect(b.providerBundle().capabilityPolicy).toBe('providerDefaultCompatibility');
      const r = await b.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]));
      expect(r.toArray()).toEqual([1, 2, 3, 4]);
      expect(g.calls()).toBe(1);
    } finally {
      await b.close();
    }
  });
});
