// OutputAliasing sees through distinct SharedArrayBuffer objects over one memory: a buffer that
// went through a worker and back is a new object, and an output over it that overlaps an input
// would silently give a wrong product.
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor } from '../../src/index.js';
import { expectCode } from '../helpers.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1 });
});
afterAll(async () => {
  await backend.close();
});

/** `buffer` sent to a worker and back: a different object over the same memory. */
async function roundTrip(buffer: SharedArrayBuffer): Promise<SharedArrayBuffer> {
  const worker = new Worker('const { parentPort } = require("node:worker_threads"); parentPort.once("message", (b) => parentPort.postMessage(b));', { eval: true });
  try {
    const back = new Promise<SharedArrayBuffer>((resolve) => worker.once('message', resolve));
    worker.postMessage(buffer);
    return await back;
  } finally {
    await worker.terminate();
  }
}

describe('same-memory aliasing', () => {
  it('an output over a round-tripped buffer that overlaps the lhs is OutputAliasing, the output untouched', async () => {
    const storage = new SharedArrayBuffer(8 * 8);
    const lhs = Tensor.fromDescriptor({ dtype: 'f64', shape: [2, 2], strides: [1, 2], offset: 0, buffer: storage });
    new Float64Array(storage).set([1, 2, 3, 4, 5, 6, 7, 8]);
    const again = await roundTrip(storage);
    expect(again).not.toBe(storage);
    const out = Tensor.fromDescriptor({ dtype: 'f64', shape: [2, 2], strides: [1, 2], offset: 2, buffer: again });
    const rhs = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);
    const before = new Float64Array(storage).slice();
    const e = await expectCode(backend.dotGeneralInto(out, lhs, rhs, { contracting: [[1], [0]] }), 'OutputAliasing', 'Validation');
    expect(e.detail.input).toBe('lhs');
    expect(new Float64Array(storage)).toEqual(before);
  });

  it('disjoint parts of one memory through two objects are accepted', async () => {
    const storage = new SharedArrayBuffer(8 * 8);
    new Float64Array(storage).set([1, 2, 3, 4, 0, 0, 0, 0]);
    const again = await roundTrip(storage);
    const lhs = Tensor.fromDescriptor({ dtype: 'f64', shape: [2, 2], strides: [1, 2], offset: 0, buffer: storage });
    const out = Tensor.fromDescriptor({ dtype: 'f64', shape: [2, 2], strides: [1, 2], offset: 4, buffer: again });
    await backend.dotGeneralInto(out, lhs, Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]), { contracting: [[1], [0]] });
    expect(Array.from(new Float64Array(storage))).toEqual([1, 2, 3, 4, 1, 2, 3, 4]);
  });
});
