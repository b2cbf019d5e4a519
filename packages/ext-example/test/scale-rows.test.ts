// A third-party operation family on runExtension alone (#35): @tenferro/ext-example's scaleRows
// gets validation, its extension validated against the domain, pinned inputs, admission (no
// overlap with another backend on the same CPUs), scopes, sessions and tracing — with no line of
// core written for it.
import { tracingChannel } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CpuBackend,
  type CpuProviderExecutionCapabilities,
  type CpuProviderPackage,
  EXECUTED,
  type ExtensionProviderEvent,
  Tensor,
  TenferroError,
  Unsupported,
  defineKernel,
  ops,
} from '@tenferro/core';
import { BUILTIN_SCALE_ROWS, type ScaleRowsKernels, scaleRows, scaleRowsKey } from '../src/index.js';

const probe = defineKernel<{ buffer: SharedArrayBuffer; tag: number; hold: boolean }, void>(new URL('./fixtures/probe-kernel.mjs', import.meta.url), 'probe');

const WELL_BEHAVED: CpuProviderExecutionCapabilities = Object.freeze({
  threadCount: 'perCallUpperBound',
  placement: 'engineWorkers',
  workerLocalSequential: true,
  acceptsSequential: true,
  acceptsOuter: false,
  acceptsInner: true,
});

/** Shared words of the probe kernel. */
function probeLog() {
  const words = new Int32Array(new SharedArrayBuffer(4 * 64));
  return {
    words,
    buffer: words.buffer as SharedArrayBuffer,
    events: () => Array.from(words.subarray(8, 8 + Atomics.load(words, 0))),
    started: (tag: number) => Array.from(words.subarray(8, 8 + Atomics.load(words, 0))).includes(2 * tag),
    release: () => {
      Atomics.store(words, 3, 1);
      Atomics.notify(words, 3);
    },
  };
}

/** A provider package whose scaleRows kernel runs the probe (tag, hold) on the context's worker, then the built-in. */
function probedPackage(log: ReturnType<typeof probeLog>, tag: number, hold: boolean, extra: Partial<ScaleRowsKernels> = {}): CpuProviderPackage {
  const kernels: ScaleRowsKernels = {
    name: `probed ${tag}`,
    executionCapabilities: () => WELL_BEHAVED,
    async scaleRows(ctx, r) {
      await ctx.run(probe, { buffer: log.buffer, tag, hold });
      await BUILTIN_SCALE_ROWS.run(ctx, r);
      return EXECUTED;
    },
    ...extra,
  };
  return { kind: 'faer', name: `probe package ${tag}`, extensions: [[scaleRowsKey(), kernels]] };
}

