// #36: without the os binding (its documented switch TENFERRO_OS_DISABLE=1) the arbiter is the
// isolate's alone, and exclusion across worker_threads isolates is lost: said out loud with
// TENFERRO_ISOLATE_ARBITER, once per isolate, where another isolate can be running backends — a
// backend created in a worker_thread, or in the main thread while it has live workers. Each case
// runs in a child process (the warning is once per isolate); workers are coordinated by messages.
import { describe, expect, it } from 'vitest';
import { type ChildWarning, runCoreChild } from './helpers.js';

const coreDist = JSON.stringify(new URL('../dist/index.js', import.meta.url).href);

type Warning = ChildWarning;

function run(body: string, osDisabled = true): { warnings: Warning[]; [key: string]: unknown } {
  return runCoreChild(body, { imports: "import { Worker } from 'node:worker_threads';", env: { TENFERRO_DISCOVER_PROVIDERS: '0', TENFERRO_OS_DISABLE: osDisabled ? '1' : undefined } });
}

/** A worker that reports 'up', then exits when told. */
const idleWorker = `
  const idle = new Worker('const { parentPort } = require("node:worker_threads"); parentPort.once("message", () => parentPort.close()); parentPort.postMessage("up");', { eval: true, execArgv: [] });
  await new Promise((r) => idle.once('message', r));`;
const stopIdle = `idle.postMessage('stop'); await new Promise((r) => idle.once('exit', r));`;

const isolateWarnings = (ws: readonly Warning[]) => ws.filter((w) => w.code === 'TENFERRO_ISOLATE_ARBITER');

describe('lost cross-isolate exclusion is a warning of its own (TENFERRO_ISOLATE_ARBITER, #36)', () => {
  it('a backend created inside a worker_thread warns once in that isolate', () => {
    const r = run(`
      // CommonJS (execArgv: [] — not the parent's --input-type=module) with a dynamic import of core.
      const w = new Worker(\`
        const { parentPort } = require('node:worker_threads');
        (async () => {
          const core = await import(${coreDist});
          const warnings = [];
          process.on('warning', (w) => warnings.push({ code: w.code, message: w.message }));
          const a = await core.CpuBackend.create({ threads: 1 });
          const b = await core.CpuBackend.create({ threads: 1 });
          const arbiter = a.executionInfo().arbiter;
          await a.close(); await b.close();
          await new Promise((r) => setImmediate(r));
          parentPort.postMessage({ warnings, arbiter });
        })();\`, { eval: true, execArgv: [] });
      out.worker = await new Promise((resolve, reject) => { w.once('message', resolve); w.once('error', reject); });
      await new Promise((r) => w.once('exit', r));`);
    const worker = r.worker as { warnings: Warning[]; arbiter: string };
    expect(worker.arbiter).toBe('isolate');
    const inWorker = isolateWarnings(worker.warnings);
    expect(inWorker).toHaveLength(1);
    expect(inWorker[0]!.message).toContain('created in a worker_thread');
    expect(inWorker[0]!.message).toContain('exclusion across worker_threads isolates is NOT enforced');
    expect(inWorker[0]!.message).toContain('npm rebuild @tenferro/os');
    // The main thread created no backend: nothing there.
    expect(r.warnings).toEqual([]);
  });

  it('a backend created in the main thread while a worker_thread is live warns once', () => {
    const r = run(`
      ${idleWorker}
      const a = await core.CpuBackend.create({ threads: 1 });
      const b = await core.CpuBackend.create({ threads: 1 });
      out.arbiter = a.executionInfo().arbiter;
      ${stopIdle}
      await a.close(); await b.close();`);
    expect(r.arbiter).toBe('isolate');
    expect(r.warnings.map((w) => w.code)).toEqual(['TENFERRO_UNPINNED', 'TENFERRO_ISOLATE_ARBITER']);
    expect(isolateWarnings(r.warnings)[0]!.message).toContain('created in the main thread while 1 worker_thread is live');
  });

  it('a worker_thread started after a main-thread backend on the isolate arbiter warns too (same hazard, other order)', () => {
    const r = run(`
      const a = await core.CpuBackend.create({ threads: 1 });
      ${idleWorker}
      ${stopIdle}
      await a.close();`);
    expect(r.warnings.map((w) => w.code)).toEqual(['TENFERRO_UNPINNED', 'TENFERRO_ISOLATE_ARBITER']);
    expect(isolateWarnings(r.warnings)[0]!.message).toMatch(/a worker_thread \(threadId \d+\) started while this main isolate has a backend/);
  });

  it('the main thread with no worker_threads (its own engine workers aside) does not warn; TENFERRO_UNPINNED names the lost exclusion', () => {
    const r = run(`
      const a = await core.CpuBackend.create({ threads: 2 });
      const b = await core.CpuBackend.create({ threads: 1 });
      const c = await core.CpuBackend.create({ threads: 1 });
      out.workers = a.executionInfo().workers.length;
      await a.close(); await b.close(); await c.close();`);
    expect(r.workers).toBeGreaterThan(0);
    expect(r.warnings.map((w) => w.code)).toEqual(['TENFERRO_UNPINNED']);
    expect(r.warnings[0]!.message).toContain('backends in other worker_threads isolates are NOT kept off this one');
    expect(r.warnings[0]!.message).toContain('no exclusion across isolates');
  });

  it('with the os binding the arbiter is process-wide: a live worker_thread makes no warning', () => {
    const r = run(
      `${idleWorker}
       const a = await core.CpuBackend.create({ threads: 1 });
       out.arbiter = a.executionInfo().arbiter;
       ${stopIdle}
       await a.close();`,
      false,
    );
    expect(r.arbiter).toBe('process');
    expect(r.warnings).toEqual([]);
  });
});
