// CpuBackend.fromExternalDomains finds the installed faer provider as CpuBackend.create does.
import { describe, expect, it } from 'vitest';
import { CpuBackend, ExternalCpuDomain, Tensor, WorkerThreadsDomainExecutor } from '@tenferro/core';

describe('external domains use the installed native provider', () => {
  it('without providers, a caller-managed domain runs the faer kernels, and says so', async () => {
    const pool = await WorkerThreadsDomainExecutor.create({ workers: 1 });
    try {
      const backend = await CpuBackend.fromExternalDomains({ defaultDomain: 4, domains: [ExternalCpuDomain.callerManaged(4, pool, 1)] });
      expect(backend.executionInfo().providerDiagnostic).toMatch(/^tenferro faer GEMM/);
      const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
      expect((await backend.matmul(a, a)).toArray()).toEqual([7, 10, 15, 22]);
      await backend.close();
    } finally {
      await pool.close();
    }
  });
});
