// Outputs from the engine's buffer pool (R108; since #35 through core's runExtension): every linalg output
// and the info words come from the pool, go back on dispose and on failure, are never handed out
// twice while alive, and — unzeroed for kernels that overwrite everything — are correct even when
// the pool holds garbage of exactly the sizes the outputs take.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, type DType, EXECUTED, Tensor, Unsupported, defineExtensionKey, runExtension } from '@tenferro/core';
import { createBlasProvider, status as blasStatus } from '@tenferro/provider-blas';
import { type CpuLinalgKernels, type Linalg, linalg, linalgKernelsKey } from '../src/index.js';
import { kernelRecorder } from './helpers.js';

const WELL_BEHAVED = Object.freeze({ threadCount: 'perCallUpperBound', placement: 'engineWorkers', workerLocalSequential: true, acceptsSequential: true, acceptsOuter: false, acceptsInner: true } as const);

const haveBlas = blasStatus().available;
let faer: CpuBackend;
let blas: CpuBackend | undefined;
beforeAll(async () => {
  faer = await CpuBackend.create({ threads: 1, providers: [] });
  if (haveBlas) blas = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
});
afterAll(async () => {
  await faer.close();
  await blas?.close();
});

const SPD = (n: number, batch: number[] = []): Tensor<'f64'> => {
  const size = n * n, count = batch.reduce((p, e) => p * e, 1), d = new Float64Array(size * count);
  for (let b = 0; b < count; b++) for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) d[b * size + i + j * n] = (i === j ? n + b : 0) + 1 / (1 + Math.abs(i - j));
  return Tensor.from(d, [n, n, ...batch]);
};

/** Put `count` buffers of every length 1..max elements of each dtype, all bytes 0xff (NaN, −1), into the pool. */
const BYTES: Partial<Record<DType, number>> = { f32: 4, f64: 8, c64: 8, c128: 16, i32: 4 };

async function poison(backend: CpuBackend, dtypes: readonly DType[], max: number, count = 3): Promise<void> {
  // Fresh pool storage through core's extension door (#35), filled with garbage, then given back.
  const outputs: [DType, number[]][] = [];
  for (const dtype of dtypes) for (let len = 1; len <= max; len++) for (let c = 0; c < count; c++) outputs.push([dtype, [len]]);
  const { outputs: held } = await runExtension(backend, defineExtensionKey('test.poison'), { op: 'test.poison', inputs: [], outputs }, (_ctx, { outputs: fresh }) => {
    // Each output's own bytes: a small output's buffer is a slab shared with other storage (core's storage-slab.ts).
    for (const d of fresh) new Uint8Array(d.buffer, d.offset * BYTES[d.dtype]!, d.shape.reduce((p, e) => p * e, 1) * BYTES[d.dtype]!).fill(0xff);
  });
  for (const t of held) t.dispose();
}

const values = (x: unknown): unknown => (Tensor.isTensor(x) ? x.toArray() : x === undefined ? undefined : Object.fromEntries(Object.entries(x as Record<string, unknown>).map(([k, v]) => [k, values(v)])));
const disposeAll = (x: unknown): void => {
  if (Tensor.isTensor(x)) x.dispose();
  else if (x !== undefined && x !== null && typeof x === 'object') for (const v of Object.values(x as Record<string, unknown>)) disposeAll(v);
};

