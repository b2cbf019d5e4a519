// Grouped GEMM (R110): engine-scheduled over outer lanes (EngineOuter, budget > 1, > 1 job, not
// in a session) or one provider-owned call; validation before anything runs; the exactly-once
// audit of both paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuDomainExecutor,
  type CpuExecutionContext,
  type CpuGemmProvider,
  type CpuGemmRequest,
  type CpuGroupedGemmRequest,
  CpuProviderBundle,
  type DType,
  EXECUTED,
  ExternalCpuDomain,
  type GemmJob,
  type ScopedCpuJobs,
  Tensor,
  Unsupported,
  WorkerThreadsDomainExecutor,
  discoverCpuTopology,
  referenceGemmProvider,
} from '../src/index.js';
import { expectedGroupedJob } from '../src/testing/grouped-gemm-oracle.js';
import { int, randomOperand, randomValues, seededRandom } from '../src/testing/random-operands.js';
import { relativeError, toleranceFor } from '../src/testing/naive-dot-general.js';
import { expectCode, kernel } from './helpers.js';

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;
const whoami = kernel<undefined, { workerIndex: number }>('whoami');

/** One provider call as the counting provider saw it. */
interface Call {
  readonly method: 'gemm' | 'groupedGemm';
  readonly mode: string;
  readonly jobs: number;
  readonly worker?: number;
}

/** The reference GEMM, counting its calls, the mode of each and (for `gemm`) the worker it ran on. */
function counting(options: { grouped?: (ctx: CpuExecutionContext, req: CpuGroupedGemmRequest) => Promise<void>; failJob?: (req: CpuGemmRequest) => boolean } = {}) {
  const calls: Call[] = [];
  const provider: CpuGemmProvider = {
    ...referenceGemmProvider,
    name: 'counting reference GEMM',
    async gemm(ctx, req) {
      const { workerIndex } = await ctx.run(whoami);
      calls.push({ method: 'gemm', mode: ctx.parallelMode, jobs: 1, worker: workerIndex });
      if (options.failJob?.(req)) throw new Error('planted job failure');
      return referenceGemmProvider.gemm(ctx, req);
    },
    ...(options.grouped === undefined
      ? {}
      : {
          async groupedGemm(ctx: CpuExecutionContext, req: CpuGroupedGemmRequest) {
            calls.push({ method: 'groupedGemm', mode: ctx.parallelMode, jobs: req.jobs.length });
            await options.grouped!(ctx, req);
            return EXECUTED;
          },
        }),
  };
  return { provider, calls };
}

/** A grouped provider that runs each job through the reference GEMM `times(i)` times, recording each run. */
function runsJobs(times: (i: number) => number) {
  return async (ctx: CpuExecutionContext, req: CpuGroupedGemmRequest) => {
    for (let i = 0; i < req.jobs.length; i++) {
      for (let t = 0; t < times(i); t++) {
        await referenceGemmProvider.gemm(ctx, req.jobs[i]!);
        Atomics.add(req.ledger, i, 1);
      }
    }
  };
}

const bundleOf = (gemm: CpuGemmProvider, engineOuter: boolean) => {
  const b = CpuProviderBundle.builder('faer').gemmProvider(gemm);
  return (engineOuter ? b.engineOuterGroupedGemm() : b).build();
};

/** `count` independent f64 jobs with beta ≠ 0 (a job run twice shows in its values). */
function jobsOf(count: number, seed: number, dtype: DType = 'f64'): { jobs: GemmJob[]; before: number[][] } {
  const rand = seededRandom(seed);
  const jobs: GemmJob[] = [];
  for (let i = 0; i < count; i++) {
    const [m, n, k] = [int(rand, 1, 9), int(rand, 1, 9), int(rand, 1, 9)];
    const complex = dtype === 'c64' || dtype === 'c128';
    jobs.push({
      out: Tensor.fromArray(dtype, [m, n], randomValues(rand, dtype, m * n)),
      lhs: randomOperand(rand, dtype, [m, k], true),
      rhs: randomOperand(rand, dtype, [k, n], true),
      alpha: complex ? [0.5, -1] : 0.5,
      beta: complex ? [2, 0.25] : 2,
      ...(complex ? { conjLhs: i % 2 === 0, conjRhs: i % 3 === 0 } : {}),
    });
  }
  return { jobs, before: jobs.map((j) => (j.out.toArray() as number[]).map(Number)) };
}

