// A loop that drops large outputs: once its pool gets storage back through collection, an
// operation whose pool runs low gives the event loop a turn, so that collected storage comes home
// (its finalizer runs there) instead of a fresh allocation. Collection is forced (--expose-gc);
// nothing here depends on when V8 would collect on its own.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CpuBackend, Tensor } from '../src/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function collectUntil(done: () => boolean): Promise<boolean> {
  for (let i = 0; i < 50 && !done(); i++) {
    gc();
    await turn();
  }
  return done();
}

describe('dropped large outputs come home before the pool allocates', () => {
  it('a low pool takes one turn: the collected storage is lent again, nothing is allocated', async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      // A 256×128 f64 output: 256 KiB, the size from which a turn is worth it.
      const x = Tensor.fromArray('f64', [256, 1], Array.from({ length: 256 }, (_, i) => i % 5));
      const y = Tensor.fromArray('f64', [1, 128], Array.from({ length: 128 }, (_, i) => i % 3));
      const product = () => b.matmul(x, y);
      // 1. A first output comes back through collection.
      let first: Tensor | undefined = await product();
      await turn(); // its storage is watched for collection from here
      expect(first.shape).toEqual([256, 128]);
      first = undefined;
      expect(await collectUntil(() => b.bufferPoolStats().returnedByCollection >= 1)).toBe(true);
      // 2. One output stays alive (it takes that storage); another is dropped and collected, and its
      //    finalizer has not run yet when the next operation starts.
      const kept = await product();
      let dropped: Tensor | undefined = await product();
      await turn();
      expect(dropped.shape).toEqual([256, 128]);
      dropped = undefined;
      await turn();
      const before = b.bufferPoolStats();
      gc();
      expect(b.bufferPoolStats().returnedByCollection).toBe(before.returnedByCollection); // not home yet
      const next = await product();
      const after = b.bufferPoolStats();
      expect(after.returnedByCollection).toBe(before.returnedByCollection + 1);
      expect(after.misses).toBe(before.misses);
      expect(after.hits).toBe(before.hits + 1);
      expect(next.toArray()).toEqual(kept.toArray());
    } finally {
      await b.close();
    }
  });
});
