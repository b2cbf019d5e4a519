import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { CpuBackend, ProcessArbiter, TenferroError, discoverCpuTopology, processArbiter } from '../src/index.js';
import { fakeNumaRoots, until } from './helpers.js';

/*
 * The process-wide arbiter across worker_thread isolates (contract R27, R28, R31): backends
 * created in different isolates share one arbiter. Coordination is through an Int32Array over a
 * SharedArrayBuffer and the arbiter's own process-wide counts — no sleeps, no timing.
 */

const SLOT = { ACTIVE: 0, MAX: 1, ENTERED: 2, HELD: 3, DONE: 5 };
const coreUrl = new URL('../dist/index.js', import.meta.url).href;
const fixture = new URL('./fixtures/arbiter/isolate-backend.mjs', import.meta.url);
const cpus = discoverCpuTopology().allowedCpus.toArray();

const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.terminate()));
  await until(() => arbiter().processStats().active === 0 && arbiter().processStats().waiting === 0);
});

function arbiter(): ProcessArbiter {
  const a = processArbiter();
  expect(a).toBeInstanceOf(ProcessArbiter);
  return a as ProcessArbiter;
}

function shared() {
  const flags = new Int32Array(new SharedArrayBuffer(4 * 8));
  return { flags, buffer: flags.buffer as SharedArrayBuffer };
}

/** Start a worker isolate with its own backend; resolves once its backend exists, with what it reports. */
function spawn(data: Record<string, unknown>): Promise<{ worker: Worker; arbiter: string; done: Promise<void> }> {
  const worker = new Worker(fixture, { workerData: { coreUrl, ...data } });
  workers.push(worker);
  let settleDone!: () => void;
  let failDone!: (e: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    settleDone = resolve;
    failDone = reject;
  });
  done.catch(() => undefined);
  return new Promise((resolve, reject) => {
    worker.on('message', (m: { ready?: boolean; arbiter?: string; done?: boolean }) => {
      if (m.ready === true) resolve({ worker, arbiter: m.arbiter!, done });
      if (m.done === true) settleDone();
    });
    worker.on('error', (e) => {
      reject(e);
      failDone(e);
    });
  });
}

function enter(flags: Int32Array): number {
  const now = Atomics.add(flags, SLOT.ACTIVE, 1) + 1;
  for (let max = Atomics.load(flags, SLOT.MAX); now > max; max = Atomics.load(flags, SLOT.MAX)) {
    if (Atomics.compareExchange(flags, SLOT.MAX, max, now) === max) break;
  }
  return Atomics.add(flags, SLOT.ENTERED, 1) + 1;
}

async function heldBy(flags: Int32Array): Promise<void> {
  const r = Atomics.waitAsync(flags, SLOT.HELD, 0);
  if (r.async) await r.value;
}

