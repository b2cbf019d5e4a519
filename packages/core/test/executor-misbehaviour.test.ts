// Executors the application supplies can break the scheduling contract. Core must notice and
// report `Scheduling` (R70, R71) instead of returning a result the executor never produced.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuDomainExecutor,
  type CpuGemmProvider,
  CpuProviderBundle,
  ExternalCpuDomain,
  referenceGemmProvider,
  type ScopedCpuJobs,
  Tensor,
  WorkerThreadsDomainExecutor,
} from '../src/index.js';
import { expectCode } from './helpers.js';

type Install = <R>(job: () => Promise<R> | R) => Promise<R>;
type Submit = (jobs: ScopedCpuJobs) => Promise<void>;

/** What a correct executor does: run the job once, run every index once. */
const honestInstall: Install = async (job) => await job();
const honestSubmit: Submit = async (jobs) => {
  await Promise.all(Array.from({ length: jobs.length }, (_, k) => jobs.run(k)));
};

let real: WorkerThreadsDomainExecutor;
let backend: CpuBackend;
const script = { install: honestInstall, submit: honestSubmit };
let gemmCalls = 0;

beforeAll(async () => {
  real = await WorkerThreadsDomainExecutor.create({ workers: 2 });
  // A caller-owned pool of 2 whose install/submit follow the current script; kernel tasks run on the real workers.
  const scripted: CpuDomainExecutor = {
    capabilities: () => real.capabilities(),
    install: (job) => script.install(job),
    submit: (jobs) => script.submit(jobs),
    workerPool: () => real.workerPool(),
    runKernel: (task) => real.runKernel(task),
    scopeRecord: () => real.scopeRecord(),
  };
  const counted: CpuGemmProvider = { ...referenceGemmProvider, gemm: (ctx, req) => (gemmCalls++, referenceGemmProvider.gemm(ctx, req)) };
  backend = await CpuBackend.fromExternalDomains({
    defaultDomain: 1,
    domains: [ExternalCpuDomain.callerManaged(1, scripted, 2)],
    bundle: CpuProviderBundle.builder('faer').gemmProvider(counted).build(),
  });
});
afterEach(async () => {
  script.install = honestInstall;
  script.submit = honestSubmit;
  // whatever the executor did, the domain's guard was released: the next execution runs
  expect(await backend.install(() => 'next')).toBe('next');
});
afterAll(async () => {
  await backend.close();
  await real.close();
});

const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
const eye = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);

/** The install-path entry points, each reporting how many times its body ran. */
const installPaths: [string, () => { run: Promise<unknown>; bodies: () => number }][] = [
  [
    'install',
    () => {
      let n = 0;
      return { run: backend.install(() => void n++), bodies: () => n };
    },
  ],
  [
    'matmul',
    () => {
      const before = gemmCalls;
      return { run: backend.matmul(a, eye), bodies: () => gemmCalls - before };
    },
  ],
  [
    'session.run (external domains enter per operation, R49)',
    () => {
      let n = 0;
      return { run: backend.withBackendSession((s) => s.run('sequential', () => void n++)), bodies: () => n };
    },
  ],
];

describe('R71: a scoped job runs exactly once (install)', () => {
  it('the honest script runs every path once (control)', async () => {
    for (const [, start] of installPaths) {
      const { run, bodies } = start();
      await run;
      expect(bodies()).toBe(1);
    }
  });

  it.each(installPaths)('%s: an executor that returns without running the job → Scheduling, the body never ran', async (_name, start) => {
    script.install = async () => undefined as never;
    const { run, bodies } = start();
    const e = await expectCode(run, 'Scheduling', 'BackendFailure');
    expect(e.message).toContain('without running');
    expect(bodies()).toBe(0);
  });

  it.each(installPaths)('%s: an executor that runs the job twice, one after the other → Scheduling, the body ran once', async (_name, start) => {
    script.install = async (job) => {
      await job();
      return await job();
    };
    const { run, bodies } = start();
    const e = await expectCode(run, 'Scheduling', 'BackendFailure');
    expect(e.message).toContain('twice');
    expect(bodies()).toBe(1);
  });

  it.each(installPaths)('%s: an executor that runs the job twice at once → Scheduling, the body ran once', async (_name, start) => {
    script.install = async (job) => (await Promise.all([job(), job()]))[0];
    const { run, bodies } = start();
    await expectCode(run, 'Scheduling', 'BackendFailure');
    expect(bodies()).toBe(1);
  });

  // The second run is refused inside the job; an executor that swallows that refusal and returns
  // the first result must still make the operation fail.
  it.each(installPaths)('%s: an executor that runs the job twice and swallows the refusal → Scheduling', async (_name, start) => {
    script.install = async (job) => {
      const first = await job();
      await Promise.resolve()
        .then(job)
        .catch(() => undefined);
      return first;
    };
    const { run } = start();
    await expectCode(run, 'Scheduling', 'BackendFailure');
  });

  // The job is bound to its install call: an executor that keeps it and runs it after install
  // returned (the operation already failed, its guard or permit released) runs none of it.
  it.each(installPaths)('%s: a job the executor runs after install returned runs none of the operation', async (_name, start) => {
    let late: (() => unknown) | undefined;
    script.install = async (job) => {
      late = job;
      return undefined as never;
    };
    const { run, bodies } = start();
    await expectCode(run, 'Scheduling', 'BackendFailure');
    await Promise.resolve()
      .then(late!)
      .catch(() => undefined);
    expect(bodies()).toBe(0);
  });
});

