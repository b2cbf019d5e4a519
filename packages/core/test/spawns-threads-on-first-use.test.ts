// #36, item 4: a provider whose native code starts threads on first use declares
// `spawnsThreadsOnFirstUse`; a lane running its task is never narrowed to one CPU (lane spreading,
// see src/runtime/workers/lane-spread.ts), so the threads it starts keep the domain's set.
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuDomainExecutor,
  type CpuExecutionContext,
  type CpuProviderExecutionCapabilities,
  type CpuProviderPackage,
  CpuProviderBundle,
  EXECUTED,
  ExternalCpuDomain,
  type ExtensionKey,
  Tensor,
  WorkerThreadsDomainExecutor,
  defineExtensionKey,
  defineKernel,
  discoverCpuTopology,
  referenceGemmProvider,
  runExtension,
} from '../src/index.js';
import { cpusAllowedOfTask, expectThrows } from './helpers.js';

interface Report {
  readonly worker: number;
  readonly met?: boolean;
  readonly laneMask?: string;
  readonly threadTid?: number;
}
type Step = 'load' | 'spawn' | 'stop';
const firstUseThread = defineKernel<Record<string, unknown>, Report>(new URL('./fixtures/kernels/first-use-thread.mjs', import.meta.url), 'firstUseThread');

const CAPS: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: true,
  acceptsInner: true,
});
const capabilities = (spawns: boolean): CpuProviderExecutionCapabilities => (spawns ? { ...CAPS, spawnsThreadsOnFirstUse: true } : CAPS);

/** What the test tells the provider to do next, and what its last fan-out reported. */
interface Scene {
  step: Step;
  /** The one CPU the test put both workers on (`'spawn'`). */
  forced: string;
  reports: Report[] | undefined;
}

/** One task of `scene.step` on each of the pool's two lanes, at once (a fan-out). */
async function fanOut(ctx: CpuExecutionContext, scene: Scene): Promise<void> {
  const pool = ctx.workerPool();
  if (pool?.size !== 2) throw new Error(`expected a pool of 2 lanes, got ${pool?.size}`);
  const buffer = new SharedArrayBuffer(8);
  const domain = ctx.cpus!.toArray();
  const payload = (mine: number) => ({ step: scene.step, buffer, mine, theirs: 1 - mine, timeoutMs: 10_000, forced: scene.forced, domain });
  scene.reports = await Promise.all([pool.runOn(0, firstUseThread, payload(0)), pool.runOn(1, firstUseThread, payload(1))]);
}

/** A GEMM provider package whose every call is that fan-out (its output stays as it was). */
function spawningGemm(spawns: boolean, scene: Scene): CpuProviderPackage {
  return {
    kind: 'faer',
    name: 'first-use thread test provider',
    gemm: {
      name: 'first-use thread GEMM',
      executionCapabilities: () => capabilities(spawns),
      declaredSupport: () => Object.freeze({ dtypes: Object.freeze(['f64'] as const), stridedOperands: true, conjugation: true, overwritesOutput: false, declinesBeforeWriting: true }),
      async gemm(ctx) {
        await fanOut(ctx, scene);
        return EXECUTED;
      },
    },
  };
}

interface FanOutExtension {
  readonly name: string;
  readonly executionCapabilities: () => CpuProviderExecutionCapabilities;
  fanOut(ctx: CpuExecutionContext): Promise<typeof EXECUTED>;
}
let keys = 0;

const allowed = discoverCpuTopology().allowedCpus;
const backends: CpuBackend[] = [];
afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
});

/**
 * A 2-thread backend whose provider (`via`) runs the fan-out, declaring `spawnsThreadsOnFirstUse`
 * or not: the kernel is loaded on both workers; both workers are then put on one CPU `c0` from
 * outside, so that the lane which begins second begins on a CPU the other holds (the situation
 * lane spreading narrows); each lane undoes the test's pin where tenferro left it and starts its
 * thread. Returns the lanes' reports and the threads' masks read once the operation has ended.
 */
async function scenario(via: 'provider' | 'extension', spawns: boolean) {
  const scene: Scene = { step: 'load', forced: '', reports: undefined };
  let run: () => Promise<unknown>;
  let b: CpuBackend;
  if (via === 'provider') {
    b = await CpuBackend.create({ threads: 2, providers: [spawningGemm(spawns, scene)] });
    const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    run = () => b.matmul(x, x);
  } else {
    const base = await CpuBackend.create({ threads: 2, providers: [] });
    backends.push(base);
    const key: ExtensionKey<FanOutExtension> = defineExtensionKey<FanOutExtension>(`test.firstUseThread.${keys++}`);
    const ext: FanOutExtension = {
      name: 'first-use thread extension',
      executionCapabilities: () => capabilities(spawns),
      fanOut: async (ctx) => (await fanOut(ctx, scene), EXECUTED),
    };
    b = base.withProviderBundle(base.providerBundle().toBuilder().extension(key, ext).build());
    run = () => runExtension(b, key, { op: 'test.firstUseThread', inputs: [], outputs: [] }, (_ctx, { extension, kernel }) => kernel({ name: 'fanOut', extension: (c) => extension!.fanOut(c) }));
  }
  backends.push(b);
  const domain = b.executionInfo().domainCpus;
  expect(domain).toBe(allowed.toString());
  // The kernel's first task on a worker loads its module: never narrowed whatever the flag, so
  // the threads are started on a later task.
  await run();
  expect(scene.reports?.map((r) => r.worker)).toEqual([0, 1]);
  const [c0] = allowed.toArray();
  for (const w of b.executionInfo().workers) expect(spawnSync('taskset', ['-p', '-c', String(c0), String(w.tid)]).status).toBe(0);
  scene.step = 'spawn';
  scene.forced = String(c0);
  await run();
  const reports = scene.reports!;
  // Both lanes ran at once: the one that began second began on a CPU the other held.
  expect(reports.map((r) => r.met)).toEqual([true, true]);
  // Read after the operation: the workers have the domain set back; the threads keep what they inherited.
  const threads = reports.map((r) => cpusAllowedOfTask(r.threadTid!));
  const placement = b.checkPlacement();
  scene.step = 'stop';
  await run();
  return { domain, c0: String(c0), reports, threads, placement };
}

