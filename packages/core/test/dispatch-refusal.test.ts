// R61, R62, R99: the dispatch mode of the GEMM call is decided — and refused — before anything
// happens: no permit, no executor entry, no kernel task, no buffer taken, no provider call, and a
// caller-owned output byte-identical.
//
// Through the public API this refusal is unreachable: every bundle is validated against every
// domain it can reach when it is installed (R3, R58, R60), and a validated bundle always has a
// dispatch mode. So these tests drive the operations (`ops/dot-general.ts`) directly, with a
// handle runner over a real external coordinator and bundles that were never validated.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdmissionEvent,
  type CpuDomainExecutor,
  type CpuGemmProvider,
  type CpuProviderExecutionCapabilities,
  CpuProviderBundle,
  CpuSet,
  discoverCpuTopology,
  ExternalCpuDomain,
  type ProviderParallelMode,
  referenceGemmProvider,
  Tensor,
  TenferroError,
  WorkerThreadsDomainExecutor,
} from '../src/index.js';
import * as ops from '../src/ops/dot-general.js';
import type { CapabilityPolicy } from '../src/provider/provider-bundle.js';
import { Coordinator } from '../src/runtime/engine/coordinator.js';
import { type OperationRunner, handleRunner } from '../src/runtime/execution/admission.js';

const topology = discoverCpuTopology();
let real: WorkerThreadsDomainExecutor;
let coordinator: Coordinator;
const calls = { install: 0, submit: 0, kernels: 0 };
/** Permits granted, as `tenferro:admission` reports them (admission.ts). */
const permits: unknown[] = [];
const onPermit = (m: unknown) => {
  const e = m as AdmissionEvent;
  if (e.via === 'arbiter' && e.outcome === 'granted') permits.push(m);
};

beforeAll(async () => {
  real = await WorkerThreadsDomainExecutor.create({ workers: 2 });
  const counting: CpuDomainExecutor = {
    capabilities: () => real.capabilities(),
    install: (job) => (calls.install++, real.install(job)),
    submit: (jobs) => (calls.submit++, real.submit(jobs)),
    workerPool: () => real.workerPool(),
    runKernel: (task) => (calls.kernels++, real.runKernel(task)),
    scopeRecord: () => real.scopeRecord(),
  };
  coordinator = new Coordinator({
    topology,
    kind: 'faer',
    threads: 1,
    affinityAvailable: false,
    external: {
      defaultDomain: 2,
      domains: [
        // cooperative, so that an admitted operation takes a permit from the arbiter
        ExternalCpuDomain.cooperative(2, { allAllowed: true, cpus: topology.allowedCpus }, counting, 2),
        ExternalCpuDomain.cooperative(1, { numaNode: 0, cpus: CpuSet.of([topology.allowedCpus.first]) }, counting, 1),
      ],
      op: 'test',
    },
  });
  subscribe('tenferro:admission', onPermit);
});
afterAll(async () => {
  unsubscribe('tenferro:admission', onPermit);
  await coordinator.close();
  await real.close();
});

const runnerFor = (budget: 1 | 2): OperationRunner => handleRunner({ coordinator, plan: coordinator.planForDomain(budget, 'test'), identity: {} });
const engineOf = (budget: 1 | 2) => coordinator.engine(coordinator.planForDomain(budget, 'test'), 'test');

/** A GEMM provider declaring `caps`, recording the mode of every call it receives. */
function declaring(caps: Partial<CpuProviderExecutionCapabilities>) {
  const modes: ProviderParallelMode[] = [];
  const provider: CpuGemmProvider = {
    name: 'declaring',
    executionCapabilities: () => ({ ...referenceGemmProvider.executionCapabilities(), ...caps }),
    async gemm(ctx, req) {
      modes.push(ctx.parallelMode);
      return referenceGemmProvider.gemm(ctx, req);
    },
  };
  return { provider, modes };
}

const bundleOf = (provider: CpuGemmProvider, policy: CapabilityPolicy = 'strict') => CpuProviderBundle.builder('faer').gemmProvider(provider).capabilityPolicy(policy).build();

const lhs = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6]);
const rhs = Tensor.fromArray('f64', [3, 2], [1, 0, 0, 1, 1, 1]);
const dims = { contracting: [[1], [0]] as [number[], number[]] };
const want = [1, 2, 9, 12]; // lhs · rhs, column-major

/** Everything an operation could have touched, now. */
async function footprint(budget: 1 | 2) {
  const engine = await engineOf(budget);
  const pool = engine.bufferPool.stats();
  return { ...calls, entries: { ...engine.entries }, permits: permits.length, taken: pool.hits + pool.misses, outstanding: pool.outstanding };
}

type Run = (runner: OperationRunner, bundle: CpuProviderBundle, out: Tensor) => Promise<Tensor>;
const operations: [string, Run][] = [
  ['dotGeneral', (runner, bundle) => ops.dotGeneral(runner, bundle, lhs, rhs, dims, {}, 'test.dotGeneral')],
  ['dotGeneralInto', (runner, bundle, out) => ops.dotGeneralInto(runner, bundle, out, lhs, rhs, dims, {}, 'test.dotGeneralInto')],
];

async function settle(run: () => Promise<Tensor>): Promise<{ ok: true; value: Tensor } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    return { ok: false, error };
  }
}

