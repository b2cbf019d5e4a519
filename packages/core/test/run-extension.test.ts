// runExtension (#35): the public door of extension families — validation before anything runs,
// the extension validated once per (bundle, domain, key), the extension-mode rule, pinned inputs,
// pooled aligned outputs, admission like every operation, traced kernel calls and the one
// written-then-declined guard.
import { tracingChannel } from 'node:diagnostics_channel';
import { sharedMemoryRange } from '@tenferro/os';
import { Piscina } from 'piscina';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuDomainExecutor,
  type CpuExecutionContext,
  type CpuProviderExecutionCapabilities,
  DTYPE_INFO,
  type DType,
  DEFAULT_EXECUTION_CAPABILITIES,
  EXECUTED,
  type ExtensionKernelCall,
  type ExtensionProviderEvent,
  ExternalCpuDomain,
  type ExtensionKey,
  type SharedTensorAllocationDomain,
  Tensor,
  type TensorDescriptor,
  Unsupported,
  defineExtensionKey,
  ops,
  referenceGemmProvider,
  runExtension,
} from '../src/index.js';
import { PiscinaDomainExecutor } from '../src/piscina/index.js';
import { expectCode, kernel } from './helpers.js';

const backends: CpuBackend[] = [];
const pools: Piscina[] = [];
afterAll(async () => {
  await Promise.all(backends.map((b) => b.close()));
  await Promise.all(pools.map((p) => p.destroy()));
});
async function create(options: Parameters<typeof CpuBackend.create>[0]): Promise<CpuBackend> {
  const b = await CpuBackend.create(options);
  backends.push(b);
  return b;
}
/** One 1-thread backend with no providers, shared by the tests that need nothing else of it. */
let shared: Promise<CpuBackend> | undefined;
const oneThread = (): Promise<CpuBackend> => (shared ??= create({ threads: 1, providers: [] }));
async function external(id: number, executor: CpuDomainExecutor, budget: number): Promise<CpuBackend> {
  const b = await CpuBackend.fromExternalDomains({ defaultDomain: id, domains: [ExternalCpuDomain.callerManaged(id, executor, budget)] });
  backends.push(b);
  return b;
}
function piscina(threads: number): PiscinaDomainExecutor {
  const p = new Piscina({ minThreads: threads, maxThreads: threads, idleTimeout: 60_000 });
  pools.push(p);
  return new PiscinaDomainExecutor(p);
}
/** An executor like `inner` but offering no pool (R72: the preferred mode is then Sequential). */
function withoutPool(inner: CpuDomainExecutor): CpuDomainExecutor {
  return {
    capabilities: () => ({ ...inner.capabilities(), innerParallelism: 'none' }),
    install: (job) => inner.install(job),
    submit: (jobs) => inner.submit(jobs),
    workerPool: () => undefined,
    runKernel: (task) => inner.runKernel(task),
  };
}
const fakeBlas = [{ kind: 'blas' as const, name: 'fake blas', gemm: referenceGemmProvider }];

const WELL_BEHAVED: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: false,
  acceptsInner: true,
});

/** A tiny family "twice": out = 2·x (f64), an extension kernel optional. */
interface TwiceKernels {
  readonly name: string;
  readonly executionCapabilities?: () => CpuProviderExecutionCapabilities;
  readonly overwritesOutputs?: boolean;
  readonly declinesBeforeWriting?: boolean;
  readonly declaredSupport?: () => { readonly family?: 'blas' };
  twice?(ctx: CpuExecutionContext, x: Float64Array, out: Float64Array): ReturnType<typeof Unsupported.of> | typeof EXECUTED | Promise<typeof EXECUTED>;
}
let keys = 0;
const freshKey = (): ExtensionKey<TwiceKernels> => defineExtensionKey<TwiceKernels>(`test.twice.${keys++}`);
const builtin = (x: Float64Array, out: Float64Array) => ({ name: 'twice built-in', run: () => void out.forEach((_, i) => (out[i] = 2 * x[i]!)) });

