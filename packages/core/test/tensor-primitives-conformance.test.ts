// The tensor-primitives conformance cases of @tenferro/core/testing: the reference provider,
// packaged as a kind-'any' package, passes them (control); providers that break the slot's
// contract fail exactly the case that checks it.
import { describe, expect, it } from 'vitest';
import { type CpuProviderPackage, type CpuTensorPrimitivesProvider, Unsupported, referenceTensorPrimitivesProvider } from '../src/index.js';
import { tensorPrimitivesConformanceCases } from '../src/testing/index.js';

const packaged = (p: CpuTensorPrimitivesProvider): CpuProviderPackage => ({ kind: 'any', name: p.name, tensorPrimitives: p });
const find = (cases: ReturnType<typeof tensorPrimitivesConformanceCases>, part: string) => cases.find((c) => c.name.includes(part))!;

describe('tensor-primitives conformance kit', () => {
  it('the reference provider passes every case (control)', async () => {
    // Two random cases per dtype at budget 1, one at budget 2 (the same comparisons: the unit tier's 5 s per file).
    for (const options of [{ cases: 2, budgets: [1] }, { cases: 1, budgets: [2] }]) {
      for (const c of tensorPrimitivesConformanceCases(() => packaged(referenceTensorPrimitivesProvider), options)) {
        expect(await c.run(), c.name).toBeUndefined();
      }
    }
  }, 120_000);

  it('a package without the slot is skipped', async () => {
    const [first] = tensorPrimitivesConformanceCases(() => ({ kind: 'any', name: 'empty' }), { cases: 1, budgets: [1] });
    expect(await first!.run()).toMatchObject({ skipped: expect.stringContaining('no tensorPrimitives') });
  });

  it('a provider that declines a dtype it declares fails', async () => {
    const p: CpuTensorPrimitivesProvider = { ...referenceTensorPrimitivesProvider, name: 'shy', binary: async (ctx, r) => (r.lhs.dtype === 'f64' ? Unsupported.dtype('f64') : referenceTensorPrimitivesProvider.binary(ctx, r)) };
    await expect(find(tensorPrimitivesConformanceCases(() => packaged(p), { cases: 1, budgets: [1] }), 'match the reference').run()).rejects.toThrow(/declared dtype f64 was declined/);
  }, 60_000);

  it('a provider that writes and then declines fails', async () => {
    const p: CpuTensorPrimitivesProvider = {
      ...referenceTensorPrimitivesProvider,
      name: 'scribbler',
      declaredSupport: () => ({ dtypes: ['f32'], stridedOperands: true, conjugation: true }),
      unary: async (ctx, r) => {
        if (r.src.dtype === 'f32') return referenceTensorPrimitivesProvider.unary(ctx, r);
        new Uint8Array(r.out.buffer).fill(9);
        return Unsupported.dtype(r.src.dtype);
      },
    };
    await expect(find(tensorPrimitivesConformanceCases(() => packaged(p), { cases: 1, budgets: [1] }), 'match the reference').run()).rejects.toThrow();
  }, 60_000);

  it('a provider whose results are off fails', async () => {
    const p: CpuTensorPrimitivesProvider = {
      ...referenceTensorPrimitivesProvider,
      name: 'off by one',
      reduce: async (ctx, r) => {
        const outcome = await referenceTensorPrimitivesProvider.reduce(ctx, r);
        if (r.op === 'sum' && r.out.dtype === 'f64') {
          const lanes = new Float64Array(r.out.buffer);
          lanes[r.out.offset] = lanes[r.out.offset]! + 1;
        }
        return outcome;
      },
    };
    await expect(find(tensorPrimitivesConformanceCases(() => packaged(p), { cases: 2, budgets: [1] }), 'match the reference').run()).rejects.toThrow(/sum f64/);
  }, 60_000);
});
