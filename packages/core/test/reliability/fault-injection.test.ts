// Fault injection: providers that throw or hang, kernels that throw, exit or never settle,
// executors that refuse, and close()/abort at every stage (queued, admitted, running). After each
// fault: the permit is released (an overlapping backend then runs), the buffer pool has nothing
// outstanding, the thread count is back to its baseline, and nothing is left unhandled.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  CpuProviderBundle,
  ExternalCpuDomain,
  processArbiter,
  referenceGemmProvider,
  Tensor,
  WorkerThreadsDomainExecutor,
  type CpuDomainExecutor,
  type CpuGemmProvider,
} from '../../src/index.js';
import { threadCensus } from '../../src/testing/index.js';
import { expectCode, gate, kernel, until } from '../helpers.js';

const noop = kernel('noop');
const fail = kernel('fail');
const exitWorker = kernel('exitWorker');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');
const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);


const withProvider = (b: CpuBackend, p: Partial<CpuGemmProvider>) =>
  b.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider({ ...referenceGemmProvider, ...p } as CpuGemmProvider).build());

let baselineThreads: number;
let backend: CpuBackend;
beforeEach(async () => {
  baselineThreads = threadCensus().length;
  backend = await CpuBackend.create({ threads: 2, providers: [] });
});
afterEach(async () => {
  // Whatever happened: the permit is free (an overlapping backend runs), nothing is outstanding.
  const probe = await CpuBackend.create({ threads: 1, providers: [] });
  expect(await probe.install((ctx) => ctx.run(noop).then(() => 'free'))).toBe('free');
  await probe.close();
  if (!backend.closed) expect(backend.bufferPoolStats().outstanding).toBe(0);
  await backend.close();
  expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
  await until(() => threadCensus().length <= baselineThreads);
});

describe('faults in providers, kernels and executors', () => {
  it('a provider that throws synchronously or asynchronously → ProviderFailed', async () => {
    await expectCode(withProvider(backend, { gemm: () => { throw new Error('sync'); } }).matmul(a, a), 'ProviderFailed', 'BackendFailure');
    await expectCode(withProvider(backend, { gemm: async () => { throw new Error('async'); } }).matmul(a, a), 'ProviderFailed', 'BackendFailure');
    await expectCode(withProvider(backend, { gemm: async () => 'not an outcome' as never }).matmul(a, a), 'ProviderFailed', 'BackendFailure');
  });

  it('a kernel that throws → KernelFailed; one that exits its worker → WorkerDied, and the engine recovers', async () => {
    await expectCode(backend.install((ctx) => ctx.run(fail)), 'KernelFailed', 'BackendFailure');
    await expectCode(backend.install((ctx) => ctx.run(exitWorker)), 'WorkerDied', 'BackendFailure');
    expect(await backend.install((ctx) => ctx.run(noop).then(() => 'recovered'))).toBe('recovered');
  });

  it('a kernel that never settles (until close) → BackendClosed', async () => {
    const h = gate();
    const running = backend.install((ctx) => ctx.run(holdUntil, h.payload));
    running.catch(() => undefined);
    await h.whenEntered();
    await backend.close();
    await expectCode(running, 'BackendClosed');
  });

  it('an executor that refuses install or submit → ExecutorFailed, the guard released', async () => {
    const pool = await WorkerThreadsDomainExecutor.create({ workers: 2 });
    const refusing: CpuDomainExecutor = {
      capabilities: () => pool.capabilities(),
      install: () => Promise.reject(new Error('no install today')),
      submit: () => Promise.reject(new Error('no submit today')),
      workerPool: () => pool.workerPool(),
      runKernel: (t) => pool.runKernel(t),
    };
    try {
      const ext = await CpuBackend.fromExternalDomains({ defaultDomain: 1, domains: [ExternalCpuDomain.callerManaged(1, refusing, 2)], providers: [] });
      await expectCode(ext.install(() => 1), 'ExecutorFailed', 'BackendFailure');
      await expectCode(ext.withOuterLanes(2, () => undefined), 'ExecutorFailed', 'BackendFailure');
      await expectCode(ext.install(() => 1), 'ExecutorFailed', 'BackendFailure'); // not Reentered: the guard was released
      await ext.close();
    } finally {
      await pool.close();
    }
  });
});

describe('close() and abort at every stage', () => {
  for (const stage of ['queued', 'admitted', 'running'] as const) {
    for (const how of ['close', 'abort'] as const) {
      it(`${how} while ${stage}`, async () => {
        const h = gate();
        const controller = new AbortController();
        // A first execution holds the permit so that the second can be queued.
        const holder = backend.install((ctx) => ctx.run(holdUntil, h.payload));
        holder.catch(() => undefined);
        await h.whenEntered();
        let admitted = false;
        const release = gate();
        const victim = backend.install(
          async (ctx) => {
            admitted = true;
            if (stage === 'running') await ctx.run(holdUntil, release.payload);
            else await new Promise<void>((resolve) => setImmediate(resolve));
          },
          { signal: controller.signal },
        );
        victim.catch(() => undefined);
        if (stage === 'queued') await until(() => processArbiter().stats().waiting === 1);
        else {
          h.open();
          await holder;
          if (stage === 'running') await release.whenEntered();
          else await until(() => admitted);
        }
        if (how === 'close') {
          const closing = backend.close();
          if (stage !== 'running') h.open();
          await closing;
          await expectCode(victim, 'BackendClosed');
        } else {
          controller.abort();
          if (stage === 'running') release.open();
          h.open();
          const expected = stage === 'queued' ? 'AdmissionAborted' : 'ExecutionAborted';
          const e = await victim.then(
            () => undefined,
            (err: unknown) => err,
          );
          // An admitted body that finished before the abort landed may complete normally.
          if (!(stage === 'admitted' && e === undefined)) expect((e as { code: string }).code).toBe(expected);
        }
        await holder.catch(() => undefined);
      });
    }
  }
});