describe('R70/R71: outer fan-out through submit', () => {
  /** Run `count` logical jobs on the outer lanes, recording which ran and on which lane. */
  const outer = (count: number) => {
    const ran: number[] = [];
    return { run: backend.withOuterLanes(count, (_ctx, index) => void ran.push(index)), ran };
  };

  it('the honest script: L = min(N, budget) lanes, each logical job once, one submit (control)', async () => {
    let lanes = -1;
    script.submit = async (jobs) => {
      lanes = jobs.length;
      await honestSubmit(jobs);
    };
    const before = backend.executionInfo().executorEntries;
    const { run, ran } = outer(5);
    await run;
    expect(lanes).toBe(2);
    expect(ran.sort()).toEqual([0, 1, 2, 3, 4]);
    const after = backend.executionInfo().executorEntries;
    expect([after.submits - before.submits, after.installs - before.installs]).toEqual([1, 0]);
  });

  it.each([2, 3, -1, 0.5, Number.NaN])('an executor that runs lane %s, outside [0, L), besides every real lane → Scheduling; no job ran twice', async (bad) => {
    script.submit = async (jobs) => {
      await honestSubmit(jobs);
      await jobs.run(bad);
    };
    const { run, ran } = outer(5);
    const e = await expectCode(run, 'Scheduling', 'BackendFailure');
    expect(e.message).toContain(`lane ${bad}`);
    expect(ran.sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it('an executor that returns without running any lane → Scheduling', async () => {
    script.submit = async () => undefined;
    const { run, ran } = outer(3);
    const e = await expectCode(run, 'Scheduling', 'BackendFailure');
    expect(e.message).toContain('never ran');
    expect(ran).toEqual([]);
  });

  it('an executor that runs only lane 0 of 2 → Scheduling naming a job of lane 1', async () => {
    script.submit = async (jobs) => {
      await jobs.run(0);
    };
    const { run, ran } = outer(4);
    const e = await expectCode(run, 'Scheduling', 'BackendFailure');
    expect(e.message).toContain('logical job 1 never ran');
    expect(ran).toEqual([0, 2]);
  });

  it('an executor that runs a lane twice → Scheduling; no logical job body ran twice', async () => {
    script.submit = async (jobs) => {
      await honestSubmit(jobs);
      await jobs.run(0);
    };
    const { run, ran } = outer(4);
    const e = await expectCode(run, 'Scheduling', 'BackendFailure');
    expect(e.message).toContain('ran twice');
    expect(ran.sort()).toEqual([0, 1, 2, 3]);
  });

  // As for install, lanes the executor runs after submit returned run none of the jobs.
  it('lanes the executor runs after submit returned run none of the jobs', async () => {
    let late: ScopedCpuJobs | undefined;
    script.submit = async (jobs) => {
      late = jobs;
    };
    const { run, ran } = outer(4);
    await expectCode(run, 'Scheduling', 'BackendFailure');
    await Promise.allSettled([late!.run(0), late!.run(1)]);
    expect(ran).toEqual([]);
  });

  // A duplicate lane run whose refusal the executor swallows is still reported.
  it('an executor that runs a lane twice and swallows the refusal → Scheduling', async () => {
    script.submit = async (jobs) => {
      await honestSubmit(jobs);
      await jobs.run(0).catch(() => undefined);
    };
    await expectCode(outer(4).run, 'Scheduling', 'BackendFailure');
  });
});
