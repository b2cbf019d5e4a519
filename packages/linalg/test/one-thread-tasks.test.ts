// The built-in kernels (Eigen, built with EIGEN_DONT_PARALLELIZE) keep one thread busy per task:
// on a backend of two workers their tasks are posted as one thread, so that the main thread waits
// for them as for a one-thread task (src/builtin.ts ONE_THREAD; provider-faer's gemm-provider.ts).
import { CpuBackend, Tensor } from '@tenferro/core';
import { taskEventsDuring } from '@tenferro/core/testing';
import { describe, expect, it } from 'vitest';
import { linalg, status } from '../src/index.js';

describe.runIf(status().available)('built-in linear algebra on a 2-worker backend', () => {
  it('a factorisation run as one task is posted as one thread (tenferro:task)', async () => {
    const backend = await CpuBackend.create({ threads: 2, providers: [] });
    const { events } = await taskEventsDuring(async () => {
      try {
        const spd = Tensor.fromArray('f64', [3, 3], [4, 1, 0, 1, 3, 1, 0, 1, 2]);
        const la = linalg(backend);
        (await la.cholesky(spd)).dispose();
        const lu = await la.luFactor(spd);
        lu.lu.dispose();
        lu.pivots.dispose();
      } finally {
        await backend.close();
      }
    });
    const runs = events.filter((t) => t.kernel === 'linalgKernel');
    expect(runs.length).toBe(2);
    expect(runs.map((t) => t.threads)).toEqual([1, 1]);
  });
});