/** Run "twice" of `x` on `target` under `key`; resolves to the result's values and which kernel ran. */
async function twice(target: CpuBackend | Parameters<typeof runExtension>[0], key: ExtensionKey<TwiceKernels>, x: Tensor<'f64'>, signal?: AbortSignal) {
  const { outputs, value } = await runExtension(target, key, { op: 'test.twice', inputs: [x], outputs: [['f64', [...x.shape]]], ...(signal ? { signal } : {}) }, (ctx, { inputs, outputs, extension, kernel }) => {
    const i = inputs[0]!, o = outputs[0]!;
    const read = new Float64Array(i.buffer, i.offset * 8, x.size);
    const write = new Float64Array(o.buffer, o.offset * 8, x.size);
    const k = extension?.twice;
    return kernel({ name: 'twice', extension: k ? (c) => k.call(extension, c, read, write) : undefined, builtin: builtin(read, write) }).then((ran) => [ran, ctx.parallelMode] as const);
  });
  const values = outputs[0]!.toArray();
  outputs[0]!.dispose();
  return { values, ran: value[0], mode: value[1] };
}

function bundleWith(backend: CpuBackend, key: ExtensionKey<TwiceKernels>, ext: TwiceKernels): CpuBackend {
  return backend.withProviderBundle(backend.providerBundle().toBuilder().extension(key, ext).build());
}

/** Every asyncEnd context of tenferro:provider while `fn` runs. */
async function providerEvents(fn: () => Promise<unknown>): Promise<ExtensionProviderEvent[]> {
  const seen: ExtensionProviderEvent[] = [];
  const tc = tracingChannel('tenferro:provider');
  const handlers = { start() {}, end() {}, asyncStart() {}, asyncEnd: (m: unknown) => void seen.push({ ...(m as ExtensionProviderEvent) }), error() {} };
  tc.subscribe(handlers);
  try {
    await fn();
  } finally {
    tc.unsubscribe(handlers);
  }
  return seen;
}

describe('runExtension: validation before anything runs', () => {
  it('a bad target, key, request, unknown request key, bad output or body is InvalidArgument; a disposed input TensorDisposed — nothing admitted', async () => {
    const b = await create({ threads: 1, providers: [] });
    const key = freshKey();
    const x = Tensor.fromArray('f64', [2], [1, 2]);
    const entries = b.executionInfo().executorEntries.installs;
    const body = () => 1;
    await expectCode(runExtension({} as never, key, { op: 'x', inputs: [], outputs: [] }, body), 'InvalidArgument');
    await expectCode(runExtension(b, { nom: 1 } as never, { op: 'x', inputs: [], outputs: [] }, body), 'InvalidArgument');
    await expectCode(runExtension(b, key, { op: 'x', inputs: [], outputs: [], extra: 1 } as never, body), 'InvalidArgument');
    await expectCode(runExtension(b, key, { op: '', inputs: [], outputs: [] }, body), 'InvalidArgument');
    await expectCode(runExtension(b, key, { op: 'x', inputs: [x.toArray()] as never, outputs: [] }, body), 'InvalidArgument');
    await expectCode(runExtension(b, key, { op: 'x', inputs: [], outputs: [['f64', [-1]]] }, body), 'InvalidArgument');
    await expectCode(runExtension(b, key, { op: 'x', inputs: [], outputs: [['f65' as never, [1]]] }, body), 'UnsupportedDType');
    await expectCode(runExtension(b, key, { op: 'x', inputs: [], outputs: [], signal: 'now' as never }, body), 'InvalidArgument');
    await expectCode(runExtension(b, key, { op: 'x', inputs: [], outputs: [] }, 42 as never), 'InvalidArgument');
    const gone = Tensor.fromArray('f64', [2], [1, 2]);
    gone.dispose();
    const e = await expectCode(runExtension(b, key, { op: 'my.op', inputs: [x, gone], outputs: [] }, body), 'TensorDisposed');
    expect([e.op, e.detail.param]).toEqual(['my.op', 'inputs[1]']);
    const aborted = AbortSignal.abort();
    await expectCode(runExtension(b, key, { op: 'x', inputs: [x], outputs: [['f64', [2]]], signal: aborted }, body), 'AdmissionAborted');
    expect(b.executionInfo().executorEntries.installs).toBe(entries);
    expect(b.bufferPoolStats().outstanding).toBe(0);
  });

  it('an input of an allocation domain refusing foreign reads is HostAccess before anything runs', async () => {
    const b = await create({ threads: 1, providers: [] });
    const domain: SharedTensorAllocationDomain = { name: 'private', foreignReads: 'refused', allocate: (n) => new SharedArrayBuffer(n), release: () => undefined };
    const mine = b.withAllocationDomain(domain);
    const key = freshKey();
    const t = (await runExtension(mine, key, { op: 'x', inputs: [], outputs: [['f64', [2]]] }, () => undefined)).outputs[0]!;
    const entries = b.executionInfo().executorEntries.installs;
    await expectCode(runExtension(b, key, { op: 'x', inputs: [t], outputs: [] }, () => undefined), 'HostAccess', 'RuntimeState');
    expect(b.executionInfo().executorEntries.installs).toBe(entries);
    expect((await twice(mine, key, t as Tensor<'f64'>)).values).toEqual([0, 0]);
  });
});

