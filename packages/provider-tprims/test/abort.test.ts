// Abort polling: the native kernels poll the execution's abort word (core's ctx.abortWord) between
// rows and tiles and stop with the status Aborted. Nothing here is timed: the tasks would run for
// days (2^40 elements through broadcast operands); the worker test waits, as a latch, until the
// kernel has written its output once, then raises the word; the backend tests abort or close an
// operation that cannot finish on its own, so only a kernel that stops makes them settle.
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ABORT_SIGNALLED, CpuBackend, type CpuTensorPrimitivesProvider, ops, Tensor, TenferroError } from '@tenferro/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createTprimsProvider, status } from '../src/index.js';
import { BINARY_CODE, DESC, DTYPE_CODE, KIND, TprimsStatus } from '../src/native/binding.js';
import { loadTprims } from '../src/native/load.js';

const HUGE = 2 ** 40;
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** The descriptor of `out[i] = a[i] + b[i]` over `n` f64 elements, every operand one element (stride 0). */
function broadcastAdd(n: number): Float64Array {
  const d = new Float64Array(DESC.HEADER + 4);
  d[DESC.kind] = KIND.binary;
  d[DESC.op] = BINARY_CODE.add;
  d[DESC.din] = DTYPE_CODE.f64;
  d[DESC.dout] = DTYPE_CODE.f64;
  d[DESC.rank] = 1;
  d[DESC.isa] = -1;
  d[DESC.HEADER] = n; // extent; every stride 0
  return d;
}