describe('process-wide arbiter across worker_thread isolates', () => {
  it('backends in two workers and the main thread on the same CPUs never run together', async () => {
    const { flags, buffer } = shared();
    const isolates = 3;
    const started = await Promise.all([0, 1].map(() => spawn({ buffer, scenario: 'serial', isolates })));
    expect(started.map((s) => s.arbiter)).toEqual(['process', 'process']);
    const backend = await CpuBackend.create({ threads: 1 });
    try {
      expect(backend.executionInfo().arbiter).toBe('process');
      await backend.install(async () => {
        const entered = enter(flags);
        await until(() => arbiter().processStats().waiting >= isolates - entered);
        Atomics.sub(flags, SLOT.ACTIVE, 1);
      });
      await Promise.all(started.map((s) => s.done));
    } finally {
      await backend.close();
    }
    // Every body waited, while active, until the others were queued — and none ever ran beside another.
    expect(Atomics.load(flags, SLOT.ENTERED)).toBe(3);
    expect(Atomics.load(flags, SLOT.MAX)).toBe(1);
  });

  it.skipIf(cpus.length < 2)('backends in two isolates on disjoint (fake NUMA) CPU sets run at the same time', async () => {
    const { flags, buffer } = shared();
    const roots = fakeNumaRoots([[cpus[0]!], [cpus[1]!]]);
    const other = await spawn({ buffer, scenario: 'overlap', roots, placement: { numaNode: 2 } });
    const backend = await CpuBackend.create({ threads: 1, topology: discoverCpuTopology(roots), placement: { numaNode: 0 } });
    try {
      await backend.install(async () => {
        enter(flags);
        await until(() => Atomics.load(flags, SLOT.ENTERED) >= 2);
        Atomics.sub(flags, SLOT.ACTIVE, 1);
      });
      await other.done;
    } finally {
      await backend.close();
    }
    expect(Atomics.load(flags, SLOT.MAX)).toBe(2);
  });

  it('the provider-exclusive permit held in a worker excludes a backend on the main thread (R28)', async () => {
    const { flags, buffer } = shared();
    const holder = await spawn({ buffer, scenario: 'exclusive' });
    await heldBy(flags);
    const backend = await CpuBackend.create({ threads: 1 });
    try {
      let ran = false;
      const run = backend.install(() => {
        ran = true;
      });
      await until(() => arbiter().stats().waiting === 1);
      expect(arbiter().processStats()).toMatchObject({ active: 1, waiting: 1 });
      expect(ran).toBe(false);
      holder.worker.postMessage('release');
      await run;
      expect(ran).toBe(true);
      await holder.done;
    } finally {
      await backend.close();
    }
  });

  it('a worker terminated while it holds a permit releases it: the waiter on the main thread then runs (R31)', async () => {
    const { flags, buffer } = shared();
    const holder = await spawn({ buffer, scenario: 'hold' });
    await heldBy(flags);
    const backend = await CpuBackend.create({ threads: 1 });
    try {
      const run = backend.install(() => 'ran');
      await until(() => arbiter().stats().waiting === 1);
      expect(arbiter().processStats()).toMatchObject({ active: 1, waiting: 1 });
      await holder.worker.terminate(); // mid-execution: it is never told to release
      expect(await run).toBe('ran');
      expect(arbiter().processStats()).toMatchObject({ active: 0, waiting: 0 });
    } finally {
      await backend.close();
    }
  });

  it('a worker terminated while it waits drops its waiter and wakes the waiter it blocked', async () => {
    const { flags, buffer } = shared();
    const permit = await arbiter().acquire({ providerExclusive: true });
    const waiter = await spawn({ buffer, scenario: 'hold' });
    await until(() => arbiter().processStats().waiting === 1);
    // A later request that conflicts with the worker's queued one waits behind it (R29)…
    const later = arbiter().acquire({ providerExclusive: true });
    await until(() => arbiter().processStats().waiting === 2);
    await waiter.worker.terminate();
    expect(arbiter().processStats()).toMatchObject({ active: 1, waiting: 1 });
    permit.release();
    // …and is admitted once the terminated worker's waiter is gone.
    (await later).release();
    expect(Atomics.load(flags, SLOT.HELD)).toBe(0);
  });

  it('AbortSignal ends a wait for a permit another isolate holds', async () => {
    const { flags, buffer } = shared();
    const holder = await spawn({ buffer, scenario: 'hold' });
    await heldBy(flags);
    const backend = await CpuBackend.create({ threads: 1 });
    try {
      const controller = new AbortController();
      const run = backend.install(() => 'ran', { signal: controller.signal });
      run.catch(() => undefined);
      await until(() => arbiter().processStats().waiting === 1);
      controller.abort(new Error('stop'));
      const error = await run.then(() => undefined, (e: unknown) => e);
      expect(TenferroError.is(error, 'AdmissionAborted')).toBe(true);
      expect(arbiter().processStats()).toMatchObject({ active: 1, waiting: 0 });
      holder.worker.postMessage('release');
      await holder.done;
      expect(await backend.install(() => 'after')).toBe('after');
    } finally {
      await backend.close();
    }
  });

  it('owners are unique across isolates (blocks of the process-wide counter)', async () => {
    const { buffer } = shared();
    const w = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       import(workerData.coreUrl).then((core) => parentPort.postMessage(Array.from({ length: 3000 }, () => core.newExecutionOwner())));`,
      { eval: true, workerData: { coreUrl, buffer } },
    );
    workers.push(w);
    const theirs = await new Promise<number[]>((resolve, reject) => {
      w.on('message', resolve);
      w.on('error', reject);
    });
    const { newExecutionOwner } = await import('../src/index.js');
    const mine = Array.from({ length: 3000 }, () => newExecutionOwner());
    expect(new Set([...mine, ...theirs]).size).toBe(6000);
  });
});

describe('two copies of @tenferro/os of different arbiter ABIs in one process', () => {
  it('processArbiter() refuses with ArbiterVersionConflict instead of starting a second arbiter', async () => {
    const { spawnSync } = await import('node:child_process');
    const { copyFileSync, mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadOs } = await import('@tenferro/os');
    const os = loadOs();
    if (!os.available) throw new Error(os.reason);
    const addon = os.path;
    const otherDir = mkdtempSync(join(tmpdir(), 'tenferro-os-other-'));
    onTestFinished(() => rmSync(otherDir, { recursive: true, force: true })); // #39: no temporary folder left
    const other = join(otherDir, 'tenferro_os.node');
    copyFileSync(addon, other);
    // The other copy loads first (ABI 1); core's own copy then claims ABI 7 (a test hook of the addon).
    const script = `
      require(${JSON.stringify(other)});
      process.env.TENFERRO_OS_ARBITER_ABI_CLAIM = '7';
      import(${JSON.stringify(coreUrl)}).then(async (core) => {
        try { core.processArbiter(); console.log('started'); } catch (e) { console.log(JSON.stringify({ code: e.code, kind: e.kind, detail: e.detail })); }
        try { await core.CpuBackend.create({ threads: 1 }); console.log('created'); } catch (e) { console.log(e.code); }
      });`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, TENFERRO_DISCOVER_PROVIDERS: '0' } });
    const lines = r.stdout.trim().split('\n');
    expect(JSON.parse(lines[0]!)).toEqual({ code: 'ArbiterVersionConflict', kind: 'RuntimeState', detail: { abi: 7, otherAbi: 1 } });
    expect(lines[1]).toBe('ArbiterVersionConflict');
  });
});