describe('runExtension: the extension-mode rule', () => {
  it('faer: budget 2 → Inner with a pool of 2, budget 1 → Sequential; blas → Inner above budget 1', async () => {
    const key = freshKey();
    const b2 = await create({ threads: 2, providers: [] });
    const seen = await runExtension(b2, key, { op: 'x', inputs: [], outputs: [] }, (ctx) => [ctx.parallelMode, ctx.threadBudget, ctx.workerPool()?.size]);
    expect(seen.value).toEqual(b2.numThreads() > 1 ? ['inner', 2, 2] : ['sequential', 1, undefined]);
    const b1 = await create({ threads: 1, providers: [] });
    expect((await runExtension(b1, key, { op: 'x', inputs: [], outputs: [] }, (ctx) => [ctx.parallelMode, ctx.workerPool()])).value).toEqual(['sequential', undefined]);
    const blas = await create({ kind: 'blas', providers: fakeBlas });
    expect((await runExtension(blas, key, { op: 'x', inputs: [], outputs: [] }, (ctx) => ctx.parallelMode)).value).toBe(blas.numThreads() > 1 ? 'inner' : 'sequential');
  });

  it('an executor without a pool → Sequential (the preferred engine mode, R72), also in a session', async () => {
    const key = freshKey();
    const bare = await external(3, withoutPool(piscina(2)), 2);
    expect((await runExtension(bare, key, { op: 'x', inputs: [], outputs: [] }, (ctx) => [ctx.parallelMode, ctx.threadBudget])).value).toEqual(['sequential', 2]);
    expect(await bare.withBackendSession(async (s) => (await runExtension(s, key, { op: 'x', inputs: [], outputs: [] }, (ctx) => ctx.parallelMode)).value)).toBe('sequential');
    const pooled = await external(4, piscina(2), 2);
    expect((await runExtension(pooled, key, { op: 'x', inputs: [], outputs: [] }, (ctx) => ctx.parallelMode)).value).toBe('inner');
    // A session's first extension call, before any operation of its handle: its entry knows the executor, no guess.
    const fresh = await external(5, withoutPool(piscina(2)), 2);
    expect(await fresh.withBackendSession(async (s) => (await runExtension(s, freshKey(), { op: 'x', inputs: [], outputs: [] }, (ctx) => ctx.parallelMode)).value)).toBe('sequential');
    // A handle's first call, before its engine was built: built first, no guess either.
    const first = await external(6, withoutPool(piscina(2)), 2);
    expect((await runExtension(first, freshKey(), { op: 'x', inputs: [], outputs: [] }, (ctx) => ctx.parallelMode)).value).toBe('sequential');
  });

  it('a handle: one admission and one executor entry per call; a session: its entry; a scope: its entry', async () => {
    const b = await create({ threads: 2, providers: [] });
    const key = freshKey();
    const entries = () => b.executionInfo().executorEntries.installs;
    const x = Tensor.fromArray('f64', [3], [1, 2, 3]);
    let before = entries();
    expect((await twice(b, key, x)).values).toEqual([2, 4, 6]);
    expect(entries() - before).toBe(1);
    before = entries();
    const inSession = await b.withBackendSession(async (s) => [await twice(s as never, key, x), await twice(s as never, key, x)]);
    expect(entries() - before).toBe(1);
    expect(inSession.map((r) => r.mode)).toEqual(b.numThreads() > 1 ? ['inner', 'inner'] : ['sequential', 'sequential']);
    before = entries();
    await b.withExecutionScope(async () => {
      await twice(b, key, x);
      await twice(b.clone(), key, x);
    });
    expect(entries() - before).toBe(1);
  });
});

