// deathTokens (#38): a token's collection — by a scavenge, which runs no FinalizationRegistry
// callback — reaches the handler with its id at the next event-loop turn; a token still held is
// never reported; malformed ids make no token.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { deathTokens, loadOs } from '../src/index.js';

// `--expose-gc` for this process: the tests force minor and major collections.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Collect (minor collections unless `major`) until `done()` holds, with a turn after each; bounded, never timed. */
async function collectUntil(done: () => boolean, type: 'minor' | 'major'): Promise<boolean> {
  for (let i = 0; i < 20 && !done(); i++) {
    gc({ type });
    await turn();
  }
  return done();
}

const os = loadOs();

describe.skipIf(!os.available)('deathTokens', () => {
  it('a dropped token is reported with its id after minor collections alone; a held one is not', async () => {
    const dead: number[] = [];
    const token = deathTokens((id) => dead.push(id))!;
    expect(token).toBeDefined();
    const held = token(1);
    (() => {
      for (let id = 10; id < 20; id++) token(id);
    })();
    // A registry entry for an object dropped beside them is not told by minor collections.
    let registryTold = false;
    const registry = new FinalizationRegistry(() => (registryTold = true));
    (() => registry.register({}, 0))();
    expect(await collectUntil(() => dead.length >= 10, 'minor')).toBe(true);
    expect([...dead].sort((a, b) => a - b)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    expect(registryTold).toBe(false);
    gc({ type: 'major' });
    await turn();
    expect(dead).not.toContain(1);
    expect(held?.byteLength).toBe(1);
  });

  it('each factory hears of its own tokens only; ids span [0, 2^32); a malformed channel or id makes no token', async () => {
    const first: number[] = [];
    const second: number[] = [];
    const one = deathTokens((id) => first.push(id))!;
    const two = deathTokens((id) => second.push(id))!;
    (() => {
      one(0);
      one(2 ** 32 - 1);
      two(5);
    })();
    expect(await collectUntil(() => first.length >= 2 && second.length >= 1, 'major')).toBe(true);
    expect([...first].sort((a, b) => a - b)).toEqual([0, 2 ** 32 - 1]);
    expect(second).toEqual([5]);
    const raw = os.available ? os.binding : undefined;
    const channel = raw?.onDeathTokens?.(() => {}) ?? -1;
    expect(channel).toBeGreaterThanOrEqual(0);
    for (const bad of [-1, 2 ** 32, 0.5, Number.NaN, '1', undefined]) expect(raw?.deathToken?.(channel, bad as number)).toBeUndefined();
    for (const bad of [-1, channel + 1, 0.5, '0']) expect(raw?.deathToken?.(bad as number, 1)).toBeUndefined();
    expect(raw?.onDeathTokens?.('not a function' as unknown as () => void)).toBe(-1);
  });

  it('a worker terminated while it holds tokens, and a process exiting with tokens alive and dead, end cleanly', () => {
    const index = fileURLToPath(new URL('../src/index.ts', import.meta.url)).replace(/src\/index\.ts$/, 'dist/index.js');
    const script = `
      import { Worker } from 'node:worker_threads';
      const { deathTokens } = await import(${JSON.stringify(index)});
      const src = 'const { deathTokens } = await import(' + JSON.stringify(${JSON.stringify(index)}) + ');' +
        'const token = deathTokens(() => {}); globalThis.kept = [];' +
        'for (let i = 0; i < 5000; i++) { const t = token(i); if (i % 3 === 0) globalThis.kept.push(t); }' +
        'const { parentPort } = await import("node:worker_threads"); parentPort.postMessage(1); setInterval(() => {}, 1000);';
      for (let i = 0; i < 3; i++) {
        const w = new Worker(src, { eval: true, type: 'module' });
        await new Promise((resolve) => w.once('message', resolve));
        await w.terminate();
      }
      const token = deathTokens(() => {});
      globalThis.kept = [];
      for (let i = 0; i < 5000; i++) { const t = token(i); if (i % 3 === 0) globalThis.kept.push(t); }
      console.log('done');
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect({ status: r.status, signal: r.signal, stderr: r.stderr }).toEqual({ status: 0, signal: null, stderr: '' });
    expect(r.stdout.trim()).toBe('done');
  });
});
