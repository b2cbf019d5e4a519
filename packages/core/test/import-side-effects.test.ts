import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('importing @tenferro/core', () => {
  it('does no work: no native addon loaded, no thread started, nothing discovered', () => {
    const script = `
      import { readFileSync, readdirSync } from 'node:fs';
      const threads = () => readdirSync('/proc/self/task').length;
      const addons = () => readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((l) => l.endsWith('.node')).length;
      await import('node:fs/promises').then((fs) => fs.readFile('/proc/self/status')); // libuv's thread pool starts on async I/O, as module loading does
      const before = { threads: threads(), addons: addons() };
      const core = await import(${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)});
      await import(${JSON.stringify(new URL('../dist/testing/index.js', import.meta.url).href)}).catch(() => undefined);
      await import(${JSON.stringify(new URL('../dist/piscina/index.js', import.meta.url).href)});
      const after = { threads: threads(), addons: addons() };
      console.log(JSON.stringify({ before, after, arbiter: Object.getOwnPropertySymbols(globalThis).map(String).filter((s) => s.includes('tenferro')) , exports: Object.keys(core).length }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.after).toEqual(out.before);
    expect(out.arbiter).toEqual([]);
    expect(out.exports).toBeGreaterThan(20);
  });
});
