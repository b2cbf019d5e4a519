// The provider-exclusive permit is exclusive in the process (R27, R28), not only in one isolate:
// a blas execution held in the main isolate keeps a blas (or faer) execution of a worker_thread
// isolate waiting, whatever its CPUs. Coordinated by the process arbiter's stats, messages and
// setImmediate polling (no sleeps); the tenferro:execution spans of both isolates, forwarded with
// hrtime stamps, never overlap.
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { CpuBackend, type ForwardedDiagnosticsEvent, Tensor, forwardDiagnostics, processArbiter } from '@tenferro/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blasProviderStatus, createBlasProvider } from '../src/index.js';

const tick = () => new Promise<void>((r) => setImmediate(r));
async function until(cond: () => boolean, what: string, limit = 500_000): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (cond()) return;
    await tick();
  }
  throw new Error(`timed out waiting for ${what}`);
}

const core = new URL('../node_modules/@tenferro/core/dist/index.js', import.meta.url).href; // the workspace's core, as the tests import it
const blasDist = new URL('../dist/index.js', import.meta.url).href;
const available = blasProviderStatus().available;
const arbiter = processArbiter() as ReturnType<typeof processArbiter> & { kind: string; processStats?: () => { active: number; waiting: number } };

/** A worker isolate with a backend of `kind` (warmed by one matmul) that runs one more matmul on 'go'. */
function isolate(kind: 'blas' | 'faer', port: MessagePort): Worker {
  const source = `
    import { parentPort, workerData } from 'node:worker_threads';
    const { CpuBackend, Tensor, forwardDiagnostics } = await import(workerData.core);
    const { createBlasProvider } = await import(workerData.blas);
    const stop = forwardDiagnostics(workerData.port);
    const backend = await CpuBackend.create(workerData.kind === 'blas' ? { kind: 'blas', threads: 1, providers: [createBlasProvider()] } : { kind: 'faer', threads: 1 });
    const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
    (await backend.matmul(a, a)).dispose();
    parentPort.postMessage('ready');
    parentPort.once('message', async () => {
      const c = await backend.matmul(a, a);
      parentPort.postMessage({ done: c.toArray() });
      await backend.close();
      stop();
      workerData.port.close();
    });`;
  return new Worker(source, { eval: true, workerData: { core, blas: blasDist, kind, port }, transferList: [port] });
}

describe.runIf(available && arbiter.kind === 'process')('the provider-exclusive permit across isolates', () => {
  let blas: CpuBackend;
  beforeAll(async () => {
    blas = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
  });
  afterAll(async () => {
    await blas.close();
  });

  for (const kind of ['blas', 'faer'] as const) {
    it(`a blas session in the main isolate keeps a ${kind} matmul of a worker isolate waiting; it runs once the session ends`, async () => {
      const log: ForwardedDiagnosticsEvent[] = [];
      const stop = forwardDiagnostics((e) => log.push(e));
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (e: ForwardedDiagnosticsEvent) => log.push(e));
      const worker = isolate(kind, port2);
      try {
        let done: unknown;
        let failed: unknown;
        // The worker's backend is ready when it says so (an event, not a count of turns: building a
        // backend in a fresh isolate under the sanitizer builds takes seconds on a loaded machine).
        const readyOrFailed = new Promise<void>((resolve) => {
          worker.on('message', (m: unknown) => (m === 'ready' ? resolve() : (done = m)));
          worker.once('error', (e) => {
            failed = e;
            resolve();
          });
        });
        await readyOrFailed;
        expect(failed).toBeUndefined();
        let release!: () => void;
        const held = new Promise<void>((r) => (release = r));
        let inBlas = false;
        const session = blas.withBackendSession(async (s) => {
          inBlas = true;
          const a = Tensor.fromArray('f64', [2, 2], [1, 0, 0, 1]);
          (await s.dotGeneral(a, a, { contracting: [[1], [0]] })).dispose();
          await held;
        });
        await until(() => inBlas, 'the blas session');
        worker.postMessage('go');
        // The worker's admission queues behind the main isolate's exclusive permit.
        await until(() => (arbiter.processStats?.().waiting ?? 0) >= 1, `the ${kind} matmul of the worker to queue`);
        expect(done).toBeUndefined();
        release();
        await session;
        await until(() => done !== undefined || failed !== undefined, 'the worker matmul');
        expect(failed).toBeUndefined();
        expect(done).toEqual({ done: [7, 10, 15, 22] });
        // Every execution span of either isolate: none overlaps another.
        const list = log
          .filter((e) => e.channel === 'tenferro:execution' && e.phase === 'end')
          .map((e) => {
            const p = e.payload as { startTime: bigint; durationNs: number };
            return { start: p.startTime, end: p.startTime + BigInt(p.durationNs) };
          })
          .sort((x, y) => (x.start < y.start ? -1 : 1));
        expect(list.length).toBeGreaterThanOrEqual(2);
        for (let i = 1; i < list.length; i++) expect(list[i]!.start >= list[i - 1]!.end!).toBe(true);
      } finally {
        stop();
        port1.close();
        await worker.terminate();
      }
    });
  }
});
