// Untyped errors from deep inside become typed ones, before anything the caller owns is touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  CpuProviderBundle,
  discoverCpuTopology,
  ExternalCpuDomain,
  processArbiter,
  referenceGemmProvider,
  Tensor,
  WorkerThreadsDomainExecutor,
  type CpuDomainExecutor,
} from '../../src/index.js';
import { expectCode, expectThrows, kernel } from '../helpers.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1 });
});
afterAll(async () => {
  await backend.close();
});

describe('sizes', () => {
  it('a tensor too large to allocate is AllocationFailed; one whose size cannot be represented is IntegerOverflow', () => {
    expectThrows(() => Tensor.zeros('f64', [2 ** 24, 2 ** 24]), 'AllocationFailed', 'BackendFailure');
    expectThrows(() => Tensor.zeros('f64', [2 ** 30, 2 ** 30]), 'IntegerOverflow');
    expectThrows(() => Tensor.fromArray('f64', [2 ** 40], []), 'ShapeMismatch');
  });

  it('a 2^48-element fresh output from broadcast operands is AllocationFailed; nothing is left outstanding and the permit is free', async () => {
    const one = new SharedArrayBuffer(8);
    const a = Tensor.fromDescriptor({ dtype: 'f64', shape: [2 ** 24, 1], strides: [0, 0], offset: 0, buffer: one });
    const b = Tensor.fromDescriptor({ dtype: 'f64', shape: [1, 2 ** 24], strides: [0, 0], offset: 0, buffer: one });
    await expectCode(backend.matmul(a, b), 'AllocationFailed', 'BackendFailure');
    expect(backend.bufferPoolStats().outstanding).toBe(0);
    expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
  });
});

describe('malformed collaborators', () => {
  it('a provider whose executionCapabilities() is invalid or throws is InvalidArgument naming the provider and the field', () => {
    const lying = { ...referenceGemmProvider, name: 'lying', executionCapabilities: () => ({ threadCount: 'lots' }) as never };
    const e = expectThrows(() => CpuProviderBundle.builder('faer').gemmProvider(lying).build(), 'InvalidArgument');
    expect(e.detail.param).toBe('gemm.executionCapabilities().threadCount');
    expect(e.message).toContain('"lying"');
    const throwing = { ...referenceGemmProvider, name: 'throws', executionCapabilities: () => { throw new TypeError('no'); } };
    expectThrows(() => CpuProviderBundle.builder('faer').gemmProvider(throwing).build(), 'InvalidArgument');
  });

  it('a topology without allowedCpus is InvalidArgument naming the field', async () => {
    const real = discoverCpuTopology();
    const broken = { ...real, node: real.node.bind(real), hasNumaNodes: real.hasNumaNodes.bind(real), allowedCpus: undefined };
    const e = await expectCode(CpuBackend.create({ topology: broken as never }), 'InvalidArgument');
    expect(e.detail.param).toBe('options.topology.allowedCpus');
  });

  it('an executor whose capabilities() throws is ExecutorFailed with the cause', () => {
    const bad = { capabilities: () => { throw new Error('not today'); }, install: async () => undefined, submit: async () => undefined, workerPool: () => undefined, runKernel: async () => undefined } as unknown as CpuDomainExecutor;
    const e = expectThrows(() => ExternalCpuDomain.callerManaged(1, bad, 1), 'ExecutorFailed', 'BackendFailure');
    expect((e.cause as Error).message).toBe('not today');
  });

  it('a kernel payload that cannot be cloned is InvalidArgument before the worker hop; the engine stays usable', async () => {
    const echo = kernel<unknown, unknown>('echo');
    await expectCode(backend.install((ctx) => ctx.run(echo, { fn: () => 1 })), 'InvalidArgument');
    expect(await backend.install((ctx) => ctx.run(echo, 5))).toBe(5);
    const pool = await WorkerThreadsDomainExecutor.create({ workers: 1 });
    try {
      const ext = await CpuBackend.fromExternalDomains({ defaultDomain: 3, domains: [ExternalCpuDomain.callerManaged(3, pool, 1)] });
      await expectCode(ext.install((ctx) => ctx.run(echo, { fn: () => 1 })), 'InvalidArgument');
      expect(await ext.install((ctx) => ctx.run(echo, 6))).toBe(6);
      await ext.close();
    } finally {
      await pool.close();
    }
  });
});