/** Bytes of a SharedArrayBuffer holding `values` as f64. */
function f64Bytes(values: number[]): Uint8Array {
  const buffer = new SharedArrayBuffer(8 * values.length);
  new Float64Array(buffer).set(values);
  return new Uint8Array(buffer);
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe.runIf(status().available)('the native kernels poll their abort word (addon called directly)', () => {
  const binding = () => {
    const s = loadTprims();
    if (!s.available) throw new Error(s.reason);
    return s.binding;
  };

  it('a word raised before the call: Aborted at once, nothing written; a clear word or none runs', () => {
    const b = binding();
    const out = f64Bytes([Number.NaN]);
    const one = f64Bytes([1]);
    const word = new Int32Array(new SharedArrayBuffer(4));
    Atomics.store(word, 0, ABORT_SIGNALLED);
    expect(b.run(broadcastAdd(HUGE), out, one, one, word)).toBe(TprimsStatus.Aborted);
    expect(Number.isNaN(new Float64Array(out.buffer)[0])).toBe(true);
    expect(b.run(broadcastAdd(1000), out, one, one, new Int32Array(new SharedArrayBuffer(4)))).toBe(TprimsStatus.Ok);
    expect(new Float64Array(out.buffer)[0]).toBe(2);
    expect(b.run(broadcastAdd(1000), out, one, one, undefined)).toBe(TprimsStatus.Ok);
  });

  it('a word that is not an Int32Array of at least one element is BadArguments', () => {
    const b = binding();
    const out = f64Bytes([0]);
    const one = f64Bytes([1]);
    for (const bad of [new Int32Array(0), new Uint32Array(1), new Float64Array(1), 0, null, {}]) {
      expect(b.run(broadcastAdd(10), out, one, one, bad as Int32Array)).toBe(TprimsStatus.BadArguments);
    }
  });

  it('a word raised by another thread while the kernel runs on a worker stops it: Aborted', async () => {
    const word = new Int32Array(new SharedArrayBuffer(4));
    const outBuffer = new SharedArrayBuffer(8);
    const out = new Float64Array(outBuffer).fill(Number.NaN);
    const source = `
      import { parentPort, workerData } from 'node:worker_threads';
      const { loadTprims } = await import(workerData.load);
      const b = loadTprims().binding;
      const one = new Float64Array(new SharedArrayBuffer(8)); one[0] = 1;
      const bytes = (x) => new Uint8Array(x.buffer ?? x);
      parentPort.postMessage(b.run(new Float64Array(workerData.desc), bytes(workerData.out), bytes(one), bytes(one), new Int32Array(workerData.word)));`;
    const worker = new Worker(source, {
      eval: true,
      workerData: { load: pathToFileURL(new URL('../dist/native/load.js', import.meta.url).pathname).href, desc: [...broadcastAdd(HUGE)], out: outBuffer, word: word.buffer },
    });
    cleanup = async () => void (await worker.terminate());
    let result: number | undefined;
    const done = new Promise<number>((resolve, reject) => {
      worker.once('message', (s: number) => resolve((result = s)));
      worker.once('error', reject);
    });
    while (Number.isNaN(out[0]) && result === undefined) await tick(); // latch: the kernel wrote
    expect(result).toBeUndefined(); // 2^40 additions do not finish on their own
    Atomics.store(word, 0, ABORT_SIGNALLED);
    expect(await done).toBe(TprimsStatus.Aborted);
    expect(out[0]).toBe(2);
  });
});

/** tprims with its tensor-primitives calls recorded: the context's abort word and what the provider threw. */
function recorded() {
  const pkg = createTprimsProvider();
  const inner = pkg.tensorPrimitives!;
  const seen: { errors: unknown[]; called: number } = { errors: [], called: 0 };
  const wrap =
    <R,>(f: (ctx: Parameters<CpuTensorPrimitivesProvider['reduce']>[0], r: R) => ReturnType<CpuTensorPrimitivesProvider['reduce']>) =>
    async (ctx: Parameters<CpuTensorPrimitivesProvider['reduce']>[0], r: R) => {
      seen.called++;
      try {
        return await f(ctx, r);
      } catch (error) {
        seen.errors.push(error);
        throw error;
      }
    };
  const tensorPrimitives: CpuTensorPrimitivesProvider = {
    name: inner.name,
    executionCapabilities: () => inner.executionCapabilities(),
    declaredSupport: () => inner.declaredSupport!(),
    binary: wrap((ctx, r) => inner.binary(ctx, r as never)),
    unary: wrap((ctx, r) => inner.unary(ctx, r as never)),
    reduce: wrap((ctx, r) => inner.reduce(ctx, r as never)),
  };
  return { pkg: { ...pkg, tensorPrimitives }, seen };
}

/** A 2^20 × 2^20 f64 tensor over one element (strides 0): summing it takes days. */
function hugeBroadcast(): Tensor<'f64'> {
  const one = new SharedArrayBuffer(8);
  new Float64Array(one)[0] = 1;
  return Tensor.fromDescriptor({ dtype: 'f64', shape: [2 ** 20, 2 ** 20], strides: [0, 0], offset: 0, buffer: one });
}

for (const threads of [1, 2]) {
  describe.runIf(status().available)(`through ops(backend) (kind faer, ${threads} thread${threads > 1 ? 's' : ''})`, () => {
    it('an aborted sum of 2^40 elements settles with ExecutionAborted; the kernel reported Aborted; the backend runs on', async () => {
      const { pkg, seen } = recorded();
      const backend = await CpuBackend.create({ kind: 'faer', threads, providers: [pkg] });
      cleanup = () => backend.close();
      const controller = new AbortController();
      const op = ops(backend).sum(hugeBroadcast(), { axes: [1], signal: controller.signal });
      while (seen.called === 0) await tick(); // latch: the provider was called (its kernel is running or about to)
      controller.abort();
      const error = await op.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(TenferroError.is(error, 'ExecutionAborted')).toBe(true);
      expect(seen.errors.length).toBe(1);
      expect(TenferroError.is(seen.errors[0], 'KernelFailed')).toBe(true);
      expect((seen.errors[0] as TenferroError).detail.kernelCode).toBe('Aborted');
      const r = await ops(backend).add(Tensor.fromArray('f64', [2], [1, 2]), Tensor.fromArray('f64', [2], [3, 4]));
      expect(r.toArray()).toEqual([4, 6]);
    });

    it('close() during a sum that cannot finish returns, and the call settles with BackendClosed', async () => {
      const { pkg, seen } = recorded();
      const backend = await CpuBackend.create({ kind: 'faer', threads, providers: [pkg] });
      const op = ops(backend).sum(hugeBroadcast(), { axes: [0] });
      while (seen.called === 0) await tick();
      // close() resolves once the engine's workers exited, which they cannot do while a kernel runs.
      await backend.close();
      const error = await op.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(TenferroError.is(error, 'BackendClosed')).toBe(true);
    });
  });
}
