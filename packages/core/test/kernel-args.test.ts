import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, KERNEL_ARGS_MAX_BUFFERS, KERNEL_ARGS_MAX_WORDS, isKernelArgs, kernelArgs } from '../src/index.js';
import { WorkerBufferTable } from '../src/runtime/workers/buffer-table.js';
import { ArgsArea } from '../src/runtime/workers/shared-fields.js';
import { expectCode, kernel } from './helpers.js';

interface Probe {
  words: number[];
  sizes: number[];
  same: boolean[];
  isView: boolean;
}
const probe = kernel<unknown, Probe>('packedProbe');

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1 });
});
afterAll(async () => {
  await backend.close();
});

describe('packed kernel arguments', () => {
  it('carry words and shared buffers to the worker without copies; a buffer crosses once and is then named by id', async () => {
    const a = new SharedArrayBuffer(16);
    const b = new SharedArrayBuffer(32);
    const first = await backend.install((ctx) => ctx.run(probe, kernelArgs(new Float64Array([1.5, -2, 2 ** 53]), [a, b])));
    expect(first).toEqual({ words: [1.5, -2, 2 ** 53], sizes: [16, 32], same: [false, false], isView: true });
    // The worker got the memory, not a copy.
    expect(new Int32Array(a)[0]).toBe(1);
    const second = await backend.install((ctx) => ctx.run(probe, kernelArgs(new Float64Array([7]), [a, b])));
    expect(second.same).toEqual([true, true]);
    expect(second.words).toEqual([7]);
    // Another buffer in the first position is a different object on the worker too.
    const c = new SharedArrayBuffer(8);
    const third = await backend.install((ctx) => ctx.run(probe, kernelArgs(new Float64Array([]), [c, b])));
    expect(third).toMatchObject({ sizes: [8, 32], same: [false, true], words: [] });
    expect(new Int32Array(b)[0]).toBe(3);
  });

  it('are validated when packed: a Float64Array of at most the limit, SharedArrayBuffers only', () => {
    // The worker's argument area holds exactly what packing allows.
    expect([ArgsArea.MAX_WORDS, ArgsArea.MAX_BUFFERS]).toEqual([KERNEL_ARGS_MAX_WORDS, KERNEL_ARGS_MAX_BUFFERS]);
    expect(ArgsArea.BYTES).toBe(ArgsArea.IDS_BYTE_OFFSET + 4 * ArgsArea.MAX_BUFFERS);
    expect(isKernelArgs(kernelArgs(new Float64Array(1), []))).toBe(true);
    expect(isKernelArgs({ words: new Float64Array(1), buffers: [] })).toBe(false);
    expectCode(() => kernelArgs([1, 2] as unknown as Float64Array, []), 'InvalidArgument');
    expectCode(() => kernelArgs(new Float64Array(KERNEL_ARGS_MAX_WORDS + 1), []), 'InvalidArgument');
    expectCode(() => kernelArgs(new Float64Array(1), Array.from({ length: KERNEL_ARGS_MAX_BUFFERS + 1 }, () => new SharedArrayBuffer(8))), 'InvalidArgument');
    expectCode(() => kernelArgs(new Float64Array(1), [new ArrayBuffer(8) as unknown as SharedArrayBuffer]), 'InvalidArgument');
  });
});

describe('the worker buffer table (main side)', () => {
  it('sends a buffer once, forgets collected ones with the next task, and stays within its capacity', () => {
    const table = new WorkerBufferTable(2);
    const ids = new Int32Array(8);
    const [a, b, c] = [new SharedArrayBuffer(8), new SharedArrayBuffer(8), new SharedArrayBuffer(8)];
    const u1 = table.prepare([a, b], ids);
    expect(u1?.register?.map(([, buf]) => buf)).toEqual([a, b]);
    const [ia, ib] = [ids[0]!, ids[1]!];
    expect(table.prepare([b, a], ids)).toBeUndefined();
    expect([ids[0], ids[1]]).toEqual([ib, ia]);
    // A third buffer exceeds the capacity: the oldest entry not named now is forgotten.
    const u3 = table.prepare([c, b], ids);
    expect(u3?.register?.map(([, buf]) => buf)).toEqual([c]);
    expect(u3?.forget).toEqual([ia]);
    expect(table.size).toBe(2);
    // A collected buffer is forgotten with the next task.
    table.collected(ib);
    expect(table.prepare([c], ids)).toEqual({ forget: [ib], register: undefined });
    table.close();
  });
});
