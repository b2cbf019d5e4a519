// Forged look-alikes are refused before anything runs: a "SharedArrayBuffer" by Symbol.toStringTag
// or prototype, a "Tensor" built with Object.create(Tensor.prototype) whose getters change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor, validateLayout } from '../../src/index.js';
import { expectCode, expectThrows } from '../helpers.js';

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1 });
});
afterAll(async () => {
  await backend.close();
});

const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
const dims = { contracting: [[1], [0]] as [number[], number[]] };

function forgedTensor(): Tensor {
  let reads = 0;
  return Object.create(Tensor.prototype, {
    dtype: { get: () => 'f64' },
    // honest for the first few reads (validation), then lying (the kernel's view)
    shape: { get: () => (reads++ < 4 ? [2, 2] : [4096, 4096]) },
    strides: { get: () => [1, 2] },
    offset: { get: () => 0 },
    buffer: { get: () => new SharedArrayBuffer(32) },
    placement: { get: () => ({}) },
    rank: { get: () => 2 },
    size: { get: () => 4 },
  }) as Tensor;
}

describe('forged objects', () => {
  it('a buffer that only claims to be a SharedArrayBuffer is not one', () => {
    const byTag = { [Symbol.toStringTag]: 'SharedArrayBuffer', byteLength: 64 };
    const byProto = Object.create(SharedArrayBuffer.prototype);
    for (const buffer of [byTag, byProto, new ArrayBuffer(64)]) {
      expectThrows(() => validateLayout({ dtype: 'f64', shape: [2], strides: [1], offset: 0, buffer } as never, 'test', 'x'), 'InvalidArgument');
      expectThrows(() => Tensor.fromDescriptor({ dtype: 'f64', shape: [2], strides: [1], offset: 0, buffer } as never), 'InvalidArgument');
    }
  });

  it('a tensor look-alike is not a Tensor anywhere', async () => {
    const fake = forgedTensor();
    expect(Tensor.isTensor(fake)).toBe(false);
    expect(Tensor.isTensor(a)).toBe(true);
    const before = backend.executionInfo().executorEntries.installs;
    await expectCode(backend.matmul(fake, a), 'InvalidArgument');
    await expectCode(backend.dotGeneral(a, fake, dims), 'InvalidArgument');
    await expectCode(backend.dotGeneralInto(fake, a, a, dims), 'InvalidArgument');
    await expectCode(backend.reshape(fake, [4]), 'InvalidArgument');
    expect(() => backend.reclaim(fake)).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    expect(backend.executionInfo().executorEntries.installs).toBe(before);
  });
});