/** Yield to the event loop until `check()` holds (a bounded number of turns, no timers). */
/** Yield to the event loop until `check()` holds; a condition never reached fails the test by its timeout. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setImmediate(r));
}

async function rejection(p: Promise<unknown>): Promise<TenferroError> {
  try {
    await p;
  } catch (e) {
    expect(TenferroError.is(e), String(e)).toBe(true);
    return e as TenferroError;
  }
  throw new Error('expected a rejection');
}

const mat = (rows: number[][]) => Tensor.fromArray('f64', [rows.length, rows[0]!.length], rows.flat(), { order: 'row' });

let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2, providers: [] });
});
afterAll(async () => {
  await backend.close();
});

describe('scaleRows through runExtension', () => {
  it('scales rows with the built-in on the engine worker: strided inputs, f32 and f64, a fresh pooled output', async () => {
    const a = mat([[1, 2, 3], [4, 5, 6]]);
    const s = Tensor.fromArray('f64', [2], [10, -1]);
    const out = await scaleRows(backend, a, s);
    expect(out.toArray({ order: 'row' })).toEqual([10, 20, 30, -4, -5, -6]);
    expect(out.strides).toEqual([1, 2]);
    const t = await scaleRows(backend, a.transpose(), Tensor.fromArray('f64', [3], [1, 0, 2]));
    expect(t.toArray({ order: 'row' })).toEqual([1, 4, 0, 0, 6, 12]);
    const f = await scaleRows(backend, Tensor.fromArray('f32', [2, 1], [1.5, 2]), Tensor.fromArray('f32', [2], [2, 4]));
    expect([f.dtype, f.toArray()]).toEqual(['f32', [3, 8]]);
    const returned = backend.bufferPoolStats().returnedByDispose;
    out.dispose();
    expect(backend.bufferPoolStats().returnedByDispose).toBe(returned + 1);
    t.dispose();
    f.dispose();
  });

  it('validation comes first: a bad request is refused before anything is admitted', async () => {
    const installs = backend.executionInfo().executorEntries.installs;
    expect((await rejection(scaleRows(backend, mat([[1]]), Tensor.fromArray('f64', [2], [1, 2])))).code).toBe('ShapeMismatch');
    const gone = mat([[1, 2]]);
    gone.dispose();
    expect((await rejection(scaleRows(backend, gone, Tensor.fromArray('f64', [1], [1])))).code).toBe('TensorDisposed');
    expect((await rejection(scaleRows(backend, mat([[1]]), Tensor.fromArray('f64', [1], [1]), { signal: AbortSignal.abort() }))).code).toBe('AdmissionAborted');
    expect(backend.executionInfo().executorEntries.installs).toBe(installs);
  });

  it('an extension with no executionCapabilities is refused where the default is (IncompatibleDomain), before it runs', async () => {
    let ran = 0;
    const pkg: CpuProviderPackage = { kind: 'faer', name: 'undeclared', extensions: [[scaleRowsKey(), { name: 'undeclared', scaleRows: () => (ran++, EXECUTED) } satisfies ScaleRowsKernels]] };
    const b = await CpuBackend.create({ threads: 2, providers: [pkg] });
    try {
      const e = await rejection(scaleRows(b, mat([[1]]), Tensor.fromArray('f64', [1], [1])));
      expect([e.code, (e.cause as TenferroError).code]).toEqual(['IncompatibleDomain', 'ThreadCountNotEnforceable']);
      expect(ran).toBe(0);
    } finally {
      await b.close();
    }
  });
});

describe('admission: the extension kernel never overlaps another backend on the same CPUs', () => {
  it('a second backend waits for the first one\'s kernel to end', async () => {
    const log = probeLog();
    const first = await CpuBackend.create({ threads: 2, providers: [probedPackage(log, 1, true)] });
    const second = await CpuBackend.create({ threads: 2, providers: [probedPackage(log, 2, false)] }); // the same CPUs
    try {
      const p1 = scaleRows(first, mat([[1, 2]]), Tensor.fromArray('f64', [1], [3]));
      await until(() => log.started(1));
      const p2 = scaleRows(second, mat([[4]]), Tensor.fromArray('f64', [1], [2]));
      // While the first kernel holds its CPUs the second operation is not admitted.
      for (let i = 0; i < 200; i++) await new Promise((r) => setImmediate(r));
      expect(log.started(2)).toBe(false);
      log.release();
      expect((await p1).toArray()).toEqual([3, 6]);
      expect((await p2).toArray()).toEqual([8]);
      expect(log.events()).toEqual([2, 3, 4, 5]);
      expect(Atomics.load(log.words, 2)).toBe(1);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('pinning: an input disposed while the operation waits for admission', () => {
  it('is not handed to another output while the kernel reads it (the result equals the reference)', async () => {
    const n = 64;
    const values = Array.from({ length: n * 4 }, (_, i) => i + 1);
    const source = Tensor.fromArray('f64', [n, 4], values);
    const a = await ops(backend).add(source, source); // pooled storage
    const expected = a.toArray().map((v) => 3 * v);
    let open!: () => void;
    const later = new Promise<void>((r) => (open = r));
    let entered!: () => void;
    const holding = new Promise<void>((r) => (entered = r));
    const blocker = backend.withBackendSession(async (session) => {
      entered();
      await later;
      // Tensors of a's size made and disposed while the operation waits: a's storage must not be among them.
      for (let i = 0; i < 4; i++) (await ops(session).mul(source, source)).dispose();
    });
    await holding;
    const returned = backend.bufferPoolStats().returnedByDispose;
    const p = scaleRows(backend, a, Tensor.fromArray('f64', [n], new Array<number>(n).fill(3)));
    a.dispose();
    expect(backend.bufferPoolStats().returnedByDispose).toBe(returned);
    open();
    await blocker;
    const out = await p;
    expect(out.toArray()).toEqual(expected);
    out.dispose();
  });
});

describe('scopes and sessions', () => {
  it('in an execution scope: every operation on the scope entry (one executor entry); in a session: no new entry', async () => {
    const entries = () => backend.executionInfo().executorEntries.installs;
    const a = mat([[1, 2], [3, 4]]);
    const s = Tensor.fromArray('f64', [2], [2, 3]);
    let before = entries();
    const r = await backend.withExecutionScope(async () => {
      const x = await scaleRows(backend, a, s);
      return scaleRows(backend.clone(), x, s);
    });
    expect(entries() - before).toBe(1);
    expect(r.toArray({ order: 'row' })).toEqual([4, 8, 27, 36]);
    before = entries();
    const q = await backend.withBackendSession(async (session) => scaleRows(session, await scaleRows(session, a, s), s));
    expect(entries() - before).toBe(1);
    expect(q.toArray({ order: 'row' })).toEqual([4, 8, 27, 36]);
  });

  it('an operation begun in a session that resumes after the session ended is refused (ContextExpired), its kernel never runs', async () => {
    const log = probeLog();
    const b = await CpuBackend.create({ threads: 2, providers: [probedPackage(log, 1, false)] });
    try {
      let open!: () => void;
      const later = new Promise<void>((r) => (open = r));
      let late: Promise<unknown> | undefined;
      await b.withBackendSession(async (session) => {
        late = (async () => {
          await later;
          return scaleRows(session, mat([[1]]), Tensor.fromArray('f64', [1], [1]));
        })();
        void late.catch(() => undefined);
      });
      open();
      expect((await rejection(late!)).code).toBe('ContextExpired');
      expect(log.events()).toEqual([]);
    } finally {
      await b.close();
    }
  });
});

describe('tracing: one tenferro:provider event per kernel call', () => {
  async function events(fn: () => Promise<unknown>): Promise<ExtensionProviderEvent[]> {
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

  it('names which kernel ran, and why the extension declined', async () => {
    const declining: CpuProviderPackage = {
      kind: 'faer',
      name: 'declining',
      extensions: [[scaleRowsKey(), { name: 'declining', executionCapabilities: () => WELL_BEHAVED, declinesBeforeWriting: true, scaleRows: () => Unsupported.dtype('f64') } satisfies ScaleRowsKernels]],
    };
    const b = await CpuBackend.create({ threads: 2, providers: [declining] });
    try {
      const seen = await events(async () => {
        (await scaleRows(backend, mat([[1]]), Tensor.fromArray('f64', [1], [2]))).dispose();
        expect((await scaleRows(b, mat([[1]]), Tensor.fromArray('f64', [1], [2]))).toArray()).toEqual([2]);
      });
      expect(seen.map((e) => [e.op, e.slot, e.kernel, e.provider, e.outcome])).toEqual([
        ['example.scaleRows', 'example.scaleRows', 'builtin', BUILTIN_SCALE_ROWS.name, 'executed'],
        ['example.scaleRows', 'example.scaleRows', 'extension', 'declining', 'declined'],
        ['example.scaleRows', 'example.scaleRows', 'builtin', BUILTIN_SCALE_ROWS.name, 'executed'],
      ]);
      expect(seen[1]!.declineReason).toEqual({ kind: 'dtype', dtype: 'f64' });
      expect(seen[2]).toMatchObject({ fallbackFrom: 'declining', fallbackReason: { kind: 'dtype', dtype: 'f64' }, call: 'scaleRows', flops: 1 });
    } finally {
      await b.close();
    }
  });
});
