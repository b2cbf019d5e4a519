// Dropped outputs without the @tenferro/os binding (#38), in a child process with
// TENFERRO_OS_DISABLE=1: no death tokens there, so the registry alone brings them home — after full
// collections, not minor ones (tensor-lifetime.test.ts covers the tokens themselves).
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('dropped outputs without the OS binding', () => {
  it('without the OS binding the registry alone brings dropped outputs home: after full collections, not minor ones', () => {
    const index = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      const { CpuBackend, Tensor } = await import(${JSON.stringify(index)});
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      const own = await CpuBackend.create({ threads: 1, providers: [] });
      const x = Tensor.zeros('f64', [16, 16]);
      await (async () => { for (let i = 0; i < 8; i++) await own.matmul(x, x); })();
      await turn();
      for (let i = 0; i < 3; i++) { gc({ type: 'minor' }); await turn(); }
      const afterMinor = own.bufferPoolStats().returnedByCollection;
      for (let i = 0; i < 20 && own.bufferPoolStats().returnedByCollection < 8; i++) { gc(); await turn(); }
      console.log(JSON.stringify({ afterMinor, afterMajor: own.bufferPoolStats().returnedByCollection }));
      await own.close();`;
    const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, TENFERRO_OS_DISABLE: '1' } });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({ afterMinor: 0, afterMajor: 8 });
  });
});
