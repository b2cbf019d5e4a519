// Abort polling: the native GEMM polls the execution's abort word (core's ctx.abortWord) at its
// block boundaries and stops with the status Aborted. None of these tests times anything: the
// GEMMs would run for days (K = 2^40 through broadcast operands); each waits, as a latch, until
// the kernel has started writing its output, then aborts or closes, and checks that the kernel
// itself reported Aborted and that the operation settled with the contract's code.
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { ABORT_SIGNALLED, CpuBackend, type CpuGemmProvider, Tensor, TenferroError } from '@tenferro/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createFaerProvider } from '../src/index.js';
import { DESC, GemmStatus } from '../src/native/binding.js';
import { binding } from './helpers.js';

const K = 2 ** 40; // 64 x 64 x 2^40 multiply-adds: days, unless the kernel stops early
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A 64 x K by K x 64 product of broadcast operands (one element of storage each) into a NaN-filled output. */
function hugeK() {
  const one = new SharedArrayBuffer(8);
  new Float64Array(one)[0] = 1;
  const a = Tensor.fromDescriptor({ dtype: 'f64', shape: [64, K], strides: [0, 0], offset: 0, buffer: one });
  const b = Tensor.fromDescriptor({ dtype: 'f64', shape: [K, 64], strides: [0, 0], offset: 0, buffer: one });
  const out = Tensor.zeros('f64', [64, 64]);
  const c = new Float64Array(out.buffer);
  c.fill(Number.NaN);
  return { a, b, out, c };
}

/** Resolves once some element of `c` is no longer NaN: the kernel is running (a latch on the output, not a timer). */
async function started(c: Float64Array, settled: () => boolean): Promise<void> {
  while (c.every(Number.isNaN) && !settled()) await tick();
}

/** The faer provider behind a wrapper that records what faer's gemm threw (the kernel's error, through the real context). */
async function instrumented() {
  const base = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [createFaerProvider()] });
  const faer = base.providerBundle().gemm;
  const seen: { errors: unknown[]; abortWord?: Int32Array } = { errors: [] };
  const wrapper: CpuGemmProvider = {
    name: 'recording wrapper of the faer provider',
    executionCapabilities: () => faer.executionCapabilities(),
    declaredSupport: () => faer.declaredSupport!(),
    async gemm(ctx, request) {
      seen.abortWord = ctx.abortWord;
      try {
        return await faer.gemm(ctx, request);
      } catch (error) {
        seen.errors.push(error);
        throw error;
      }
    },
  };
  const backend = base.withProviderBundle(base.providerBundle().toBuilder().gemmProvider(wrapper).build());
  return { backend, seen };
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('the native GEMM polls its abort word (addon called directly)', () => {
  it('a word raised before the call: Aborted at once, nothing written', () => {
    const b = binding();
    const { desc, a, bb, c } = nativeCase();
    const word = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(word, 0, ABORT_SIGNALLED);
    expect(b.gemm(desc, a, bb, c, word)).toBe(GemmStatus.Aborted);
    expect(c.every(Number.isNaN)).toBe(true);
    // Without a word, or with a word of 0, the same (small) descriptor runs.
    const small = nativeCase(64);
    expect(b.gemm(small.desc, small.a, small.bb, small.c, new Int32Array(new SharedArrayBuffer(4)))).toBe(GemmStatus.Ok);
    expect(small.c[0]).toBe(64);
  });

  it('a word that is not an Int32Array of at least one element is BadArguments', () => {
    const b = binding();
    const { desc, a, bb, c } = nativeCase(64);
    for (const bad of [new Int32Array(0), new Uint32Array(1), new Float64Array(1), 0, null, {}]) {
      expect(b.gemm(desc, a, bb, c, bad as Int32Array)).toBe(GemmStatus.BadArguments);
    }
    expect(b.gemm(desc, a, bb, c, undefined)).toBe(GemmStatus.Ok);
  });

  it('a word raised by another thread while the kernel runs on a worker stops it: Aborted', async () => {
    const word = new Int32Array(new SharedArrayBuffer(4));
    const cBuffer = new SharedArrayBuffer(8 * 64 * 64);
    const c = new Float64Array(cBuffer).fill(Number.NaN);
    const source = `
      import { parentPort, workerData } from 'node:worker_threads';
      const { loadFaer } = await import(workerData.load);
      const b = loadFaer().binding;
      const one = new Float64Array(new SharedArrayBuffer(8)); one[0] = 1;
      const desc = new Float64Array(workerData.desc);
      parentPort.postMessage(b.gemm(desc, one, one, new Float64Array(workerData.c), new Int32Array(workerData.word)));`;
    const worker = new Worker(source, {
      eval: true,
      workerData: { load: pathToFileURL(new URL('../dist/native/load.js', import.meta.url).pathname).href, desc: [...nativeCase(K).desc], c: cBuffer, word: word.buffer },
    });
    cleanup = async () => void (await worker.terminate());
    let status: number | undefined;
    const done = new Promise<number>((resolve, reject) => {
      worker.once('message', (s: number) => resolve((status = s)));
      worker.once('error', reject);
    });
    await started(c, () => status !== undefined);
    expect(status).toBeUndefined(); // still running: a K = 2^40 GEMM does not finish on its own
    Atomics.store(word, 0, ABORT_SIGNALLED);
    expect(await done).toBe(GemmStatus.Aborted);
  });
});