describe('a dispatch-mode refusal comes before any permit, entry, allocation or provider call (R61, R62, R99)', () => {
  it.each(operations)('%s: an accepted mode goes through admission, entry, kernels and the provider (control)', async (_name, run) => {
    const { provider, modes } = declaring({});
    const out = Tensor.fromArray('f64', [2, 2], [7, 7, 7, 7]);
    const before = await footprint(2);
    const result = await run(runnerFor(2), bundleOf(provider), out);
    expect(result.toArray()).toEqual(want);
    expect(modes).toEqual(['inner']);
    const after = await footprint(2);
    expect(after.install).toBe(before.install + 1);
    expect(after.kernels).toBeGreaterThan(before.kernels);
    expect(after.entries.installs).toBe(before.entries.installs + 1);
    expect(after.permits).toBe(before.permits + 1);
  });

  const refusals: [string, 1 | 2, Partial<CpuProviderExecutionCapabilities>, string, Record<string, unknown>][] = [
    ['R61: an uncontrolled provider under the strict policy', 2, { threadCount: 'globalOrUncontrolled', placement: 'externalWorkers' }, 'ThreadCountNotEnforceable', { slot: 'gemm', control: 'globalOrUncontrolled', threadBudget: 2 }],
    ['R62: at budget 1, a provider that refuses Sequential', 1, { acceptsSequential: false }, 'ParallelModeNotSupported', { slot: 'gemm', mode: 'sequential' }],
    ['R62: at budget 1, Sequential without workerLocalSequential', 1, { workerLocalSequential: false }, 'ParallelModeNotSupported', { slot: 'gemm', mode: 'sequential' }],
    ['R62: at budget 2, a provider that accepts neither Inner nor Sequential', 2, { acceptsInner: false, acceptsSequential: false }, 'ParallelModeNotSupported', { slot: 'gemm', mode: 'inner' }],
  ];
  for (const [name, run] of operations) {
    it.each(refusals)(`${name}: %s is refused with nothing touched`, async (_why, budget, caps, code, detail) => {
      const { provider, modes } = declaring(caps);
      const out = Tensor.fromArray('f64', [2, 2], [7, 7, 7, 7]);
      const untouched = new Uint8Array(out.buffer.slice(0));
      const before = await footprint(budget);
      const r = await settle(() => run(runnerFor(budget), bundleOf(provider), out));
      expect(r.ok).toBe(false);
      const error = (r as { error: unknown }).error;
      expect(TenferroError.is(error, code as never), String(error)).toBe(true); // thrown as itself, not wrapped
      expect((error as TenferroError).detail).toMatchObject(detail);
      expect(modes).toEqual([]);
      expect(await footprint(budget)).toEqual(before);
      expect(new Uint8Array(out.buffer)).toEqual(untouched);
      expect(out.placement.cpuAffinity).toBeUndefined();
    });
  }

  it('property: the provider runs in exactly the mode R61/R62 prescribe, and every refusal touches nothing', async () => {
    const capsArb = fc.record({
      threadCount: fc.constantFrom('sequential', 'perCallUpperBound', 'binaryClampToOne', 'globalOrUncontrolled'),
      placement: fc.constantFrom('engineWorkers', 'callingThread', 'externalWorkers', 'none'),
      workerLocalSequential: fc.boolean(),
      acceptsSequential: fc.boolean(),
      acceptsOuter: fc.boolean(),
      acceptsInner: fc.boolean(),
    }) as fc.Arbitrary<CpuProviderExecutionCapabilities>;
    /** The rules, spelled out independently of bundle-validation.ts. */
    const model = (c: CpuProviderExecutionCapabilities, budget: number, policy: CapabilityPolicy): ProviderParallelMode | string => {
      if (policy === 'providerDefaultCompatibility') return budget === 1 ? 'sequential' : 'inner'; // R54: unchecked
      if (c.threadCount === 'globalOrUncontrolled') return 'ThreadCountNotEnforceable';
      const sequential = c.acceptsSequential && c.workerLocalSequential;
      if (budget === 1) return sequential ? 'sequential' : 'ParallelModeNotSupported';
      return c.acceptsInner ? 'inner' : sequential ? 'sequential' : 'ParallelModeNotSupported';
    };
    await fc.assert(
      fc.asyncProperty(capsArb, fc.constantFrom<1 | 2>(1, 2), fc.constantFrom<CapabilityPolicy>('strict', 'providerDefaultCompatibility'), fc.nat(1), async (caps, budget, policy, which) => {
        const [, run] = operations[which]!;
        const { provider, modes } = declaring(caps);
        const out = Tensor.fromArray('f64', [2, 2], [7, 7, 7, 7]);
        const untouched = new Uint8Array(out.buffer.slice(0));
        const before = await footprint(budget);
        const r = await settle(() => run(runnerFor(budget), bundleOf(provider, policy), out));
        const expected = model(caps, budget, policy);
        if (expected === 'sequential' || expected === 'inner') {
          expect(r.ok, String((r as { error?: unknown }).error)).toBe(true);
          expect((r as { value: Tensor }).value.toArray()).toEqual(want);
          expect(modes).toEqual([expected]);
        } else {
          expect(TenferroError.is((r as { error: unknown }).error, expected as never)).toBe(true);
          expect(modes).toEqual([]);
          expect(await footprint(budget)).toEqual(before);
          expect(new Uint8Array(out.buffer)).toEqual(untouched);
        }
      }),
      { numRuns: 60 },
    );
  });
});
