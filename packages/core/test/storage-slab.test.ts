import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, Tensor } from '../src/index.js';
import { tensorInternals } from '../src/tensor/tensor.js';
import { SLAB_BYTES, WIDE_SLAB_BYTES, blockBytes, slabBytes } from '../src/buffer/storage-slab.js';
import { paddedBytes } from '../src/buffer/storage-alignment.js';
import { packedProviders } from './support/packed-providers.js';

// Small fresh outputs are carved from shared 2 MiB slabs (#38, `buffer/storage-slab.ts`): the
// engine worker learns a slab once, not every output's buffer.

let backend: CpuBackend;
beforeAll(async () => {
  // Kernels that take packed arguments, as native providers' do: their operands cross through the
  // workers' buffer tables (core's reference kernels send structured-clone payloads instead).
  backend = await CpuBackend.create({ threads: 1, providers: [packedProviders()] });
});
afterAll(async () => {
  await backend.close();
});

/** An n×n f64 matrix whose entries depend on `seed`. */
const matrix = (n: number, seed: number) => Tensor.fromArray('f64', [n, n], Array.from({ length: n * n }, (_, i) => ((i * 7 + seed * 13) % 11) - 5));
const identity = (n: number) => Tensor.fromArray('f64', [n, n], Array.from({ length: n * n }, (_, i) => (i % (n + 1) === 0 ? 1 : 0)));
const tableBuffers = () => backend.executionInfo().workers.reduce((sum, w) => sum + w.bufferTable.buffers, 0);
const tableBytes = () => backend.executionInfo().workers.reduce((sum, w) => sum + w.bufferTable.bytes, 0);

describe('small outputs carved from slabs', () => {
  it('a loop of fresh small outputs sends its worker one buffer per slab, not one per output', async () => {
    const a = matrix(32, 1);
    (await backend.matmul(a, a)).dispose(); // the worker knows `a`, and the slab of that first output
    const before = tableBuffers();
    const beforeBytes = tableBytes();
    const kept: Tensor[] = [];
    const calls = 300;
    for (let i = 0; i < calls; i++) kept.push(await backend.matmul(a, a)); // kept: every output is fresh storage
    const perSlab = Math.floor(SLAB_BYTES / blockBytes(paddedBytes(32 * 32 * 8)));
    const slabs = new Set(kept.map((t) => tensorInternals.buffer(t)));
    expect(slabs.size).toBe(Math.ceil(calls / perSlab));
    // the worker learned each slab once: the one it knew, and those made since
    const learned = tableBuffers() - before;
    expect(learned).toBe(slabs.size - 1);
    // The table's byte bound counts a slab as the 2 MiB it holds, not the address space around it
    // that places it on a huge page: what a dropping loop keeps in circulation stays in the table.
    expect(tableBytes() - beforeBytes).toBe(learned * SLAB_BYTES);
    for (const t of kept) t.dispose();
    a.dispose();
  });

  it('outputs from 256 KiB to just below 2 MiB share 8 MiB slabs', async () => {
    const a = matrix(256, 2);
    const kept: Tensor[] = [];
    for (let i = 0; i < 20; i++) kept.push(await backend.matmul(a, a)); // 512 KiB each
    const slabs = [...new Set(kept.map((t) => tensorInternals.buffer(t)))];
    expect(slabs.map((b) => slabBytes(b))).toEqual(slabs.map(() => WIDE_SLAB_BYTES));
    expect(slabs.length).toBeLessThanOrEqual(Math.ceil(20 / Math.floor(WIDE_SLAB_BYTES / blockBytes(paddedBytes(256 * 256 * 8)))) + 1);
    for (const t of kept) t.dispose();
    a.dispose();
  });

  it('outputs sharing a slab keep their own values while others are disposed and their blocks lent again', async () => {
    const n = 24;
    const eye = identity(n);
    const inputs = Array.from({ length: 60 }, (_, i) => matrix(n, i));
    const outputs = await Promise.all(inputs.map((x) => backend.matmul(x, eye)));
    expect(new Set(outputs.map((t) => tensorInternals.buffer(t))).size).toBeLessThan(outputs.length);
    // dispose every other output, and fill the freed blocks with other results
    for (let i = 0; i < outputs.length; i += 2) outputs[i]!.dispose();
    const refills = await Promise.all(inputs.filter((_, i) => i % 2 === 0).map((x) => backend.matmul(x, x)));
    for (let i = 1; i < outputs.length; i += 2) expect(outputs[i]!.toArray()).toEqual(inputs[i]!.toArray());
    for (let k = 0; k < refills.length; k++) {
      const x = inputs[2 * k]!.toArray() as number[];
      const got = refills[k]!.toArray() as number[];
      // column-major: (x·x)[r, c] = Σ_j x[r, j] · x[j, c]
      for (const [r, c] of [[0, 0], [n - 1, 3], [5, n - 1]] as const) {
        let sum = 0;
        for (let j = 0; j < n; j++) sum += x[r + j * n]! * x[j + c * n]!;
        expect(got[r + c * n]).toBe(sum);
      }
    }
    for (const t of [...outputs.filter((_, i) => i % 2 === 1), ...refills, ...inputs, eye]) t.dispose();
  });

  it("an output's buffer is the slab: its data is what offset and strides address there", async () => {
    const x = matrix(8, 3);
    const eye = identity(8);
    const out = await backend.matmul(x, eye);
    const view = new Float64Array(out.buffer, out.offset * 8, out.size);
    expect(Array.from(view)).toEqual(x.toArray());
    expect(out.buffer.byteLength).toBeGreaterThanOrEqual(SLAB_BYTES);
    for (const t of [out, x, eye]) t.dispose();
  });
});
