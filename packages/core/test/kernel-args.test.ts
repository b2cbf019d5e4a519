import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CpuBackend, KERNEL_ARGS_MAX_BUFFERS, KERNEL_ARGS_MAX_WORDS, isKernelArgs, kernelArgs, kernelWords } from '../src/index.js';
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

  it('are validated when packed: a Float64Array of at most the limit, SharedArrayBuffers only', async () => {
    // The worker's argument area holds exactly what packing allows.
    expect([ArgsArea.MAX_WORDS, ArgsArea.MAX_BUFFERS]).toEqual([KERNEL_ARGS_MAX_WORDS, KERNEL_ARGS_MAX_BUFFERS]);
    expect(ArgsArea.BYTES).toBe(ArgsArea.IDS_BYTE_OFFSET + 4 * ArgsArea.MAX_BUFFERS);
    expect(isKernelArgs(kernelArgs(new Float64Array(1), []))).toBe(true);
    expect(isKernelArgs({ words: new Float64Array(1), buffers: [] })).toBe(false);
    await expectCode(() => kernelArgs([1, 2] as unknown as Float64Array, []), 'InvalidArgument');
    await expectCode(() => kernelArgs(new Float64Array(KERNEL_ARGS_MAX_WORDS + 1), []), 'InvalidArgument');
    await expectCode(() => kernelArgs(new Float64Array(1), Array.from({ length: KERNEL_ARGS_MAX_BUFFERS + 1 }, () => new SharedArrayBuffer(8))), 'InvalidArgument');
    await expectCode(() => kernelArgs(new Float64Array(1), [new ArrayBuffer(8) as unknown as SharedArrayBuffer]), 'InvalidArgument');
  });
});

describe('kernelWords', () => {
  it('hands out zeroed views that never overlap, across slab boundaries', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: KERNEL_ARGS_MAX_WORDS }), { minLength: 1, maxLength: 80 }), (lengths) => {
        const views = lengths.map((length, i) => {
          const w = kernelWords(length);
          expect(w).toBeInstanceOf(Float64Array);
          expect(w.length).toBe(length);
          expect(w.every((x) => x === 0)).toBe(true);
          w.fill(i + 1);
          return w;
        });
        // Every view still holds what was written into it: no later one reused its words.
        views.forEach((w, i) => expect(w.every((x) => x === i + 1)).toBe(true));
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a length that is not an integer in [0, KERNEL_ARGS_MAX_WORDS]', async () => {
    for (const bad of [-1, 1.5, KERNEL_ARGS_MAX_WORDS + 1, Number.NaN, '3' as unknown as number]) await expectCode(() => kernelWords(bad), 'InvalidArgument');
  });

  it('packs a descriptor a worker reads like any Float64Array, even when it waits for a busy worker', async () => {
    const a = new SharedArrayBuffer(16);
    const results = await backend.install((ctx) =>
      Promise.all([1, 2, 3].map((x) => {
        const words = kernelWords(2);
        words.set([x, -x]);
        return ctx.run(probe, kernelArgs(words, [a]));
      })),
    );
    expect(results.map((r) => r.words)).toEqual([[1, -1], [2, -2], [3, -3]]);
  });
});

describe('the worker buffer table (main side)', () => {
  it('sends a buffer once, forgets collected ones with the next task, and stays within its capacity', () => {
    const table = new WorkerBufferTable({ capacity: 2 });
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
    table.forget(ib);
    expect(table.prepare([c], ids)).toEqual({ forget: [ib], register: undefined });
    table.close();
  });

  it('is bounded in bytes: past its limit the oldest entries not named by the task are forgotten (#35)', () => {
    const table = new WorkerBufferTable({ limitBytes: 100 });
    const ids = new Int32Array(8);
    const [a, b, c] = [new SharedArrayBuffer(40), new SharedArrayBuffer(40), new SharedArrayBuffer(40)];
    table.prepare([a, b], ids);
    const [ia] = [ids[0]!];
    expect(table.stats()).toMatchObject({ buffers: 2, bytes: 80, limitBytes: 100 });
    // c makes 120 bytes: a, the oldest not named now, goes.
    expect(table.prepare([c, b], ids)?.forget).toEqual([ia]);
    expect(table.stats()).toMatchObject({ buffers: 2, bytes: 80 });
    // A buffer larger than the limit is kept for the task that names it, and forgotten by the next.
    const big = new SharedArrayBuffer(200);
    expect(table.prepare([big], ids)?.forget?.length).toBe(2);
    const iBig = ids[0]!;
    expect(table.stats()).toMatchObject({ buffers: 1, bytes: 200 });
    expect(table.prepare([a], ids)?.forget).toEqual([iBig]);
    expect(ids[0]).toBe(ia); // the same id as before: ids belong to buffers, not to tables
    expect(table.stats()).toMatchObject({ buffers: 1, bytes: 40 });
    table.close();
  });
});
