import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor, ops, referenceTensorPrimitivesProvider } from '../src/index.js';
import { referenceLayoutProvider } from '../src/provider/reference/reference-providers.js';
import { resetReferenceWarningForTests } from '../src/ops/reference-warning.js';

/** The warnings emitted while `body` runs (they are emitted on the next tick). */
async function warningsOf(body: () => Promise<void>): Promise<{ code?: string; message: string }[]> {
  const seen: { code?: string; message: string }[] = [];
  const onWarning = (w: Error & { code?: string }) => seen.push(w);
  process.on('warning', onWarning);
  try {
    await body();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  return seen.filter((w) => w.code === 'TENFERRO_PRIMITIVE_REFERENCE');
}

describe('never silently slow: operations on core\'s reference primitives (no provider-tprims) warn once', () => {
  let backend: CpuBackend;
  beforeAll(async () => {
    backend = await CpuBackend.create({ threads: 1, providers: [] });
  });
  afterAll(() => backend.close());
  beforeEach(() => resetReferenceWarningForTests());

  it('the first ops() call on the reference warns once, naming the fix; later calls do not', async () => {
    const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
    const warnings = await warningsOf(async () => {
      expect((await ops(backend).add(x, x)).toArray()).toEqual([2, 4, 6]);
      expect((await ops(backend).sum(x)).toArray()).toEqual([6]);
      await ops(backend).contiguous(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]).transpose());
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/ops\.add runs on core's TypeScript reference tensor primitives.*npm install @tenferro\/provider-tprims/);
  });

  it('a dotGeneral whose canonical retry copies an operand through the reference layout transform warns too', async () => {
    expect(backend.providerBundle().layoutTransform).toBe(referenceLayoutProvider);
    const a = Tensor.fromArray('f64', [2, 2, 2], [1, 2, 3, 4, 5, 6, 7, 8], { order: 'row' });
    const warnings = await warningsOf(async () => {
      // contracting (1, 2) with (1, 0): the rhs axes do not fuse in this order, so an operand is copied
      await backend.dotGeneral(a, a, { contracting: [[1, 2], [1, 0]] });
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/reference layout transform/);
  });

  it('a native provider in the slot: no warning', async () => {
    const native = { ...referenceTensorPrimitivesProvider, name: 'native stand-in' };
    const h = backend.withProviderBundle(backend.providerBundle().toBuilder().tensorPrimitivesProvider(native).build());
    const x = Tensor.fromArray('f32', [2], [1, 2]);
    const warnings = await warningsOf(async () => {
      expect((await ops(h).mul(x, x)).toArray()).toEqual([1, 4]);
    });
    expect(warnings).toEqual([]);
  });
});