function expectResults(jobs: readonly GemmJob[], before: readonly number[][]): void {
  jobs.forEach((job, i) => {
    const err = relativeError((job.out.toArray() as number[]).map(Number), expectedGroupedJob(job, before[i]!));
    expect(err, `job ${i}`).toBeLessThanOrEqual(toleranceFor(job.out.dtype));
  });
}

let two: CpuBackend;
let one: CpuBackend;
beforeAll(async () => {
  two = await CpuBackend.create({ threads: 2, providers: [] });
  one = await CpuBackend.create({ threads: 1, providers: [] });
});
afterAll(async () => {
  await two.close();
  await one.close();
});

describe('gemmGrouped: results and validation', () => {
  it('computes every job against the oracle, real and complex, on both paths and budgets', async () => {
    for (const dtype of ['f64', 'f32', 'c128'] as const) {
      for (const [b, engineOuter] of [[two, true], [two, false], [one, true]] as const) {
        const { provider } = counting();
        const { jobs, before } = jobsOf(7, 11, dtype);
        await b.withProviderBundle(bundleOf(provider, engineOuter)).gemmGrouped(jobs);
        expectResults(jobs, before);
      }
    }
  });

  it('refuses bad groups before any executor entry, outputs untouched', async () => {
    const entries = () => two.executionInfo().executorEntries;
    const before = entries();
    const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    const out = Tensor.zeros('f64', [2, 2]);
    const big = Tensor.zeros('f64', [2, 4]);
    await expectCode(two.gemmGrouped('nope' as never), 'InvalidArgument');
    await expectCode(two.gemmGrouped([{ out, lhs: a, rhs: a, extra: 1 } as never]), 'InvalidArgument');
    await expectCode(two.gemmGrouped([{ out, lhs: a, rhs: a }], { bogus: true } as never), 'InvalidArgument');
    await expectCode(two.gemmGrouped([{ out, lhs: a, rhs: Tensor.zeros('f64', [3, 2]) }]), 'ShapeMismatch');
    await expectCode(two.gemmGrouped([{ out: Tensor.zeros('f64', [2, 3]), lhs: a, rhs: a }]), 'ShapeMismatch');
    await expectCode(two.gemmGrouped([{ out, lhs: a, rhs: Tensor.zeros('f32', [2, 2]) as never }]), 'DTypeMismatch');
    await expectCode(two.gemmGrouped([{ out: Tensor.zeros('i32', [2, 2]), lhs: Tensor.zeros('i32', [2, 2]), rhs: Tensor.zeros('i32', [2, 2]) }]), 'UnsupportedDType');
    await expectCode(two.gemmGrouped([{ out: Tensor.zeros('f64', [2, 2, 1]) as never, lhs: a, rhs: a }]), 'RankMismatch');
    // outputs of two jobs overlap; an output overlaps an input of another job
    await expectCode(two.gemmGrouped([{ out: big.slice(undefined, [0, 2]), lhs: a, rhs: a }, { out: big.slice(undefined, [1, 3]), lhs: a, rhs: a }]), 'OutputAliasing');
    await expectCode(two.gemmGrouped([{ out: big.slice(undefined, [0, 2]), lhs: a, rhs: a }, { out, lhs: big.slice(undefined, [0, 2]), rhs: a }]), 'OutputAliasing');
    await expectCode(two.gemmGrouped([{ out, lhs: a, rhs: a }, { out, lhs: a, rhs: a }]), 'OutputAliasing');
    expect(entries()).toEqual(before);
    expect(out.toArray()).toEqual([0, 0, 0, 0]);
    // disjoint column blocks of one matrix are fine
    await two.gemmGrouped([
      { out: big.slice(undefined, [0, 2]), lhs: a, rhs: a },
      { out: big.slice(undefined, [2, 4]), lhs: a, rhs: a, alpha: 2 },
    ]);
    expect(big.toArray()).toEqual([7, 10, 15, 22, 14, 20, 30, 44]);
    // no jobs, or only empty outputs: nothing to run
    await two.gemmGrouped([]);
    await two.gemmGrouped([{ out: Tensor.zeros('f64', [0, 2]), lhs: Tensor.zeros('f64', [0, 2]), rhs: a }]);
  });
});

