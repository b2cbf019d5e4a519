// Dropped outputs without the @tenferro/os binding (#38), in a child process with
// TENFERRO_OS_DISABLE=1: no death tokens there, so the registry alone brings them home — after full
// collections, not minor ones (tensor-lifetime.test.ts covers the tokens themselves).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('dropped outputs without the OS binding', () => {
  it('without the OS binding the registry alone brings dropped outputs home: after full collections, not minor ones', () => {
    const index = new URL('../dist/index.js', import.meta.url).href;
    // V8 may run a full collection of its own at any moment (its memory reducer, a heap limit):
    // a window of minor collections that saw one proves nothing, so it is tried again (at most 5
    // times), each time on eight new dropped outputs and after a full collection brought every
    // earlier one home. Full collections are seen on perf_hooks' 'gc' entries.
    const script = `
      const { CpuBackend, Tensor } = await import(${JSON.stringify(index)});
      const { PerformanceObserver, constants } = await import('node:perf_hooks');
      let majors = 0;
      new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++; }).observe({ entryTypes: ['gc'] });
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      const own = await CpuBackend.create({ threads: 1, providers: [] });
      const x = Tensor.zeros('f64', [16, 16]);
      const returned = () => own.bufferPoolStats().returnedByCollection;
      let clean = false, afterMinor = -1, afterMajor = -1, attempts = 0;
      while (!clean && attempts < 5) {
        attempts++;
        gc(); await turn(); await turn();
        const start = returned();
        const before = majors;
        await (async () => { for (let i = 0; i < 8; i++) await own.matmul(x, x); })();
        await turn();
        for (let i = 0; i < 3; i++) { gc({ type: 'minor' }); await turn(); }
        afterMinor = returned() - start;
        await turn(); await turn(); // the window's 'gc' entries delivered
        clean = majors === before;
        for (let i = 0; i < 20 && returned() - start < 8; i++) { gc(); await turn(); }
        afterMajor = returned() - start;
      }
      console.log(JSON.stringify({ clean, afterMinor, afterMajor, attempts }));
      await own.close();`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, TENFERRO_OS_DISABLE: '1' } });
    expect(r.status, r.stderr).toBe(0);
    const seen = JSON.parse(r.stdout.trim().split('\n').pop()!) as { clean: boolean; afterMinor: number; afterMajor: number; attempts: number };
    expect({ clean: seen.clean, afterMinor: seen.afterMinor, afterMajor: seen.afterMajor }, `attempts: ${seen.attempts}`).toEqual({ clean: true, afterMinor: 0, afterMajor: 8 });
  });
});
