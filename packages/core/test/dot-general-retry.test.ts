import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuGemmProvider,
  type CpuGemmRequest,
  type CpuLayoutTransformProvider,
  CpuProviderBundle,
  referenceGemmProvider,
  referenceLayoutProvider,
  Tensor,
  Unsupported,
} from '../src/index.js';
import { naiveDotGeneral, relativeError } from '../src/testing/index.js';
import { expectCode } from './helpers.js';

/** A GEMM provider wrapping the reference one, recording every request and deciding per call. */
function scriptedGemm(decide: (req: CpuGemmRequest, call: number) => ReturnType<typeof Unsupported.layout> | 'run' | 'throw') {
  const calls: CpuGemmRequest[] = [];
  const provider: CpuGemmProvider = {
    name: 'scripted',
    executionCapabilities: () => referenceGemmProvider.executionCapabilities(),
    async gemm(ctx, req) {
      calls.push(req);
      const d = decide(req, calls.length);
      if (d === 'throw') throw new Error('provider exploded');
      if (d === 'run') return referenceGemmProvider.gemm(ctx, req);
      return d;
    },
  };
  return { provider, calls };
}

let base: CpuBackend;
beforeAll(async () => {
  base = await CpuBackend.create({ threads: 1 });
});
afterAll(async () => {
  await base.close();
});

const with_ = (gemm: CpuGemmProvider, layout: CpuLayoutTransformProvider = referenceLayoutProvider) =>
  base.withProviderBundle(CpuProviderBundle.customBuilder().gemmProvider(gemm).layoutTransformProvider(layout).build());

const a = Tensor.fromArray('c128', [3, 2], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
const b = Tensor.fromArray('c128', [2, 4], Array.from({ length: 16 }, (_, i) => (i % 5) - 2));
const dims = { contracting: [[1], [0]] as [number[], number[]] };
const expectProduct = (t: Tensor, conj = {}) => expect(relativeError(t.toArray() as number[], naiveDotGeneral(a, b, dims, conj).values)).toBeLessThan(1e-12);

describe('dot-general retry (R104–R107)', () => {
  it('declines layout(lhs) once: retried exactly once on canonical operands, both temporaries back in the pool', async () => {
    const { provider, calls } = scriptedGemm((_r, n) => (n === 1 ? Unsupported.layout('lhs') : 'run'));
    const h = with_(provider);
    const before = h.bufferPoolStats();
    expectProduct(await h.dotGeneral(a, b, dims));
    expect(calls).toHaveLength(2);
    expect(calls[1]!.lhs.buffer).not.toBe(a.buffer);
    expect(calls[1]!.rhs.buffer).not.toBe(b.buffer);
    const after = h.bufferPoolStats();
    expect(after.outstanding).toBe(0);
    // two canonical temporaries, and the fresh output's storage (given away, not returned)
    expect(after.misses + after.hits - before.misses - before.hits).toBe(3);
    expect(after.buffers).toBeGreaterThanOrEqual(2);
  });

  it('declines conjugation: the retry fuses conjugation into materialisation and clears the flags', async () => {
    const { provider, calls } = scriptedGemm((req) => (req.conjLhs || req.conjRhs ? Unsupported.conjugation() : 'run'));
    const h = with_(provider);
    expectProduct(await h.dotGeneral(a, b, dims, { conjLhs: true }), { conjLhs: true });
    expect(calls.map((c) => [c.conjLhs, c.conjRhs])).toEqual([[true, false], [false, false]]);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it('declines twice: terminal ProviderUnsupported after exactly two calls; the output is untouched; the pool balances', async () => {
    const { provider, calls } = scriptedGemm(() => Unsupported.layout('rhs'));
    const h = with_(provider);
    const out = Tensor.fromArray('c128', [3, 4], Array.from({ length: 24 }, () => 4));
    const snapshot = new Uint8Array(out.buffer.slice(0));
    const e = await expectCode(h.dotGeneralInto(out, a, b, dims), 'ProviderUnsupported', 'Unsupported');
    expect(e.message).toContain('second unsupported');
    expect(calls).toHaveLength(2);
    expect(new Uint8Array(out.buffer)).toEqual(snapshot);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it('a provider that throws: ProviderFailed carrying the error, one call, pool balanced', async () => {
    const { provider, calls } = scriptedGemm(() => 'throw');
    const h = with_(provider);
    const e = await expectCode(h.dotGeneral(a, b, dims), 'ProviderFailed', 'BackendFailure');
    expect((e.cause as Error).message).toBe('provider exploded');
    expect(calls).toHaveLength(1);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it('a provider that throws during the retry still returns both temporaries', async () => {
    const { provider, calls } = scriptedGemm((_r, n) => (n === 1 ? Unsupported.conjugation() : 'throw'));
    const h = with_(provider);
    await expectCode(h.dotGeneral(a, b, dims, { conjRhs: true }), 'ProviderFailed');
    expect(calls).toHaveLength(2);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it.each([
    ['layout(output)', Unsupported.layout('output')],
    ['dtype', Unsupported.dtype('c128')],
    ['accumulation', Unsupported.of({ kind: 'accumulation' })],
  ])('%s is terminal at once: one call, no retry', async (_n, reason) => {
    const { provider, calls } = scriptedGemm(() => reason);
    await expectCode(with_(provider).dotGeneral(a, b, dims), 'ProviderUnsupported');
    expect(calls).toHaveLength(1);
  });

  it('a layout provider that declines while materialising is terminal, and the pool balances', async () => {
    const { provider, calls } = scriptedGemm((_r, n) => (n === 1 ? Unsupported.layout('lhs') : 'run'));
    const decline: CpuLayoutTransformProvider = { ...referenceLayoutProvider, name: 'declining', materialize: async () => Unsupported.dtype('c128') };
    const h = with_(provider, decline);
    const e = await expectCode(h.dotGeneral(a, b, dims), 'ProviderUnsupported');
    expect(e.detail.slot).toBe('layoutTransform');
    expect(calls).toHaveLength(1);
    expect(h.bufferPoolStats().outstanding).toBe(0);
  });

  it('layouts without a direct plan go straight to the canonical path (one GEMM call)', async () => {
    const { provider, calls } = scriptedGemm(() => 'run');
    const h = with_(provider);
    // contract two lhs axes of a padded view: their strides (2, 8) do not fuse (8 ≠ 2·3)
    const x = Tensor.fromArray('f64', [2, 4, 4], Array.from({ length: 32 }, (_, i) => i)).slice(undefined, [0, 3]);
    const y = Tensor.fromArray('f64', [4, 3, 5], Array.from({ length: 60 }, (_, i) => i % 7));
    const d = { contracting: [[1, 2], [1, 0]] as [number[], number[]] };
    const got = await h.dotGeneral(x, y, d);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.lhs.buffer).not.toBe(x.buffer);
    expect(relativeError(got.toArray() as number[], naiveDotGeneral(x, y, d).values)).toBeLessThan(1e-12);
  });

  it('a required general-contraction provider that declines is terminal; a preferred one falls through', async () => {
    const general = { name: 'general', executionCapabilities: () => referenceGemmProvider.executionCapabilities(), dotGeneral: async () => Unsupported.of({ kind: 'runtimeUnavailable' }) };
    const req = base.withProviderBundle(base.providerBundle().toBuilder().requireGeneralContractionProvider(general).build());
    await expectCode(req.dotGeneral(a, b, dims), 'ProviderUnsupported');
    const pref = base.withProviderBundle(base.providerBundle().toBuilder().preferGeneralContractionProvider(general).build());
    expectProduct(await pref.dotGeneral(a, b, dims));
  });
});
