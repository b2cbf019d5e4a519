import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { ENGINE_WORKER_STACK_MB } from '../src/runtime/workers/engine-worker.js';
import { CpuBackend, discoverCpuTopology, processArbiter } from '../src/index.js';
import { cpusAllowedOfTask, expectCode, kernel } from './helpers.js';

const noop = kernel('noop');
const echo = kernel<unknown, unknown>('echo');
const asyncAdd = kernel<{ a: number; b: number }, number>('asyncAdd');
const fail = kernel<{ message: string }, never>('fail');
const exitWorker = kernel('exitWorker');
const whoami = kernel<undefined, { workerIndex: number; tid: number; cpus: string }>('whoami');
const census = kernel<undefined, number[]>('threadCensus');
const recursionDepth = kernel<undefined, number>('recursionDepth');

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;
let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 2 });
});
afterAll(async () => {
  await backend.close();
});

describe('engine worker threads', () => {
  it(`have a ${ENGINE_WORKER_STACK_MB} MiB stack, not a Node worker's default 4 MiB (native kernels such as OpenBLAS's getrf need more)`, async () => {
    const engine = await backend.install((ctx) => ctx.run(recursionDepth));
    // The same recursion in a worker with Node's default resource limits.
    const plain = new Worker(new URL('./fixtures/kernels/recursion-depth-worker.mjs', import.meta.url));
    const [defaultDepth] = (await once(plain, 'message')) as [number];
    await plain.terminate();
    expect(defaultDepth).toBeGreaterThan(1000);
    expect(engine).toBeGreaterThan(8 * defaultDepth);
  });
});

describe('kernel tasks', () => {
  it('carry structured payloads and results, shared memory without copies, async kernels', async () => {
    const sab = new SharedArrayBuffer(16);
    const payload = { n: 1, s: 'x', nested: [1, { b: true }], big: 2n ** 70n, sab };
    const back = (await backend.install((ctx) => ctx.run(echo, payload))) as typeof payload;
    expect(back).toEqual(payload);
    expect(back.sab).not.toBe(sab);
    new Int32Array(back.sab)[0] = 42;
    expect(new Int32Array(sab)[0]).toBe(42);
    expect(await backend.install((ctx) => ctx.run(asyncAdd, { a: 2, b: 3 }))).toBe(5);
    expect(await backend.install((ctx) => ctx.run(noop))).toBeUndefined();
  });

  it('a throwing kernel fails its task with KernelFailed carrying the worker-side error; the worker lives on', async () => {
    const tid = backend.executionInfo().workers[0]!.tid;
    const e = await expectCode(backend.install((ctx) => ctx.run(fail, { message: 'bad input' })), 'KernelFailed', 'BackendFailure');
    expect((e.cause as Error).message).toBe('bad input');
    expect((e.cause as { code: string }).code).toBe('E_TEST');
    expect((await backend.install((ctx) => ctx.run(whoami))).tid).toBe(tid);
  });

  it('a missing module or export fails the task, not the worker', async () => {
    const { defineKernel } = await import('../src/index.js');
    await expectCode(backend.install((ctx) => ctx.run(defineKernel(new URL('./fixtures/kernels/test-kernels.mjs', import.meta.url), 'nope'))), 'KernelFailed');
    await expectCode(backend.install((ctx) => ctx.run(defineKernel('file:///nonexistent/module.mjs', 'x'))), 'KernelFailed');
    expect(await backend.install((ctx) => ctx.run(asyncAdd, { a: 1, b: 1 }))).toBe(2);
  });

  it.skipIf(!twoCpus)('workers create no threads of their own: the census is stable across tasks (needs 2 CPUs: a pool of 2)', async () => {
    const before = await backend.install((ctx) => ctx.run(census));
    await backend.withBackendSession((s) => s.context.workerPool()!.map(noop, [1, 2, 3, 4, 5, 6]));
    const after = await backend.install((ctx) => ctx.run(census));
    expect(after).toEqual(before);
  });
});

describe('worker death', () => {
  it('a worker that exits fails its task with WorkerDied, never hangs, and is replaced pinned and verified', async () => {
    const b = await CpuBackend.create({ threads: 2 });
    try {
      const oldTid = b.executionInfo().workers[0]!.tid;
      await expectCode(b.install((ctx) => ctx.run(exitWorker)), 'WorkerDied', 'BackendFailure');
      expect(processArbiter().stats().active).toBe(0);
      const after = await b.install((ctx) => ctx.run(whoami));
      expect(after.tid).not.toBe(oldTid);
      expect(after.cpus).toBe(b.executionInfo().domainCpus);
      const info = b.executionInfo();
      expect(info.workers[0]!.tid).toBe(after.tid);
      expect(cpusAllowedOfTask(after.tid)).toBe(info.domainCpus);
    } finally {
      await b.close();
    }
  });

  it('an uncaught error in a worker fails the task it held with WorkerDied and the worker is replaced', async () => {
    const b = await CpuBackend.create({ threads: 1 });
    try {
      await expectCode(b.install((ctx) => ctx.run(kernel('uncaughtLater'))), 'WorkerDied', 'BackendFailure');
      expect((await b.install((ctx) => ctx.run(whoami))).cpus).toBe(b.executionInfo().domainCpus);
    } finally {
      await b.close();
    }
  });

  it.skipIf(!twoCpus)('fan-out with a dying worker fails the whole operation with WorkerDied (needs 2 CPUs: a pool of 2)', async () => {
    const b = await CpuBackend.create({ threads: 2 });
    try {
      await expectCode(
        b.withBackendSession((s) => s.context.workerPool()!.map(kernel('exitWorker'), [1, 2])),
        'WorkerDied',
      );
      const tids = await b.withBackendSession(async (s) => (await s.context.workerPool()!.map(whoami, [undefined, undefined])).map((w) => w.tid));
      expect(new Set(tids).size).toBe(2);
    } finally {
      await b.close();
    }
  });
});

describe('verification', () => {
  it('a domain set the process may not use fails construction with WorkerPinning; nothing runs unverified', async () => {
    const real = discoverCpuTopology();
    const bogus = real.allowedCpus.last + 1;
    const root = mkdtempSync(join(tmpdir(), 'tenferro-pin-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true })); // #39: no temporary folder left
    const write = (p: string, t: string) => {
      mkdirSync(dirname(join(root, p)), { recursive: true });
      writeFileSync(join(root, p), t);
    };
    write('proc/self/status', `Cpus_allowed_list:\t${real.allowedCpus.toString()},${bogus}\n`);
    write('sys/devices/system/node/node0/cpulist', `${real.allowedCpus.toString()},${bogus}\n`);
    const topology = discoverCpuTopology({ sysfsRoot: join(root, 'sys'), procRoot: join(root, 'proc') });
    const e = await expectCode(CpuBackend.create({ topology, threads: 2 }), 'WorkerPinning', 'BackendFailure');
    expect(e.detail.code).toBe('CpuOutsideAllowedSet');
    expect(e.detail.worker).toBeTypeOf('number');
  });
});

describe('process-only Node flags', () => {
  it('a process started with --expose-gc (a flag workers reject) still starts engines: the flag is dropped for workers', async () => {
    const { spawnSync } = await import('node:child_process');
    const script = `
      import { CpuBackend, Tensor } from ${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)};
      const b = await CpuBackend.create({ threads: 1, providers: [] });
      const x = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
      console.log(JSON.stringify({ gc: typeof gc, product: (await b.matmul(x, x)).toArray() }));
      await b.close();`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ gc: 'function', product: [7, 10, 15, 22] });
  });
});
