// A provider that writes a caller-owned output and then declines is detected, not trusted: no
// retry on the modified output, the new code ProviderContractViolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, CpuProviderBundle, referenceGemmProvider, Tensor, Unsupported, type CpuGemmProvider } from '../../src/index.js';
import { expectCode } from '../helpers.js';

let base: CpuBackend;
beforeAll(async () => {
  base = await CpuBackend.create({ threads: 1, providers: [] });
});
afterAll(async () => {
  await base.close();
});

function scribbling(reason: 'retryable' | 'terminal', declares: boolean): CpuGemmProvider {
  return {
    ...referenceGemmProvider,
    name: `scribbles, then declines (${reason})`,
    declaredSupport: () => ({ ...referenceGemmProvider.declaredSupport!(), declinesBeforeWriting: declares }),
    async gemm(_ctx, request) {
      new Float64Array(request.out.buffer, request.out.offset * 8, 1)[0] = 12345;
      return reason === 'retryable' ? Unsupported.layout('lhs') : Unsupported.layout('output');
    },
  };
}

const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
const dims = { contracting: [[1], [0]] as [number[], number[]] };

describe('provider contract violations', () => {
  it.each(['retryable', 'terminal'] as const)('write then %s decline on a caller-owned output → ProviderContractViolation, no retry', async (reason) => {
    const backend = base.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(scribbling(reason, false)).build());
    const out = Tensor.fromArray('f64', [2, 2], [1, 1, 1, 1]);
    const e = await expectCode(backend.dotGeneralInto(out, a, a, dims, { beta: 1 }), 'ProviderContractViolation', 'BackendFailure');
    expect(e.detail.slot).toBe('gemm');
  });

  it('an honest decline is retried as before (reference provider declines nothing; a declining wrapper that writes nothing)', async () => {
    let calls = 0;
    const honest: CpuGemmProvider = {
      ...referenceGemmProvider,
      name: 'declines once, honestly',
      declaredSupport: () => ({ ...referenceGemmProvider.declaredSupport!(), declinesBeforeWriting: false }),
      async gemm(ctx, request) {
        if (calls++ === 0) return Unsupported.layout('lhs');
        return referenceGemmProvider.gemm(ctx, request);
      },
    };
    const backend = base.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(honest).build());
    const out = Tensor.fromArray('f64', [2, 2], [1, 1, 1, 1]);
    await backend.dotGeneralInto(out, a, a, dims, { beta: 1 });
    expect(out.toArray()).toEqual([8, 11, 16, 23]);
  });
});
