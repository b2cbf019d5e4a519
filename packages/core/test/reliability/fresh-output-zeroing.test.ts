// R108: an unzeroed fresh output (full-overwrite GEMM provider) is used as it is only on the direct
// plan; when the direct call declines, the canonical retry gets a zero-filled output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, CpuProviderBundle, referenceGemmProvider, Tensor, Unsupported, type CpuGemmProvider } from '../../src/index.js';

let base: CpuBackend;
beforeAll(async () => {
  base = await CpuBackend.create({ threads: 1, providers: [] });
});
afterAll(async () => {
  await base.close();
});

describe('R108 fresh outputs', () => {
  it('the retry after a declined direct plan sees a zero-filled output, even in reused pooled storage', async () => {
    const seen: boolean[] = [];
    let calls = 0;
    const provider: CpuGemmProvider = {
      ...referenceGemmProvider,
      name: 'declines the direct plan once per operation',
      declaredSupport: () => ({ ...referenceGemmProvider.declaredSupport!(), overwritesOutput: true }),
      async gemm(ctx, request) {
        calls++;
        const view = new Float64Array(request.out.buffer, request.out.offset * 8, request.m * request.n);
        if (calls % 2 === 1) return Unsupported.layout('lhs');
        seen.push(view.every((x) => x === 0));
        return referenceGemmProvider.gemm(ctx, request);
      },
    };
    const backend = base.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(provider).build());
    const a = Tensor.fromArray('f64', [3, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const first = await backend.matmul(a, a);
    expect(first.toArray()).toEqual([30, 36, 42, 66, 81, 96, 102, 126, 150]);
    backend.reclaim(first); // its non-zero storage goes back to the pool, unzeroed
    const second = await backend.matmul(a, a);
    expect(second.toArray()).toEqual([30, 36, 42, 66, 81, 96, 102, 126, 150]);
    expect(backend.bufferPoolStats().hits).toBeGreaterThan(0);
    expect(seen).toEqual([true, true]);
  });
});