describe('runExtension: the extension validated once per (bundle, domain, key)', () => {
  it('no executionCapabilities counts as the default: refused on a strict bundle and on a caller-managed domain', async () => {
    const key = freshKey();
    const undeclared: TwiceKernels = { name: 'undeclared', twice: () => EXECUTED };
    const faer = bundleWith(await create({ threads: 2, providers: [] }), key, undeclared);
    let e = await expectCode(twice(faer, key, Tensor.fromArray('f64', [1], [1])), 'IncompatibleDomain');
    expect([(e.cause as { code: string }).code, e.detail.slot, e.detail.provider]).toEqual(['ThreadCountNotEnforceable', key.name, 'undeclared']);
    // The same with the default declared explicitly: refused the same way (defect 5 of #35).
    const declared = bundleWith(await create({ threads: 2, providers: [] }), key, { ...undeclared, executionCapabilities: () => DEFAULT_EXECUTION_CAPABILITIES });
    e = await expectCode(twice(declared, key, Tensor.fromArray('f64', [1], [1])), 'IncompatibleDomain');
    expect((e.cause as { code: string }).code).toBe('ThreadCountNotEnforceable');
    const callerManaged = bundleWith(await external(7, piscina(2), 2), key, undeclared);
    const entries = callerManaged.executionInfo().executorEntries.installs;
    e = await expectCode(twice(callerManaged, key, Tensor.fromArray('f64', [1], [1])), 'IncompatibleDomain');
    expect((e.cause as { code: string }).code).toBe('ThreadCountNotEnforceable');
    expect(callerManaged.executionInfo().executorEntries.installs).toBe(entries);
    // The blas kind trusts its runtime on its managed domain (R54), like its bundle.
    const blas = bundleWith(await create({ kind: 'blas', providers: fakeBlas }), key, undeclared);
    expect((await twice(blas, key, Tensor.fromArray('f64', [1], [1]))).ran).toBe('extension');
  });

  it('R57, R59 and R47: placement off the caller executor, a mode it does not accept, a BLAS-family extension on a caller-managed domain', async () => {
    const key = freshKey();
    const x = Tensor.fromArray('f64', [1], [1]);
    const cm = await external(8, piscina(2), 2);
    let e = await expectCode(twice(bundleWith(cm, key, { name: 'own threads', executionCapabilities: () => ({ ...WELL_BEHAVED, placement: 'externalWorkers' }) }), key, x), 'IncompatibleDomain');
    expect((e.cause as { code: string }).code).toBe('CallerManagedPlacementNotEnforceable');
    const key2 = freshKey();
    e = await expectCode(twice(bundleWith(cm, key2, { name: 'lapack', executionCapabilities: () => WELL_BEHAVED, declaredSupport: () => ({ family: 'blas' }) }), key2, x), 'IncompatibleDomain');
    expect((e.cause as { code: string }).code).toBe('CallerManagedBlasUnsupported');
    const key3 = freshKey();
    const b2 = await create({ threads: 2, providers: [] });
    const sequentialOnly = { name: 'seq', executionCapabilities: () => ({ ...WELL_BEHAVED, acceptsInner: false }), twice: () => EXECUTED };
    if (b2.numThreads() > 1) {
      e = await expectCode(twice(bundleWith(b2, key3, sequentialOnly), key3, x), 'IncompatibleDomain');
      expect((e.cause as { code: string }).code).toBe('ParallelModeNotSupported');
    }
    const b1 = await create({ threads: 1, providers: [] });
    expect((await twice(bundleWith(b1, key3, sequentialOnly), key3, x)).ran).toBe('extension');
  });

  it('executionCapabilities() is asked once per (bundle, domain, key), however many calls; a malformed one is InvalidArgument', async () => {
    const key = freshKey();
    let asked = 0;
    const b = bundleWith(await create({ threads: 2, providers: [] }), key, { name: 'counted', executionCapabilities: () => (asked++, WELL_BEHAVED), twice: () => EXECUTED });
    const x = Tensor.fromArray('f64', [1], [1]);
    for (let i = 0; i < 20; i++) await twice(b, key, x);
    await b.withBackendSession(async (s) => {
      for (let i = 0; i < 5; i++) await twice(s as never, key, x);
    });
    expect(asked).toBe(1);
    const bad = bundleWith(await create({ threads: 1, providers: [] }), key, { name: 'odd', executionCapabilities: () => ({ ...WELL_BEHAVED, threadCount: 'lots' }) as never });
    const e = await expectCode(twice(bad, key, x), 'InvalidArgument');
    expect(e.message).toContain('threadCount');
  });
});