describe('through CpuBackend (kind faer, 2 threads)', () => {
  it('an aborted long GEMM settles with ExecutionAborted, and the kernel reported Aborted', async () => {
    const { backend, seen } = await instrumented();
    cleanup = () => backend.close();
    const { a, b, out, c } = hugeK();
    const controller = new AbortController();
    let settled = false;
    const op = backend.dotGeneralInto(out, a, b, { contracting: [[1], [0]] }, { signal: controller.signal });
    op.then(
      () => (settled = true),
      () => (settled = true),
    );
    await started(c, () => settled);
    expect(settled).toBe(false);
    controller.abort();
    const error = await op.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(TenferroError.is(error, 'ExecutionAborted')).toBe(true);
    expect(seen.abortWord?.[0]).toBe(ABORT_SIGNALLED);
    // The kernel stopped by itself: its error is the native status Aborted (KernelFailed.detail.kernelCode).
    expect(seen.errors.length).toBe(1);
    expect(TenferroError.is(seen.errors[0], 'KernelFailed')).toBe(true);
    expect((seen.errors[0] as TenferroError).detail.kernelCode).toBe('Aborted');
    // The backend is usable afterwards.
    const r = await backend.matmul(Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]), Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]));
    expect(r.toArray()).toEqual([1, 2, 3, 4]);
  });

  it('close() during a long GEMM does not wait for the whole GEMM: the call settles with BackendClosed and close() returns', async () => {
    const { backend, seen } = await instrumented();
    const { a, b, out, c } = hugeK();
    let settled = false;
    const op = backend.dotGeneralInto(out, a, b, { contracting: [[1], [0]] });
    op.then(
      () => (settled = true),
      () => (settled = true),
    );
    await started(c, () => settled);
    expect(settled).toBe(false);
    // close() resolves only once the engine's workers have exited, which they cannot do while a
    // kernel runs: it returning at all means the kernel stopped at its abort word.
    await backend.close();
    const error = await op.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(TenferroError.is(error, 'BackendClosed')).toBe(true);
    expect(seen.abortWord?.[0]).toBe(2); // ABORT_CLOSED
    for (const e of seen.errors) {
      if (TenferroError.is(e, 'KernelFailed')) expect(e.detail.kernelCode).toBe('Aborted');
    }
  });
});

/** A 64 x 64 f64 GEMM over K (broadcast operands of one element each), as a raw descriptor. */
function nativeCase(k = K) {
  const desc = new Float64Array(DESC.HEADER);
  desc[DESC.dtype] = 1;
  desc[DESC.m] = 64;
  desc[DESC.n] = 64;
  desc[DESC.k] = k;
  desc[DESC.rsC] = 1;
  desc[DESC.csC] = 64;
  desc[DESC.alphaRe] = 1;
  desc[DESC.isa] = -1;
  desc[DESC.m1] = 64;
  desc[DESC.n1] = 64;
  desc[DESC.b1] = 1;
  const one = new Float64Array(new SharedArrayBuffer(8));
  one[0] = 1;
  const c = new Float64Array(new SharedArrayBuffer(8 * 64 * 64)).fill(Number.NaN);
  return { desc, a: one, bb: one, c };
}
