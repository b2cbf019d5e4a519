// The thread census (`CpuBackend.census()`): every thread of the process with name, mask and owner,
// threads of tenferro and of providers checked against their domain.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { CpuBackend, type CpuProviderPackage, discoverCpuTopology, referenceGemmProvider } from '../src/index.js';
import { threadCensus } from '../src/testing/index.js';
import { takeThreadCensus } from '../src/backend/thread-census.js';
import { onePerCpuTopology, processAllowed } from './helpers.js';

const twoCpus = discoverCpuTopology().allowedCpus.size >= 2;
let backend: CpuBackend;
beforeAll(async () => {
  backend = await CpuBackend.create({ threads: 1 });
  await backend.ready();
});
afterAll(async () => {
  await backend.close();
});

describe('CpuBackend.census()', () => {
  it('lists every thread of /proc/self/task once, the main thread and the engine workers with their owners', () => {
    const census = backend.census();
    expect(census.pid).toBe(process.pid);
    expect(census.threads.map((t) => t.tid).sort((a, b) => a - b)).toEqual(threadCensus().filter((tid) => census.threads.some((t) => t.tid === tid)));
    expect(new Set(census.threads.map((t) => t.tid)).size).toBe(census.threads.length);
    const main = census.threads.find((t) => t.tid === process.pid)!;
    expect(main).toMatchObject({ owner: { kind: 'main' }, identifiedBy: 'process', cpus: processAllowed(), domainCpus: null, outsideDomain: false });
    const info = backend.executionInfo();
    expect(info.workers.length).toBeGreaterThan(0);
    for (const [lane, w] of info.workers.entries()) {
      const t = census.threads.find((x) => x.tid === w.tid)!;
      expect(t.owner).toEqual({ kind: 'engineWorker', backendKind: info.backendKind, domainId: Number(info.domainId), lane });
      expect(t).toMatchObject({ identifiedBy: 'tenferro', cpus: w.cpus, domainCpus: info.domainCpus, outsideDomain: false });
    }
    expect(census.outsideDomain).toEqual([]);
  });

  it('on Node 20, which names no thread, the V8 platform threads are the first ones after the main thread', () => {
    const census = backend.census();
    const named = census.threads.some((t) => t.identifiedBy === 'name');
    if (named) return; // a Node that names its threads is classified by name instead
    const platform = census.threads.filter((t) => t.owner.kind === 'v8Platform');
    expect(platform.length).toBe(5); // --v8-pool-size 4 + the delayed-task scheduler
    expect(platform.every((t) => t.identifiedBy === 'startupOrder')).toBe(true);
  });

  it.skipIf(!twoCpus)('a provider thread whose mask leaves the backend’s domain is flagged (needs 2 CPUs)', async () => {
    // A worker thread stands for a provider runtime's thread: it has the process mask (all CPUs),
    // while the backend's domain is one fake NUMA node of one CPU.
    const worker = new Worker(
      'const { parentPort } = require("node:worker_threads"); const fs = require("node:fs"); const l = fs.readlinkSync("/proc/thread-self"); parentPort.postMessage(Number(l.slice(l.lastIndexOf("/") + 1))); setInterval(() => {}, 1 << 30);',
      { eval: true },
    );
    const tid = await new Promise<number>((resolve) => worker.once('message', resolve));
    const threaded: CpuProviderPackage = { kind: 'faer', name: 'threaded test provider', gemm: referenceGemmProvider, threads: () => [{ tid, role: 'test runtime thread' }] };
    const topology = onePerCpuTopology();
    const all = await CpuBackend.create({ topology, threads: 1, providers: [threaded] });
    try {
      const node = all.forPlacement({ numaNode: topology.nodes[0]!.id });
      await node.ready();
      const census = node.census();
      const t = census.threads.find((x) => x.tid === tid)!;
      expect(t.owner).toEqual({ kind: 'provider', provider: 'threaded test provider', role: 'test runtime thread' });
      expect(t.identifiedBy).toBe('provider');
      expect(t.cpus).toBe(processAllowed());
      expect(t.domainCpus).toBe(topology.nodes[0]!.cpus.toString());
      expect(t.outsideDomain).toBe(true);
      expect(census.outsideDomain).toEqual([tid]);
      // Within the all-allowed domain the same thread is inside.
      const wide = await CpuBackend.create({ threads: 1, providers: [threaded] });
      await wide.ready();
      expect(wide.census().threads.find((x) => x.tid === tid)?.outsideDomain).toBe(false);
      await wide.close();
    } finally {
      await all.close();
      await worker.terminate();
    }
  });
});

describe('the procfs reader under the census', () => {
  it('reads name and mask per task; a task that vanished keeps its tid without a mask', () => {
    const root = mkdtempSync(join(tmpdir(), 'tenferro-proc-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true })); // #39: no temporary folder left
    const task = (tid: number, comm?: string, cpus?: string) => {
      mkdirSync(join(root, `self/task/${tid}`), { recursive: true });
      if (comm !== undefined) writeFileSync(join(root, `self/task/${tid}/comm`), `${comm}\n`);
      if (cpus !== undefined) writeFileSync(join(root, `self/task/${tid}/status`), `Name:\t${comm}\nCpus_allowed_list:\t${cpus}\n`);
    };
    task(process.pid, 'node', '0-3');
    task(900001, 'libuv-worker', '0-3');
    task(900002, 'V8Worker', '0-3');
    task(900003);
    const census = takeThreadCensus(undefined, root);
    const by = (tid: number) => census.threads.find((t) => t.tid === tid)!;
    expect(by(process.pid).owner).toEqual({ kind: 'main' });
    expect(by(900001)).toMatchObject({ owner: { kind: 'libuv' }, identifiedBy: 'name', cpus: '0-3' });
    expect(by(900002)).toMatchObject({ owner: { kind: 'v8Platform' }, identifiedBy: 'name' });
    expect(by(900003)).toMatchObject({ name: '', cpus: null, owner: { kind: 'other' }, identifiedBy: 'unknown', outsideDomain: false });
  });

  it('on Node 20 orders unnamed threads by when they started, also across a thread-id wrap at pid_max', () => {
    const root = mkdtempSync(join(tmpdir(), 'tenferro-proc-'));
    onTestFinished(() => rmSync(root, { recursive: true, force: true }));
    const task = (tid: number) => {
      mkdirSync(join(root, `self/task/${tid}`), { recursive: true });
      writeFileSync(join(root, `self/task/${tid}/comm`), 'node\n');
    };
    // The main thread started 3 ids before the wrap: its platform threads (--v8-pool-size 4 and the
    // delayed-task scheduler) got the last 3 ids and the first 2 after 300; a later thread got 302.
    mkdirSync(join(root, 'sys/kernel'), { recursive: true });
    writeFileSync(join(root, 'sys/kernel/pid_max'), `${process.pid + 4}\n`);
    for (const tid of [process.pid, process.pid + 1, process.pid + 2, process.pid + 3, 300, 301, 302]) task(tid);
    const census = takeThreadCensus(undefined, root);
    const platform = census.threads.filter((t) => t.owner.kind === 'v8Platform').map((t) => t.tid);
    expect(platform.sort((a, b) => a - b)).toEqual([300, 301, process.pid + 1, process.pid + 2, process.pid + 3]);
    expect(census.threads.find((t) => t.tid === 302)).toMatchObject({ owner: { kind: 'other' }, identifiedBy: 'unknown' });
  });
});