describe('runExtension: outputs', () => {
  it('fresh, dense column-major, 64-byte aligned from 256 bytes, zeroed by default; back to the pool on dispose', async () => {
    const b = await create({ threads: 1, providers: [] });
    const key = freshKey();
    b.resetBufferPool();
    const big: (readonly [DType, readonly number[]])[] = [['f64', [6, 7]], ['f64', [33]], ['c64', [50]], ['f32', [257]], ['f64', [999]], ['i32', [65, 2]], ['c128', [17]], ['f64', [4, 9, 2]]];
    const seen = await runExtension(b, key, { op: 'x', inputs: [], outputs: [...big, ['f32', [3]], ['c128', [0, 4]]] }, (_ctx, { outputs, zeroed }) => {
      const line = (d: { buffer: SharedArrayBuffer; offset: number; dtype: DType }) => Number((sharedMemoryRange(d.buffer).address + BigInt(d.offset * DTYPE_INFO[d.dtype].bytes)) % 64n);
      const first = outputs[0]!;
      return { zeroed, strides: first.strides, lines: outputs.slice(0, big.length).map(line), zeros: new Float64Array(first.buffer, first.offset * 8, 42).every((v) => v === 0) };
    });
    expect(seen.value).toEqual({ zeroed: true, strides: [1, 6], lines: big.map(() => 0), zeros: true });
    expect(seen.outputs.slice(-3).map((t) => [t.dtype, t.shape, t.strides])).toEqual([['f64', [4, 9, 2], [1, 4, 36]], ['f32', [3], [1]], ['c128', [0, 4], [1, 0]]]);
    expect(b.bufferPoolStats().outstanding).toBe(0);
    const returned = b.bufferPoolStats().returnedByDispose;
    for (const t of seen.outputs) t.dispose();
    expect(b.bufferPoolStats().returnedByDispose - returned).toBe(seen.outputs.length);
  });

  it('unzeroed only when every kernel that may write declares it overwrites them (extension and built-in)', async () => {
    const b = await create({ threads: 1, providers: [] });
    const zeroedWith = async (target: CpuBackend, key: ExtensionKey<TwiceKernels>, builtinOverwrites: boolean) =>
      (await runExtension(target, key, { op: 'x', inputs: [], outputs: [['f64', [64]]], builtinOverwrites }, (_c, o) => o.zeroed)).value;
    const none = freshKey();
    expect([await zeroedWith(b, none, false), await zeroedWith(b, none, true)]).toEqual([true, false]);
    const overwriting = freshKey();
    const ob = bundleWith(b, overwriting, { name: 'o', executionCapabilities: () => WELL_BEHAVED, overwritesOutputs: true });
    expect([await zeroedWith(ob, overwriting, false), await zeroedWith(ob, overwriting, true)]).toEqual([true, false]);
    const partial = freshKey();
    const pb = bundleWith(b, partial, { name: 'p', executionCapabilities: () => WELL_BEHAVED });
    expect(await zeroedWith(pb, partial, true)).toBe(true);
  });

  it('scratch: pooled storage laid out as the outputs, never a tensor, back in the pool when the body settles — on success and on failure; a malformed scratch is InvalidArgument', async () => {
    const b = await oneThread();
    const key = freshKey();
    let seen: readonly TensorDescriptor[] = [];
    const retained = b.bufferPoolStats().buffers;
    const { outputs, value } = await runExtension(b, key, { op: 'x', inputs: [], outputs: [['f64', [4]]], scratch: [['i32', [3]], ['f64', [2, 2]]] }, (_ctx, { outputs: out, scratch }) => {
      seen = scratch;
      expect(b.bufferPoolStats().outstanding).toBe(3); // the output and both scratch areas, held for the body
      const words = new Int32Array(scratch[0]!.buffer, scratch[0]!.offset * 4, 3);
      words.set([1, 2, 3]);
      new Float64Array(out[0]!.buffer, out[0]!.offset * 8, 4).set([words[0]!, words[1]!, words[2]!, 9]);
      return scratch.map((d) => [d.dtype, d.shape]);
    });
    expect(value).toEqual([['i32', [3]], ['f64', [2, 2]]]);
    expect(seen.map((d) => d.strides)).toEqual([[1], [1, 2]]);
    expect(outputs).toHaveLength(1); // only the outputs come back as tensors
    expect(outputs[0]!.toArray()).toEqual([1, 2, 3, 9]);
    // The scratch went back to the pool (retained for the next loan); the output is the caller's (out of the pool's count).
    expect(b.bufferPoolStats()).toMatchObject({ outstanding: 0, buffers: retained + 2 });
    outputs[0]!.dispose();
    expect(b.bufferPoolStats().buffers).toBe(retained + 3);
    await expect(runExtension(b, key, { op: 'x', inputs: [], outputs: [['f64', [4]]], scratch: [['i32', [3]]] }, () => Promise.reject(new Error('body failed')))).rejects.toThrow('body failed');
    expect(b.bufferPoolStats().outstanding).toBe(0);
    // No scratch asked: an empty list.
    expect((await runExtension(b, key, { op: 'x', inputs: [], outputs: [] }, (_c, { scratch }) => scratch.length)).value).toBe(0);
    // Checked as the outputs are, before anything runs.
    for (const [scratch, code] of [[7, 'InvalidArgument'], [[['i32']], 'InvalidArgument'], [[['f64', [-1]]], 'InvalidArgument'], [[['i33', [1]]], 'UnsupportedDType']] as const) {
      await expectCode(runExtension(b, key, { op: 'x', inputs: [], outputs: [], scratch: scratch as never }, () => 0), code);
    }
  });

  it('a failing body gives every output back; an allocation domain gets its storage back too', async () => {
    const b = await create({ threads: 1, providers: [] });
    const key = freshKey();
    await expect(runExtension(b, key, { op: 'x', inputs: [], outputs: [['f64', [100]], ['i32', [3]]] }, () => { throw new RangeError('mine'); })).rejects.toThrow(RangeError);
    expect(b.bufferPoolStats().outstanding).toBe(0);
    const log = { allocated: 0, released: 0 };
    const arena: SharedTensorAllocationDomain = { name: 'arena', allocate: (n) => (log.allocated++, new SharedArrayBuffer(n)), release: () => void log.released++ };
    await expect(runExtension(b.withAllocationDomain(arena), key, { op: 'x', inputs: [], outputs: [['f64', [10]]] }, async () => Promise.reject(new Error('late')))).rejects.toThrow('late');
    expect(log).toEqual({ allocated: 1, released: 1 });
    // The permit came back: the next call is admitted.
    expect((await runExtension(b, key, { op: 'x', inputs: [], outputs: [] }, () => 'again')).value).toBe('again');
  });
});

