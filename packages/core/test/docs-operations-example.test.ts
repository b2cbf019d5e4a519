// The example at the top of docs/operations.md, as written there (kept in sync by hand).
import { expect, it } from 'vitest';
import { CpuBackend, Tensor, ops } from '../src/index.js';

it('docs/operations.md: the first example runs and gives the values its comments show', async () => {
  await using backend = await CpuBackend.create({ threads: 2, providers: [] });
  const o = ops(backend);
  const a = Tensor.fromArray('f64', [2, 3], [1, 2, 3, 4, 5, 6], { order: 'row' });
  const col = Tensor.fromArray('f64', [2], [10, 20]);

  const b = await o.add(a, col); // [[11, 12, 13], [24, 25, 26]]
  const s = await o.sum(b, { axes: [1] }); // [36, 75]
  const m = await o.argmax(a, { axes: [1], keepDims: true }); // i64 [[2], [2]]
  const t = await o.contiguous(a.transpose(), { order: 'row' });
  await backend.withBackendSession(async (session) => {
    const so = ops(session); // same operations, on the session's one entry
    await so.mul(a, a, { out: Tensor.zeros('f64', [2, 3]) });
  });
  expect(b.toArray({ order: 'row' })).toEqual([11, 12, 13, 24, 25, 26]);
  expect(s.toArray()).toEqual([36, 75]);
  expect(m.shape).toEqual([2, 1]);
  expect(m.toArray()).toEqual([2n, 2n]);
  expect(t.toArray({ order: 'row' })).toEqual([1, 4, 2, 5, 3, 6]);
});