describe('gemmGrouped: who schedules (R110)', () => {
  it.skipIf(!twoCpus)('EngineOuter, budget 2, 5 jobs: one submit, 5 Sequential single-job gemm calls, lanes min(5, 2), job i on lane i mod 2 (needs 2 CPUs)', async () => {
    const { provider, calls } = counting({ grouped: runsJobs(() => 1) });
    const h = two.withProviderBundle(bundleOf(provider, true));
    const { jobs, before } = jobsOf(5, 3);
    const e0 = h.executionInfo().executorEntries;
    await h.gemmGrouped(jobs);
    const e1 = h.executionInfo().executorEntries;
    expect(e1.submits - e0.submits).toBe(1);
    expect(e1.installs - e0.installs).toBe(0);
    expect(calls.map((c) => c.method)).toEqual(['gemm', 'gemm', 'gemm', 'gemm', 'gemm']);
    expect(new Set(calls.map((c) => c.mode))).toEqual(new Set(['sequential']));
    expect(new Set(calls.map((c) => c.worker)).size).toBe(2);
    expectResults(jobs, before);
  });

  it.skipIf(!twoCpus)('lane k runs jobs k, k+L, … (needs 2 CPUs)', async () => {
    const workerOf = new Map<SharedArrayBuffer, number>();
    const provider: CpuGemmProvider = {
      ...referenceGemmProvider,
      async gemm(ctx, req) {
        workerOf.set(req.out.buffer, (await ctx.run(whoami)).workerIndex);
        return referenceGemmProvider.gemm(ctx, req);
      },
    };
    const { jobs } = jobsOf(6, 4);
    await two.withProviderBundle(bundleOf(provider, true)).gemmGrouped(jobs);
    expect(jobs.map((j) => workerOf.get(j.out.buffer))).toEqual([0, 1, 0, 1, 0, 1]);
  });

  it('provider-owned: one install and one groupedGemm call in the dispatch mode — ProviderOwned scheduling, budget 1, one job, and sessions', async () => {
    const cases: [string, CpuBackend, boolean, number, boolean][] = [
      ['providerOwned, budget 2', two, false, 4, false],
      ['engineOuter, budget 1', one, true, 4, false],
      ['engineOuter, one job', two, true, 1, false],
      ['engineOuter, in a session', two, true, 4, true],
    ];
    for (const [why, b, engineOuter, count, session] of cases) {
      const { provider, calls } = counting({ grouped: runsJobs(() => 1) });
      const h = b.withProviderBundle(bundleOf(provider, engineOuter));
      const { jobs, before } = jobsOf(count, 5);
      const e0 = h.executionInfo().executorEntries;
      if (session) await h.withBackendSession((s) => s.gemmGrouped(jobs));
      else await h.gemmGrouped(jobs);
      const e1 = h.executionInfo().executorEntries;
      expect(e1.submits - e0.submits, why).toBe(0);
      expect(e1.installs - e0.installs, why).toBe(1);
      expect(calls, why).toEqual([{ method: 'groupedGemm', mode: b.numThreads() > 1 ? 'inner' : 'sequential', jobs: count }]);
      expectResults(jobs, before);
    }
  });

  it('provider-owned without groupedGemm: core runs the jobs through gemm, one after another, on the one call', async () => {
    const { provider, calls } = counting();
    const { jobs, before } = jobsOf(4, 6);
    const h = two.withProviderBundle(bundleOf(provider, false));
    const e0 = h.executionInfo().executorEntries;
    await h.gemmGrouped(jobs);
    expect(h.executionInfo().executorEntries.installs - e0.installs).toBe(1);
    expect(calls.map((c) => c.method)).toEqual(['gemm', 'gemm', 'gemm', 'gemm']);
    expectResults(jobs, before);
  });
});

