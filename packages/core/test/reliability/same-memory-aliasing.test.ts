// OutputAliasing sees through distinct SharedArrayBuffer objects over one memory: a buffer that
// went through a worker and back is a new object, and an output over it that overlaps an input
// would silently give a wrong product.
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor, ops } from '../../src/index.js';
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

// The same through the tensor-primitive path (tensor/views-overlap.ts, options.out and copyInto)
// and grouped GEMM (validate-grouped-gemm.ts): each compares memory addresses, not buffer objects (#39).
describe('same-memory aliasing in tensor primitives and grouped GEMM', () => {
  /** Storage of 8 f64 holding 1…8, an lhs over its first 4, and the same memory as another object. */
  async function shared(): Promise<{ storage: SharedArrayBuffer; again: SharedArrayBuffer; lhs: Tensor<'f64'>; view: (buffer: SharedArrayBuffer, offset: number) => Tensor<'f64'> }> {
    const storage = new SharedArrayBuffer(8 * 8);
    new Float64Array(storage).set([1, 2, 3, 4, 5, 6, 7, 8]);
    const view = (buffer: SharedArrayBuffer, offset: number) => Tensor.fromDescriptor({ dtype: 'f64', shape: [2, 2], strides: [1, 2], offset, buffer });
    const again = await roundTrip(storage);
    expect(again).not.toBe(storage);
    return { storage, again, lhs: view(storage, 0), view };
  }

  it('options.out of a binary and a unary primitive, and copyInto\'s out, over a round-tripped buffer overlapping an input: OutputAliasing, the storage untouched', async () => {
    const { storage, again, lhs, view } = await shared();
    const o = ops(backend);
    const rhs = Tensor.fromArray('f64', [2, 2], [10, 20, 30, 40]);
    const before = new Float64Array(storage).slice();
    const out = view(again, 2); // elements 2…5: overlaps lhs's 0…3
    expect((await expectCode(o.add(lhs, rhs, { out }), 'OutputAliasing', 'Validation')).detail.input).toBe('lhs');
    expect((await expectCode(o.add(rhs, lhs, { out }), 'OutputAliasing', 'Validation')).detail.input).toBe('rhs');
    expect((await expectCode(o.neg(lhs, { out }), 'OutputAliasing', 'Validation')).detail.input).toBe('tensor');
    expect((await expectCode(o.copyInto(out, lhs), 'OutputAliasing', 'Validation')).detail.input).toBe('src');
    expect(new Float64Array(storage)).toEqual(before);
    // Two tensors over one buffer object: the same refusal.
    await expectCode(o.add(lhs, rhs, { out: view(storage, 2) }), 'OutputAliasing', 'Validation');
    expect(new Float64Array(storage)).toEqual(before);
  });

  it('a disjoint part of the same memory through the other object is accepted by the primitives (control)', async () => {
    const { storage, again, lhs, view } = await shared();
    const o = ops(backend);
    await o.add(lhs, Tensor.fromArray('f64', [2, 2], [10, 20, 30, 40]), { out: view(again, 4) });
    expect(Array.from(new Float64Array(storage))).toEqual([1, 2, 3, 4, 11, 22, 33, 44]);
    await o.copyInto(view(again, 4), lhs);
    expect(Array.from(new Float64Array(storage))).toEqual([1, 2, 3, 4, 1, 2, 3, 4]);
  });

  it('grouped GEMM: a job\'s output over a round-tripped buffer overlapping an input of any job, or another job\'s output, is OutputAliasing before any job runs', async () => {
    const { storage, again, lhs, view } = await shared();
    const eye = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);
    const free = () => Tensor.zeros('f64', [2, 2]);
    const before = new Float64Array(storage).slice();
    const freeOut = free();
    // Its own lhs.
    let e = await expectCode(backend.gemmGrouped([{ out: view(again, 2), lhs, rhs: eye }]), 'OutputAliasing', 'Validation');
    expect(e.detail).toMatchObject({ job: 0, input: 'jobs[0].lhs' });
    // Another job's rhs (the first job's output is fresh and stays untouched).
    e = await expectCode(backend.gemmGrouped([{ out: freeOut, lhs: eye, rhs: lhs }, { out: view(again, 3), lhs: eye, rhs: eye }]), 'OutputAliasing', 'Validation');
    expect(e.detail).toMatchObject({ job: 1, input: 'jobs[0].rhs' });
    expect(freeOut.toArray()).toEqual([0, 0, 0, 0]);
    // Two outputs over one memory through two objects.
    e = await expectCode(backend.gemmGrouped([{ out: view(storage, 4), lhs: eye, rhs: eye }, { out: view(again, 2), lhs: eye, rhs: eye }]), 'OutputAliasing', 'Validation');
    expect(e.detail).toMatchObject({ jobs: [0, 1] });
    expect(new Float64Array(storage)).toEqual(before);
  });

  it('grouped GEMM over disjoint parts of one memory through two objects runs (control)', async () => {
    const { storage, again, lhs, view } = await shared();
    const eye = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);
    await backend.gemmGrouped([{ out: view(again, 4), lhs, rhs: eye, alpha: 2 }]);
    expect(Array.from(new Float64Array(storage))).toEqual([1, 2, 3, 4, 2, 4, 6, 8]);
  });
});
