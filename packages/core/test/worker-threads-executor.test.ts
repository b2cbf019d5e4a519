import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, CpuSet, discoverCpuTopology, ExternalCpuDomain, Tensor, WorkerThreadsDomainExecutor } from '../src/index.js';
import { naiveDotGeneral, peakThreadsDuring, randomOperand, relativeError, seededRandom } from '../src/testing/index.js';
import { cpusAllowedOfTask, expectCode, kernel, reached, until } from './helpers.js';

const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');
const nestedEntry = kernel<{ coreUrl: string }, string>('nestedBackendEntry');
const whoami = kernel<undefined, { workerIndex: number; tid: number; cpus: string }>('whoami');
const coreUrl = new URL('../dist/index.js', import.meta.url).href;

describe('WorkerThreadsDomainExecutor (a caller-owned worker_threads pool)', () => {
  let executor: WorkerThreadsDomainExecutor;
  let backend: CpuBackend;
  beforeAll(async () => {
    executor = await WorkerThreadsDomainExecutor.create({ workers: 2 });
    backend = await CpuBackend.fromExternalDomains({ defaultDomain: 3, domains: [ExternalCpuDomain.callerManaged(3, executor, 2)] });
  });
  afterAll(async () => {
    await backend.close();
    await executor.close();
  });

  it('is caller-owned and runs GEMMs on its own workers only, with reference results', async () => {
    expect(executor.capabilities()).toMatchObject({ workerCount: 2, shutdown: 'callerOwned', affinity: 'none' });
    const rand = seededRandom(11);
    const x = randomOperand(rand, 'f64', [40, 30], true);
    const y = randomOperand(rand, 'f64', [30, 20], true);
    await backend.matmul(x, y);
    const { result, newThreads } = await peakThreadsDuring(() => backend.withBackendSession((s) => s.dotGeneral(x, y, { contracting: [[1], [0]] })));
    expect(newThreads).toEqual([]);
    expect(relativeError(result.toArray() as number[], naiveDotGeneral(x, y, { contracting: [[1], [0]] }).values)).toBeLessThan(1e-12);
    expect(result.placement.cpuAffinity).toBe(3);
  });

  it('rejects a second entry from another of its workers while the domain is active, then clears', async () => {
    const gate = new SharedArrayBuffer(12);
    const g = new Int32Array(gate);
    const fromWorker = await backend.withBackendSession((s) =>
      s.run('inner', async (ctx) => {
        const pool = ctx.workerPool()!;
        const hold = pool.runOn(0, holdUntil, { buffer: gate, index: 0, enteredIndex: 1, timeoutMs: 10_000 });
        await reached(g, 1);
        const nested = await pool.runOn(1, nestedEntry, { coreUrl });
        Atomics.store(g, 0, 1);
        Atomics.notify(g, 0);
        await hold;
        return nested;
      }),
    );
    expect(fromWorker).toBe('Reentered');
    expect(await backend.install(() => 'after')).toBe('after');
  });

  it('survives the backend: closing the backend leaves the pool running', async () => {
    const other = await CpuBackend.fromExternalDomains({ defaultDomain: 4, domains: [ExternalCpuDomain.callerManaged(4, executor, 1)] });
    await other.close();
    expect((await backend.install((ctx) => ctx.run(whoami))).tid).toBeGreaterThan(0);
  });

  it('pinned: workers verified on the declared set; the domain still reports a caller declaration', async () => {
    const cpu = discoverCpuTopology().allowedCpus.first;
    const pinned = await WorkerThreadsDomainExecutor.create({ workers: 1, cpus: CpuSet.of([cpu]) });
    const b = await CpuBackend.fromExternalDomains({ defaultDomain: 9, domains: [ExternalCpuDomain.cooperative(9, { numaNode: 0, cpus: CpuSet.of([cpu]) }, pinned, 1)] });
    try {
      expect(pinned.capabilities().affinity).toBe('tenferroPinnedVerified');
      expect(b.executionInfo().executorAffinity).toBe('callerDeclaredUnverified');
      const w = await b.install((ctx) => ctx.run(whoami));
      expect(cpusAllowedOfTask(w.tid)).toBe(String(cpu));
      const r = await b.matmul(Tensor.fromArray('f32', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f32', [2, 2], [0, 1, 1, 0]));
      expect(r.toArray()).toEqual([3, 4, 1, 2]);
    } finally {
      await b.close();
      await pinned.close();
    }
  });

  it('validates its options', async () => {
    await expectCode(WorkerThreadsDomainExecutor.create({ workers: 0 }), 'InvalidArgument', 'Validation');
    await expectCode(WorkerThreadsDomainExecutor.create(null as never), 'InvalidArgument');
  });
});