describe('runExtension: inputs pinned for the operation', () => {
  it('an input disposed while the call waits for admission is not recycled into another output while the kernel reads it', async () => {
    const b = await create({ threads: 1, providers: [] });
    const key = freshKey();
    const n = 512;
    const source = Tensor.fromArray('f64', [n], Array.from({ length: n }, (_, i) => i + 1));
    const a = await ops(b).add(source, source); // pooled storage: 2, 4, …
    const expected = a.toArray().map((v) => 2 * v);
    let release!: () => void;
    const latch = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const blocking = new Promise<void>((r) => (entered = r));
    // A session holds the permit; inside it, pooled tensors of a's size are made and disposed.
    const blocker = b.withBackendSession(async (s) => {
      entered();
      await latch;
      for (let i = 0; i < 4; i++) {
        const t = await ops(s).mul(source, source);
        t.dispose();
      }
    });
    await blocking;
    const returned = b.bufferPoolStats().returnedByDispose;
    const p = twice(b, key, a);
    a.dispose();
    // Pinned: the dispose did not hand a's storage back.
    expect(b.bufferPoolStats().returnedByDispose).toBe(returned);
    release();
    await blocker;
    const r = await p;
    expect(r.values).toEqual(expected);
    // …and it goes back once the operation ended.
    expect(b.bufferPoolStats().returnedByDispose).toBeGreaterThan(returned);
  });
});