describe('spawnsThreadsOnFirstUse: a provider whose threads start on first use is never narrowed (#36)', () => {
  it('is sampled at build with the other capabilities: false when absent, a non-boolean is InvalidArgument naming the field', () => {
    const build = (caps: unknown) => CpuProviderBundle.builder('faer').gemmProvider({ ...referenceGemmProvider, executionCapabilities: () => caps as CpuProviderExecutionCapabilities }).build();
    expect(build(CAPS).capabilities('gemm')?.spawnsThreadsOnFirstUse).toBe(false);
    expect(build({ ...CAPS, spawnsThreadsOnFirstUse: true }).capabilities('gemm')?.spawnsThreadsOnFirstUse).toBe(true);
    const e = expectThrows(() => build({ ...CAPS, spawnsThreadsOnFirstUse: 'yes' }), 'InvalidArgument');
    expect(e.message).toContain('gemm.executionCapabilities().spawnsThreadsOnFirstUse');
    expect(e.message).toContain('a boolean');
  });

  it('every kernel task of such a provider says so to the executor (KernelTask.spawnsThreadsOnFirstUse): ctx.run, pool lanes, outer lanes; none of another provider does', async () => {
    const inner = await WorkerThreadsDomainExecutor.create({ workers: 2 });
    try {
      for (const spawns of [true, false]) {
        const seen: (boolean | undefined)[] = [];
        const recording: CpuDomainExecutor = {
          capabilities: () => inner.capabilities(),
          install: (job) => inner.install(job),
          submit: (jobs) => inner.submit(jobs),
          workerPool: () => inner.workerPool(),
          runKernel: (task) => (seen.push(task.spawnsThreadsOnFirstUse), inner.runKernel(task)),
        };
        const modes: string[] = [];
        const provider: CpuProviderPackage = {
          kind: 'faer',
          name: 'recorded',
          engineOuterGroupedGemm: true,
          gemm: {
            name: 'recorded GEMM',
            executionCapabilities: () => capabilities(spawns),
            declaredSupport: () => Object.freeze({ dtypes: Object.freeze(['f64'] as const), stridedOperands: true, conjugation: true, overwritesOutput: false, declinesBeforeWriting: true }),
            async gemm(ctx) {
              modes.push(ctx.parallelMode);
              await ctx.run(firstUseThread, { step: 'load' });
              await ctx.workerPool()?.map(firstUseThread, [{ step: 'load' }, { step: 'load' }]);
              return EXECUTED;
            },
          },
        };
        const b = await CpuBackend.fromExternalDomains({ defaultDomain: 7, domains: [ExternalCpuDomain.callerManaged(7, recording, 2)], providers: [provider] });
        try {
          const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
          await b.matmul(x, x); // Inner: ctx.run and two pool lanes
          await b.gemmGrouped([
            { out: Tensor.zeros('f64', [2, 2]), lhs: x, rhs: x },
            { out: Tensor.zeros('f64', [2, 2]), lhs: x, rhs: x },
          ]); // Outer: one Sequential call per lane, ctx.run each
        } finally {
          await b.close();
        }
        expect(modes).toEqual(['inner', 'sequential', 'sequential']);
        expect(seen).toHaveLength(5);
        expect(seen).toEqual(Array(5).fill(spawns ? true : undefined));
      }
    } finally {
      await inner.close();
    }
  });

  for (const via of ['provider', 'extension'] as const) {
    it.skipIf(allowed.size < 2)(`${via}: with the flag no lane narrows and the thread each lane starts keeps the domain's set (needs 2 CPUs)`, async () => {
      const { domain, c0, reports, threads, placement } = await scenario(via, true);
      expect(reports.map((r) => r.laneMask)).toEqual([c0, c0]);
      expect(threads).toEqual([domain, domain]);
      expect(placement.ok).toBe(true);
    });

    it.skipIf(allowed.size < 2)(`${via}: without it the lane that begins second is narrowed, and its thread keeps that one CPU after the lane widens (needs 2 CPUs)`, async () => {
      const { domain, c0, reports, threads, placement } = await scenario(via, false);
      const c1 = allowed.toArray().find((c) => String(c) !== c0)!;
      const narrowed = reports.findIndex((r) => r.laneMask === String(c1));
      expect(narrowed).toBeGreaterThanOrEqual(0);
      expect(reports[1 - narrowed]!.laneMask).toBe(c0);
      expect(threads[narrowed]).toBe(String(c1));
      expect(threads[1 - narrowed]).toBe(domain);
      // The workers themselves are back on the domain set: only the thread keeps the one CPU.
      expect(placement.ok).toBe(true);
    });
  }
});