describe('gemmGrouped: failures and the exactly-once audit (R110)', () => {
  it.skipIf(!twoCpus)('EngineOuter: the first job error comes back after the audit; jobs a lane starts after it skip their call (needs 2 CPUs)', async () => {
    const { jobs } = jobsOf(6, 7);
    const failing = jobs[0]!.out.buffer;
    const { provider, calls } = counting({ failJob: (req) => req.out.buffer === failing });
    const called = new Set<SharedArrayBuffer>();
    const watching: CpuGemmProvider = { ...provider, gemm: (ctx, req) => (called.add(req.out.buffer), provider.gemm(ctx, req)) };
    const e = await expectCode(two.withProviderBundle(bundleOf(watching, true)).gemmGrouped(jobs), 'ProviderFailed', 'BackendFailure');
    expect((e.cause as Error).message).toBe('planted job failure');
    // job 0 failed on lane 0 before lane 0 started jobs 2 and 4: they never called the provider
    expect(called.has(jobs[2]!.out.buffer)).toBe(false);
    expect(called.has(jobs[4]!.out.buffer)).toBe(false);
    expect(calls.length).toBeLessThanOrEqual(4);
    // the backend is fine afterwards
    const { jobs: again, before } = jobsOf(3, 8);
    await two.gemmGrouped(again);
    expectResults(again, before);
  });

  it('provider-owned: a job run twice, or skipped, is Scheduling', async () => {
    for (const [why, times] of [
      ['twice', (i: number) => (i === 1 ? 2 : 1)],
      ['skipped', (i: number) => (i === 2 ? 0 : 1)],
    ] as const) {
      const { provider } = counting({ grouped: runsJobs(times) });
      const { jobs } = jobsOf(4, 9);
      const e = await expectCode(two.withProviderBundle(bundleOf(provider, false)).gemmGrouped(jobs), 'Scheduling', 'BackendFailure');
      expect(e.detail, why).toEqual(why === 'twice' ? { job: 1, runs: 2 } : { job: 2, runs: 0 });
    }
  });

  it('provider-owned: a decline is terminal ProviderUnsupported', async () => {
    const provider: CpuGemmProvider = { ...referenceGemmProvider, groupedGemm: async () => Unsupported.of({ kind: 'grouped' }) };
    const { jobs } = jobsOf(3, 10);
    await expectCode(two.withProviderBundle(bundleOf(provider, false)).gemmGrouped(jobs), 'ProviderUnsupported', 'Unsupported');
    const declining: CpuGemmProvider = { ...referenceGemmProvider, gemm: async () => Unsupported.layout('lhs') };
    const e = await expectCode(two.withProviderBundle(bundleOf(declining, false)).gemmGrouped(jobs), 'ProviderUnsupported', 'Unsupported');
    expect((e.detail as { job: number }).job).toBe(0);
  });
});

describe('gemmGrouped: an executor that breaks outer scheduling (R70, R110)', () => {
  let real: WorkerThreadsDomainExecutor;
  let backend: CpuBackend;
  const script: { submit: (jobs: ScopedCpuJobs) => Promise<void> } = { submit: async () => undefined };
  beforeAll(async () => {
    real = await WorkerThreadsDomainExecutor.create({ workers: 2 });
    const scripted: CpuDomainExecutor = {
      capabilities: () => real.capabilities(),
      install: (job) => real.install(job),
      submit: (jobs) => script.submit(jobs),
      workerPool: () => real.workerPool(),
      runKernel: (task) => real.runKernel(task),
      scopeRecord: () => real.scopeRecord(),
    };
    backend = await CpuBackend.fromExternalDomains({
      defaultDomain: 1,
      domains: [ExternalCpuDomain.callerManaged(1, scripted, 2)],
      bundle: CpuProviderBundle.builder('faer').build(),
    });
  });
  afterAll(async () => {
    await backend.close();
    await real.close();
  });

  it('a lane run twice (jobs duplicated) or never (jobs missing) is Scheduling', async () => {
    expect(backend.providerBundle().groupedScheduling).toBe('engineOuter');
    const { jobs } = jobsOf(4, 12);
    script.submit = async (j) => {
      for (let k = 0; k < j.length; k++) await j.run(k);
      await j.run(0);
    };
    await expectCode(backend.gemmGrouped(jobs), 'Scheduling', 'BackendFailure');
    script.submit = async (j) => {
      await j.run(0);
    };
    await expectCode(backend.gemmGrouped(jobs), 'Scheduling', 'BackendFailure');
    script.submit = async (j) => {
      await Promise.all(Array.from({ length: j.length }, (_, k) => j.run(k)));
    };
    const { jobs: ok, before } = jobsOf(4, 13);
    await backend.gemmGrouped(ok);
    expectResults(ok, before);
  });
});

describe('gemmGrouped: a GEMM that does not accept Outer (R54, R58)', () => {
  it('under providerDefaultCompatibility it is never engine-scheduled: one provider-owned call', async () => {
    const { provider, calls } = counting();
    const innerOnly: CpuGemmProvider = { ...provider, executionCapabilities: () => ({ ...referenceGemmProvider.executionCapabilities(), acceptsOuter: false }) };
    const bundle = CpuProviderBundle.builder('faer').gemmProvider(innerOnly).engineOuterGroupedGemm().capabilityPolicy('providerDefaultCompatibility').build();
    const h = two.withProviderBundle(bundle);
    const { jobs, before } = jobsOf(4, 14);
    const e0 = h.executionInfo().executorEntries;
    await h.gemmGrouped(jobs);
    expect(h.executionInfo().executorEntries.submits).toBe(e0.submits);
    expect(calls).toHaveLength(4);
    expectResults(jobs, before);
  });
});
