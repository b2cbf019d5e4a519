// close() and AbortSignal reach running work: an operation in flight settles at once on close(),
// a provider that never settles does not keep its permit, aborts settle waiting and running work.
import { describe, expect, it } from 'vitest';
import { CpuBackend, CpuProviderBundle, processArbiter, referenceGemmProvider, Tensor, type CpuGemmProvider } from '../../src/index.js';
import { expectCode, gate, kernel, until } from '../helpers.js';

const noop = kernel('noop');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');


describe('close() reaches running work', () => {
  it('an operation whose kernel is running settles with BackendClosed at once; an overlapping backend runs afterwards', async () => {
    const backend = await CpuBackend.create({ threads: 1 });
    const h = gate();
    const running = backend.install((ctx) => ctx.run(holdUntil, h.payload));
    void running.catch(() => undefined);
    await h.whenEntered();
    const closing = backend.close();
    await expectCode(running, 'BackendClosed', 'RuntimeState');
    await closing;
    const other = await CpuBackend.create({ threads: 1 });
    try {
      expect(await other.install((ctx) => ctx.run(noop).then(() => 'ran'))).toBe('ran');
    } finally {
      await other.close();
    }
    expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
  });

  it('a provider that never settles does not keep its permit after close()', async () => {
    const hanging: CpuGemmProvider = {
      name: 'hangs',
      executionCapabilities: () => referenceGemmProvider.executionCapabilities!(),
      gemm: () => new Promise(() => undefined),
    };
    const base = await CpuBackend.create({ threads: 1, providers: [] });
    const backend = base.withProviderBundle(CpuProviderBundle.builder('faer').gemmProvider(hanging).build());
    const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    let started = false;
    const op = backend.install(() => {
      started = true;
      return new Promise(() => undefined);
    });
    const mm = backend.matmul(a, a);
    void op.catch(() => undefined);
    void mm.catch(() => undefined);
    await until(() => started);
    await backend.close();
    await expectCode(op, 'BackendClosed');
    await expectCode(mm, 'BackendClosed');
    expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
  });
});

describe('AbortSignal', () => {
  it('aborted while waiting for the permit → AdmissionAborted; the queue stays consistent', async () => {
    const backend = await CpuBackend.create({ threads: 1 });
    try {
      const h = gate();
      const holder = backend.install((ctx) => ctx.run(holdUntil, h.payload));
      await h.whenEntered();
      const controller = new AbortController();
      const waiting = backend.install((ctx) => ctx.run(noop), { signal: controller.signal });
      await until(() => processArbiter().stats().waiting === 1);
      controller.abort(new Error('changed my mind'));
      await expectCode(waiting, 'AdmissionAborted', 'RuntimeState');
      h.open();
      await holder;
      expect(await backend.install(() => 'next')).toBe('next');
    } finally {
      await backend.close();
    }
  });

  it('an already-aborted signal rejects every operation before anything runs', async () => {
    const backend = await CpuBackend.create({ threads: 1 });
    try {
      const signal = AbortSignal.abort();
      const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
      const before = backend.executionInfo().executorEntries.installs;
      await expectCode(backend.matmul(a, a, { signal }), 'AdmissionAborted');
      await expectCode(backend.dotGeneralInto(Tensor.zeros('f64', [2, 2]), a, a, { contracting: [[1], [0]] }, { signal }), 'AdmissionAborted');
      await expectCode(backend.install(() => 1, { signal }), 'AdmissionAborted');
      await expectCode(backend.withBackendSession(() => 1, { signal }), 'AdmissionAborted');
      await expectCode(backend.withExecutionScope(() => 1, { signal }), 'AdmissionAborted');
      await expectCode(backend.withOuterLanes(2, () => undefined, { signal }), 'AdmissionAborted');
      await expectCode(backend.reshape(a.transpose(), [4], { signal }), 'AdmissionAborted');
      expect(backend.executionInfo().executorEntries.installs).toBe(before);
    } finally {
      await backend.close();
    }
  });

  it('aborted while running → ExecutionAborted once the running kernel returned; the abort word is raised; the permit is then free', async () => {
    const backend = await CpuBackend.create({ threads: 1 });
    try {
      const h = gate();
      const controller = new AbortController();
      let word: Int32Array | undefined;
      const running = backend.install(
        (ctx) => {
          word = ctx.abortWord;
          return ctx.run(holdUntil, h.payload);
        },
        { signal: controller.signal },
      );
      void running.catch(() => undefined);
      await h.whenEntered();
      controller.abort();
      expect(Atomics.load(word!, 0)).toBe(1);
      let settled = false;
      const markSettled = () => {
        settled = true;
      };
      running.then(markSettled, markSettled);
      await until(() => processArbiter().stats().active === 1);
      expect(settled).toBe(false); // the kernel (which does not poll) still runs under the permit
      h.open();
      await expectCode(running, 'ExecutionAborted', 'RuntimeState');
      expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
    } finally {
      await backend.close();
    }
  });

  it('aborted while its body still unwinds → ExecutionAborted at once, but the CPUs stay held until the body has ended (no overlapping execution, never Internal)', async () => {
    const backend = await CpuBackend.create({ threads: 1 });
    try {
      const controller = new AbortController();
      let letBodyEnd!: () => void;
      const bodyGate = new Promise<void>((resolve) => (letBodyEnd = resolve));
      let bodyEnded = false;
      const first = backend.install(
        async () => {
          controller.abort();
          await bodyGate; // the body goes on after the abort (no kernel is running)
          bodyEnded = true;
        },
        { signal: controller.signal },
      );
      await expectCode(first, 'ExecutionAborted', 'RuntimeState');
      // A second execution on the same CPUs is queued behind the unfinished body.
      let secondRan = false;
      const second = backend.install((ctx) => {
        secondRan = true;
        expect(bodyEnded).toBe(true);
        return ctx.run(noop).then(() => 'ran');
      });
      await until(() => processArbiter().stats().waiting === 1);
      expect(secondRan).toBe(false);
      letBodyEnd();
      expect(await second).toBe('ran');
      expect(processArbiter().stats()).toEqual({ active: 0, waiting: 0 });
    } finally {
      await backend.close();
    }
  });

  it('a signal shared by many queued operations adds one listener and no warning', async () => {
    const backend = await CpuBackend.create({ threads: 1 });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const h = gate();
      const holder = backend.install((ctx) => ctx.run(holdUntil, h.payload));
      await h.whenEntered();
      const controller = new AbortController();
      const queued = Array.from({ length: 50 }, () => backend.install(() => undefined, { signal: controller.signal }));
      queued.forEach((q) => void q.catch(() => undefined));
      await until(() => processArbiter().stats().waiting === 50);
      controller.abort();
      const results = await Promise.allSettled(queued);
      expect(results.every((r) => r.status === 'rejected' && (r.reason as { code: string }).code === 'AdmissionAborted')).toBe(true);
      h.open();
      await holder;
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await backend.close();
    }
  });

  it('a signal that is not an AbortSignal is InvalidArgument', async () => {
    const backend = await CpuBackend.create({ threads: 1 });
    try {
      const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
      await expectCode(backend.matmul(a, a, { signal: { aborted: false } as never }), 'InvalidArgument');
      await expectCode(backend.install(() => 1, { signal: 'stop' } as never), 'InvalidArgument');
      await expectCode(backend.install(() => 1, { sigal: AbortSignal.abort() } as never), 'InvalidArgument');
    } finally {
      await backend.close();
    }
  });
});
