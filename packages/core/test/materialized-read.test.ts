// Materialised reads (R77): a dense tensor as it is, a view materialised from the engine's (the
// session's) buffer pool and returned to that pool on success and on error.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor } from '../src/index.js';
import { expectCode } from './helpers.js';

// `--expose-gc` for this process: the escaped-view tests force collections.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Force collections until `done()` holds (finalizers run as tasks after a collection); bounded, never timed. */
async function collectUntil(done: () => boolean): Promise<boolean> {
  for (let i = 0; i < 50 && !done(); i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return done();
}

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

// #35: storage lent to `fn` is refcounted like any storage — a view that escapes `fn` keeps it
// out of the pool until the view is disposed or collected, and never reads recycled storage.
describe('withMaterializedTensorRead: a view that escapes fn (R77, #35)', () => {
  /** The first row of a 4×4 column-major matrix, [1, 129, 257, 385], as a 1×4 view (not dense: it is materialised). */
  const firstRow = () => Tensor.fromArray('f64', [4, 4], Array.from({ length: 16 }, (_, i) => 1 + 32 * i)).slice([0, 1], undefined);
  const sevens = () => Tensor.fromArray('f64', [4, 4], new Array<number>(16).fill(-7)).slice([0, 1], undefined);

  it('backend: the escaped view keeps reading its values while the next read of the same size runs, and the loan is outstanding until it is disposed', async () => {
    const pool0 = backend.bufferPoolStats();
    const escaped = await backend.withMaterializedTensorRead(firstRow(), (d) => d.transpose());
    expect(escaped.disposed).toBe(false);
    expect(escaped.toArray()).toEqual([1, 129, 257, 385]);
    expect(backend.bufferPoolStats().outstanding).toBe(pool0.outstanding + 1);
    // The next materialisation of the same size must borrow other storage.
    const next = await backend.withMaterializedTensorRead(sevens(), (d) => d.toArray());
    expect(next).toEqual([-7, -7, -7, -7]);
    expect(escaped.toArray()).toEqual([1, 129, 257, 385]);
    expect(backend.bufferPoolStats().outstanding).toBe(pool0.outstanding + 1);
    const pool1 = backend.bufferPoolStats();
    escaped.dispose();
    const pool2 = backend.bufferPoolStats();
    expect(pool2.outstanding).toBe(pool0.outstanding);
    expect(pool2.buffers).toBe(pool1.buffers + 1);
    await expectCode(async () => escaped.toArray(), 'TensorDisposed');
  });

  it('session: the same, and fn returning the dense tensor itself gets a disposed tensor (TensorDisposed), never recycled storage', async () => {
    const pool0 = backend.bufferPoolStats();
    await backend.withBackendSession(async (s) => {
      const escaped = await s.withMaterializedTensorRead(firstRow(), (d) => d.transpose());
      const dense = await s.withMaterializedTensorRead(firstRow(), (d) => d);
      expect(dense.disposed).toBe(true);
      await expectCode(async () => dense.toArray(), 'TensorDisposed');
      expect(backend.bufferPoolStats().outstanding).toBe(pool0.outstanding + 1);
      expect(await s.withMaterializedTensorRead(sevens(), (d) => d.toArray())).toEqual([-7, -7, -7, -7]);
      expect(escaped.toArray()).toEqual([1, 129, 257, 385]);
      // an operation of the session reads the escaped view as it is
      const product = await s.dotGeneral(escaped, Tensor.fromArray('f64', [1, 1], [2]), { contracting: [[1], [0]] });
      expect(product.toArray()).toEqual([2, 258, 514, 770]);
      escaped.dispose();
    });
    expect(backend.bufferPoolStats().outstanding).toBe(pool0.outstanding);
  });

  it('a dropped escaped view brings its loan back when it is collected', async () => {
    const pool0 = backend.bufferPoolStats();
    await (async () => {
      const escaped = await backend.withMaterializedTensorRead(firstRow(), (d) => d.transpose());
      expect(escaped.toArray()).toEqual([1, 129, 257, 385]);
    })();
    expect(backend.bufferPoolStats().outstanding).toBe(pool0.outstanding + 1);
    expect(await collectUntil(() => backend.bufferPoolStats().outstanding === pool0.outstanding)).toBe(true);
  });

  it('storage whose buffer was handed out through an escaped view leaves the pool for good when the view is collected: never lent again', async () => {
    const pool0 = backend.bufferPoolStats();
    const raw = await (async () => {
      const escaped = await backend.withMaterializedTensorRead(firstRow(), (d) => d.transpose());
      const { buffer, offset } = escaped.descriptor();
      return new Float64Array(buffer, offset * 8, 4);
    })();
    expect([...raw]).toEqual([1, 129, 257, 385]);
    expect(await collectUntil(() => backend.bufferPoolStats().outstanding === pool0.outstanding)).toBe(true);
    for (let i = 0; i < 4; i++) expect(await backend.withMaterializedTensorRead(sevens(), (d) => d.toArray())).toEqual([-7, -7, -7, -7]);
    expect([...raw]).toEqual([1, 129, 257, 385]);
  });
});