/** Every primitive, on real and complex, square, rectangular, batched and empty inputs. */
function calls(): [string, (la: Linalg) => Promise<unknown>][] {
  const sq = SPD(4, [2]);
  const c = Tensor.fromArray('c128', [3, 3], [4, 1, 1, -1, 0, 0, 1, 1, 5, 0, 1, 2, 0, 0, 1, -2, 6, 0]);
  const rect = Tensor.fromArray('f64', [4, 3], [1, 2, 3, 4, 2, 1, 0, 5, 7, 1, 3, 2]);
  const wide = rect.transpose();
  const empty = Tensor.zeros('f64', [3, 0]);
  const rhs = Tensor.fromArray('f64', [4, 2, 2], [1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 0, 1, 2, 2, 3, 3]);
  return [
    ['cholesky', (la) => la.cholesky(sq)],
    ['cholesky upper c128', (la) => la.cholesky(c, { upper: true })],
    ['solveTriangular', (la) => la.solveTriangular(sq, rhs, { upper: true })],
    ['solveTriangular right', (la) => la.solveTriangular(sq, Tensor.fromArray('f64', [2, 4, 2], [1, 2, 3, 4, 5, 6, 7, 8, 1, 0, 0, 1, 2, 2, 3, 3]), { upper: false, left: false })],
    ['luFactor', (la) => la.luFactor(sq)],
    ['luFactor rect', (la) => la.luFactor(rect)],
    ['luFactor wide c128', (la) => la.luFactor(c.slice([0, 2]))],
    ['lu', (la) => la.lu(rect)],
    ['lu wide', (la) => la.lu(wide)],
    ['lu empty', (la) => la.lu(empty)],
    ['luFullPivot', (la) => la.luFullPivot(c)],
    ['solve', (la) => la.solve(sq, rhs)],
    ['qr', (la) => la.qr(rect)],
    ['qr complete', (la) => la.qr(rect, { mode: 'complete' })],
    ['qr complete wide c128', (la) => la.qr(c.slice([0, 2]), { mode: 'complete' })],
    ['qr r', (la) => la.qr(wide, { mode: 'r' })],
    ['qr complete empty', (la) => la.qr(empty, { mode: 'complete' })],
    ['svd', (la) => la.svd(rect)],
    ['svd thin', (la) => la.svd(wide, { fullMatrices: false })],
    ['svd c128', (la) => la.svd(c)],
    ['svd empty', (la) => la.svd(empty)],
    ['svdvals', (la) => la.svdvals(sq)],
    ['eigh', (la) => la.eigh(sq)],
    ['eigh upper c128', (la) => la.eigh(c, { uplo: 'U' })],
    ['eigvalsh', (la) => la.eigvalsh(sq)],
    ['eig', (la) => la.eig(rect.slice([0, 3]))],
    ['eig c128', (la) => la.eig(c)],
    ['eigvals', (la) => la.eigvals(sq)],
    ['inv', (la) => la.inv(sq)],
  ];
}