describe('runExtension: kernel calls on tenferro:provider', () => {
  it('the extension executes: one event, kernel extension, slot the key name, the decided mode and thread limit', async () => {
    const key = freshKey();
    const b = bundleWith(await create({ threads: 2, providers: [] }), key, { name: 'mine', executionCapabilities: () => ({ ...WELL_BEHAVED, threadCount: 'sequential' }), twice: (_c, x, out) => (out.set(x.map((v) => 2 * v)), EXECUTED) });
    const events = await providerEvents(async () => expect((await twice(b, key, Tensor.fromArray('f64', [2], [1, 2]))).values).toEqual([2, 4]));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ op: 'test.twice', slot: key.name, provider: 'mine', kernel: 'extension', call: 'twice', threadLimit: 1, dtype: 'f64', shapes: [[2], [2]], outcome: 'executed' });
  });

  it('a decline before writing: the built-in runs, both calls are published (which ran, why it declined), one warning per call', async () => {
    const key = freshKey();
    const b = bundleWith(await create({ threads: 1, providers: [] }), key, { name: 'picky', executionCapabilities: () => WELL_BEHAVED, twice: () => Unsupported.of({ kind: 'runtimeUnavailable', detail: 'not today' }) });
    const warnings: { code?: string }[] = [];
    const onWarning = (w: Error & { code?: string }) => void warnings.push(w);
    process.on('warning', onWarning);
    try {
      const events = await providerEvents(async () => {
        for (let i = 0; i < 3; i++) expect(await twice(b, key, Tensor.fromArray('f64', [2], [1, 2]))).toMatchObject({ values: [2, 4], ran: 'builtin' });
      });
      expect(events.map((e) => [e.kernel, e.outcome])).toEqual([['extension', 'declined'], ['builtin', 'executed'], ['extension', 'declined'], ['builtin', 'executed'], ['extension', 'declined'], ['builtin', 'executed']]);
      expect(events[0]!.declineReason).toEqual({ kind: 'runtimeUnavailable', detail: 'not today' });
      expect(events[1]).toMatchObject({ provider: 'twice built-in', fallbackFrom: 'picky', fallbackReason: { kind: 'runtimeUnavailable', detail: 'not today' } });
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.code === 'TENFERRO_EXTENSION_FALLBACK')).toHaveLength(1);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('written then declined is ProviderContractViolation (unless declinesBeforeWriting); a thrown error is ProviderFailed; outputs go back', async () => {
    const key = freshKey();
    const writesThenDeclines: TwiceKernels = { name: 'sloppy', executionCapabilities: () => WELL_BEHAVED, twice: (_c, _x, out) => ((out[0] = 99), Unsupported.of({ kind: 'runtimeUnavailable' })) };
    const b = await create({ threads: 1, providers: [] });
    const e = await expectCode(twice(bundleWith(b, key, writesThenDeclines), key, Tensor.fromArray('f64', [2], [1, 2])), 'ProviderContractViolation');
    expect(e.detail).toMatchObject({ provider: 'sloppy', call: 'twice', output: 0 });
    const trusted = freshKey();
    expect((await twice(bundleWith(b, trusted, { ...writesThenDeclines, declinesBeforeWriting: true }), trusted, Tensor.fromArray('f64', [2], [1, 2]))).ran).toBe('builtin');
    const throws = freshKey();
    const failed = await expectCode(twice(bundleWith(b, throws, { name: 'boom', executionCapabilities: () => WELL_BEHAVED, twice: () => { throw new Error('kaput'); } }), throws, Tensor.fromArray('f64', [2], [1, 2])), 'ProviderFailed');
    expect((failed.cause as Error).message).toBe('kaput');
    expect(b.bufferPoolStats().outstanding).toBe(0);
  });

  it('facts given as a function are asked only while tenferro:provider has subscribers; one that throws fails the call and gives the outputs back; a non-object is InvalidArgument', async () => {
    const key = freshKey();
    const b = bundleWith(await oneThread(), key, { name: 'mine', executionCapabilities: () => WELL_BEHAVED, twice: (_c, x, out) => (out.set(x.map((v) => 2 * v)), EXECUTED) });
    let asked = 0;
    const call = (facts: unknown) =>
      runExtension(b, key, { op: 'test.facts', inputs: [], outputs: [['f64', [3]]] }, (_ctx, { outputs, extension, kernel }) => {
        const out = new Float64Array(outputs[0]!.buffer, outputs[0]!.offset * 8, 3);
        const x = new Float64Array([1, 2, 3]);
        return kernel({ name: 'twice', extension: (c) => extension!.twice!(c, x, out), facts: facts as ExtensionKernelCall['facts'] });
      }).then(({ outputs, value }) => {
        const values = outputs[0]!.toArray();
        outputs[0]!.dispose();
        return { values, value };
      });
    const lazy = () => (asked++, { dtype: 'f64', shapes: [[3], [7, 7]], flops: 42 });
    expect(await call(lazy)).toEqual({ values: [2, 4, 6], value: 'extension' });
    expect(asked).toBe(0); // nobody listened
    const events = await providerEvents(() => call(lazy));
    expect(asked).toBe(1);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kernel: 'extension', dtype: 'f64', shapes: [[3], [7, 7]], flops: 42, outcome: 'executed' });
    // The object form still works, and a function that throws is the family's bug: the call fails with it, nothing leaks.
    expect((await providerEvents(() => call({ shapes: [[9]] })))[0]).toMatchObject({ shapes: [[9]], flops: null });
    const boom = new Error('facts failed');
    await expect(providerEvents(() => call(() => { throw boom; }))).rejects.toBe(boom);
    await expectCode(call(7), 'InvalidArgument');
    expect(b.bufferPoolStats().outstanding).toBe(0);
  });

  it('kernels posted with ctx.run are tracked: the operation ends after them', async () => {
    const b = await create({ threads: 1, providers: [] });
    const key = freshKey();
    const echo = kernel<unknown, unknown>('echo');
    const r = await runExtension(b, key, { op: 'x', inputs: [], outputs: [] }, (ctx, { kernel: call }) => call({ builtin: { name: 'echo', run: (c) => c.run(echo, 7) } }));
    expect(r.value).toBe('builtin');
  });
});
