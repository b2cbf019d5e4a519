// Materialised reads (R77): a dense tensor as it is, a view materialised from the engine's (the
// session's) buffer pool and returned to that pool on success and on error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor } from '../src/index.js';
import { expectCode } from './helpers.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1, providers: [] });
});
afterAll(async () => {
  await backend.close();
});

const matrix = () => Tensor.fromArray('f64', [3, 4], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);

describe('withMaterializedTensorRead (R77)', () => {
  it('passes a dense tensor as it is, without an execution', async () => {
    const t = matrix();
    const entries = backend.executionInfo().executorEntries;
    const row = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4], { order: 'row' });
    expect(await backend.withMaterializedTensorRead(t, (d) => d)).toBe(t);
    expect(await backend.withMaterializedTensorRead(row, (d) => d)).toBe(row);
    expect(backend.executionInfo().executorEntries).toEqual(entries);
  });

  it('materialises a view into pool storage, tagged with the domain, returned to the pool on success', async () => {
    const view = matrix().slice([0, 2], undefined);
    const pool0 = backend.bufferPoolStats();
    let seen: Tensor | undefined;
    const values = await backend.withMaterializedTensorRead(view, (d) => {
      seen = d;
      expect(d).not.toBe(view);
      expect(d.isDense('col')).toBe(true);
      expect(d.placement.cpuAffinity).toBe(backend.executionInfo().domainId);
      expect(backend.bufferPoolStats().outstanding).toBe(pool0.outstanding + 1);
      return d.toArray();
    });
    expect(values).toEqual(view.toArray());
    expect(seen!.disposed).toBe(true);
    const pool1 = backend.bufferPoolStats();
    expect(pool1.outstanding).toBe(pool0.outstanding);
    expect(pool1.buffers).toBe(pool0.buffers + (pool0.hits === pool1.hits ? 1 : 0));
    // the next read borrows the same storage back
    await backend.withMaterializedTensorRead(view, () => undefined);
    expect(backend.bufferPoolStats().hits).toBe(pool1.hits + 1);
    expect(backend.bufferPoolStats().outstanding).toBe(pool0.outstanding);
  });

  it('returns the storage to the pool when fn throws, and the error comes back unchanged', async () => {
    const view = matrix().slice([0, 2], [1, 3]);
    const pool0 = backend.bufferPoolStats();
    const boom = new RangeError('inside the read');
    await expect(backend.withMaterializedTensorRead(view, async () => {
      throw boom;
    })).rejects.toBe(boom);
    const pool1 = backend.bufferPoolStats();
    expect(pool1.outstanding).toBe(pool0.outstanding);
    expect(pool1.buffers + pool1.hits).toBe(pool0.buffers + pool0.hits + 1);
  });

  it('in a session: materialised on the session entry from the session pool, balanced on success and error; fn may use the session', async () => {
    const view = matrix().slice([0, 2], undefined);
    const pool0 = backend.bufferPoolStats();
    const entries0 = backend.executionInfo().executorEntries;
    await backend.withBackendSession(async (s) => {
      const product = await s.withMaterializedTensorRead(view, (d) => {
        expect(d).not.toBe(view);
        expect(backend.bufferPoolStats().outstanding).toBe(pool0.outstanding + 1);
        return s.dotGeneral(d, matrix(), { contracting: [[1], [1]] });
      });
      expect(product.shape).toEqual([2, 3]);
      product.dispose();
      await expect(s.withMaterializedTensorRead(view, () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    });
    expect(backend.executionInfo().executorEntries.installs).toBe(entries0.installs + 1);
    expect(backend.bufferPoolStats().outstanding).toBe(pool0.outstanding);
  });

  it('refuses bad arguments before anything runs', async () => {
    await expectCode(backend.withMaterializedTensorRead({} as never, () => 1), 'InvalidArgument');
    await expectCode(backend.withMaterializedTensorRead(matrix(), 1 as never), 'InvalidArgument');
    const gone = matrix();
    gone.dispose();
    await expectCode(backend.withMaterializedTensorRead(gone, () => 1), 'TensorDisposed');
  });
});