describe('linalg outputs from the buffer pool', () => {
  it('come back to the pool on dispose: a loop allocates nothing after its first call', async () => {
    const la = linalg(faer);
    const a = SPD(8);
    const s0 = faer.bufferPoolStats();
    const first = await la.luFactor(a);
    const s1 = faer.bufferPoolStats();
    // LU, pivots and the info words came from the pool; the info words (the operation's scratch)
    // are back already, without a dispose: only LU and pivots are out, as the caller's tensors.
    expect(s1.hits + s1.misses - s0.hits - s0.misses).toBe(3);
    expect(s1.returnedByDispose - s0.returnedByDispose).toBe(0);
    expect(s1.outstanding).toBe(0);
    first.lu.dispose();
    first.pivots.dispose();
    expect(faer.bufferPoolStats().returnedByDispose - s1.returnedByDispose).toBe(2);
    for (let i = 0; i < 5; i++) {
      const { lu, pivots } = await la.luFactor(a);
      lu.dispose();
      pivots.dispose();
    }
    const s2 = faer.bufferPoolStats();
    expect(s2.hits - s1.hits).toBe(15);
    expect(s2.misses - s1.misses).toBe(0);
  });

  it('a failed call (NotPositiveDefinite) returns its outputs to the pool', async () => {
    const la = linalg(faer);
    const bad = Tensor.fromArray('f64', [3, 3, 2], [4, 0, 0, 0, 4, 0, 0, 0, 4, 1, 2, 3, 2, 1, 0, 3, 0, 1]);
    const s0 = faer.bufferPoolStats();
    const e = await la.cholesky(bad).then(() => undefined, (x: unknown) => x);
    expect((e as { code?: string }).code).toBe('NotPositiveDefinite');
    expect((e as { detail?: { batchIndex?: number } }).detail?.batchIndex).toBe(1);
    const s1 = faer.bufferPoolStats();
    // L and the info words: both taken, both back (never made tensors: core gives the loans back, #35)
    expect(s1.hits + s1.misses - s0.hits - s0.misses).toBe(2);
    expect(s1.outstanding).toBe(s0.outstanding);
    // the next call of the same shape reuses them
    const l = await la.cholesky(SPD(3, [2]));
    const s2 = faer.bufferPoolStats();
    expect(s2.misses - s1.misses).toBe(0);
    l.dispose();
  });

  it('an aborted call returns its outputs too', async () => {
    const la = linalg(faer);
    const s0 = faer.bufferPoolStats();
    const ac = new AbortController();
    ac.abort();
    await expect(la.qr(SPD(4), { signal: ac.signal })).rejects.toMatchObject({ code: 'AdmissionAborted' });
    const s1 = faer.bufferPoolStats();
    expect(s1.hits + s1.misses - s0.hits - s0.misses).toBe(s1.returnedByDispose - s0.returnedByDispose);
  });

  it('a disposed output is handed out again, never one still alive', async () => {
    const la = linalg(faer);
    const a = SPD(6);
    const live = await Promise.all([la.cholesky(a), la.cholesky(a), la.cholesky(a)]);
    const expected = live[0]!.toArray();
    // Where each output's data is: small outputs share slabs (core's storage-slab.ts), so a buffer and an offset.
    const places = live.map((t) => ({ buffer: t.buffer, offset: t.offset }));
    const same = (p: (typeof places)[number], q: (typeof places)[number]) => p.buffer === q.buffer && p.offset === q.offset;
    expect(places.filter((p, i) => places.some((q, j) => j < i && same(p, q)))).toEqual([]);
    const gone = places[1]!;
    live[1]!.dispose();
    const next = await la.cholesky(a, { upper: true });
    expect(same({ buffer: next.buffer, offset: next.offset }, gone)).toBe(true);
    // the live outputs are untouched by the call that reused the disposed one's storage
    expect(live[0]!.toArray()).toEqual(expected);
    expect(live[2]!.toArray()).toEqual(expected);
    for (const t of [live[0]!, live[2]!, next]) t.dispose();
  });

  it.each([['faer'], ['blas']] as const)('%s: outputs are right when the pool holds garbage of exactly their sizes', async (kind) => {
    const backend = kind === 'faer' ? faer : blas;
    if (backend === undefined) return;
    const fresh = kind === 'faer' ? await CpuBackend.create({ threads: 1, providers: [] }) : await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
    try {
      for (const [name, call] of calls()) {
        const want = await call(linalg(fresh));
        await poison(backend, ['f64', 'c128', 'i32'], 40);
        const la = linalg(backend);
        const misses = backend.bufferPoolStats().misses;
        const rec = kernelRecorder();
        const got = await call(la);
        const ran = rec.take();
        rec.stop();
        // every output (and the info words) was one of the garbage buffers
        expect(backend.bufferPoolStats().misses - misses, name).toBe(0);
        expect(values(got), name).toEqual(values(want));
        if (kind === 'blas') expect(ran.every((r) => r.kernel === 'extension'), name).toBe(true);
        disposeAll(got);
        disposeAll(want);
      }
    } finally {
      await fresh.close();
    }
  });

  it('an extension that does not declare overwritesOutputs + declinesBeforeWriting gets zeroed outputs; one that does gets them as they are', async () => {
    const seen: boolean[] = [];
    const probe = (declared: boolean): CpuLinalgKernels => ({
      name: 'probe',
      executionCapabilities: () => WELL_BEHAVED,
      ...(declared ? { overwritesOutputs: true, declinesBeforeWriting: true } : {}),
      luFactor: (_ctx, r) => {
        seen.push(new Uint8Array(r.out[0]!.buffer, r.out[0]!.offset * 8, 16 * 8).every((b) => b === 0));
        return Unsupported.dtype(r.dtype);
      },
    });
    for (const declared of [false, true]) {
      const b = await CpuBackend.create({ threads: 1, providers: [{ kind: 'faer', name: 'probe', extensions: [[linalgKernelsKey(), probe(declared)]] }] });
      try {
        await poison(b, ['f64'], 16, 1);
        const la = linalg(b);
        const rec = kernelRecorder();
        const { lu, pivots } = await la.luFactor(SPD(4));
        expect(rec.take()).toEqual([{ op: 'luFactor', kernel: 'builtin', declined: 'dtype: f64' }]);
        rec.stop();
        expect(lu.toArray().every((v) => Number.isFinite(v))).toBe(true);
        lu.dispose();
        pivots.dispose();
      } finally {
        await b.close();
      }
    }
    expect(seen).toEqual([true, false]);
  });

  it('an extension declaring declinesBeforeWriting is trusted; one that does not is checked (R64)', async () => {
    const liar = (declared: boolean): CpuLinalgKernels => ({
      name: 'liar',
      executionCapabilities: () => WELL_BEHAVED,
      ...(declared ? { declinesBeforeWriting: true } : {}),
      cholesky: (_ctx, r) => {
        new Float64Array(r.out[0]!.buffer, r.out[0]!.offset * 8, 4).fill(9);
        return Unsupported.dtype(r.dtype);
      },
      solve: () => EXECUTED,
    });
    for (const declared of [false, true]) {
      const b = await CpuBackend.create({ threads: 1, providers: [{ kind: 'faer', name: 'liar', extensions: [[linalgKernelsKey(), liar(declared)]] }] });
      try {
        const run = linalg(b).cholesky(SPD(2));
        if (declared) {
          // trusted: the built-in then overwrites whatever it wrote
          const l = await run;
          expect(l.toArray()[0]).toBeCloseTo(Math.sqrt(3), 14);
          l.dispose();
        } else {
          await expect(run).rejects.toMatchObject({ code: 'ProviderContractViolation' });
        }
      } finally {
        await b.close();
      }
    }
  });
});
