// A loop of operations gives away gigabytes of outputs over its life: no running byte total on that
// path may leave V8's small-integer range and deoptimise the code every call runs (see
// src/util/running-total.ts). Observed in a process of its own with V8's `--trace-deopt`: its
// lines name the reason, and only the loop after its warm-up is read.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const MARK = 'tenferro: warmed up';

/** The deoptimisations of `loop` (a disposing or dropping loop body) after 1,500 warm calls, as `reason: function` lines. */
function deoptsAfterWarmUp(loop: string): string[] {
  const index = new URL('../dist/index.js', import.meta.url).href;
  const script = `
    const { CpuBackend, Tensor } = await import(${JSON.stringify(index)});
    const backend = await CpuBackend.create({ threads: 1, providers: [] });
    // An outer product: a 512 KiB f64 output from a cheap kernel (below the 2 MiB of bulk storage).
    const x = Tensor.fromArray('f64', [256, 1], Array.from({ length: 256 }, (_, i) => i % 5));
    const y = Tensor.fromArray('f64', [1, 256], Array.from({ length: 256 }, (_, i) => i % 3));
    const call = async () => { ${loop} };
    for (let i = 0; i < 1500; i++) await call();
    console.log(${JSON.stringify(MARK)});
    // 5,000 more outputs: 2.4 GiB given away in all, past 2^30 and 2^31 bytes.
    for (let i = 0; i < 5000; i++) await call();
    await backend.close();
  `;
  const out = execFileSync(process.execPath, ['--trace-deopt', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const after = out.slice(out.indexOf(MARK));
  expect(after.startsWith(MARK)).toBe(true);
  const found: string[] = [];
  for (const m of after.matchAll(/reason: (overflow|not a Smi|lost precision)\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction ([^ >(]*)/g)) found.push(`${m[1]}: ${m[2] || '(anonymous)'}`);
  return found;
}

describe('long loops stay optimised', () => {
  it('a disposing loop passing 2 GiB of outputs: no deoptimisation for an integer overflow', () => {
    expect(deoptsAfterWarmUp('(await backend.matmul(x, y)).dispose();')).toEqual([]);
  }, 120_000);

  it('a loop that drops its outputs, the same', () => {
    expect(deoptsAfterWarmUp('await backend.matmul(x, y);')).toEqual([]);
  }, 120_000);
});
