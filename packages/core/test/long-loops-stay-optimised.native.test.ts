// A loop of operations gives away gigabytes of outputs over its life: no running byte total on that
// path may leave V8's small-integer range and deoptimise the code every call runs (see
// src/util/running-total.ts). Observed in a process of its own with V8's `--trace-deopt`: its
// lines name the reason, and the loop after its warm-up is read (or, where the count passes its
// bound within the warm-up, the whole run).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const MARK = 'tenferro: warmed up';

/**
 * The deoptimisations of `loop` (a disposing or dropping loop body over the outer product of an
 * `n`×1 and a 1×`n` f64 tensor) as `reason: function` lines: those after 1,500 warm calls, or with
 * `whole`, those of the whole run.
 */
function deopts(loop: string, options: { readonly n?: number; readonly calls?: number; readonly whole?: boolean } = {}): string[] {
  const { n = 256, calls = 5000, whole = false } = options;
  const index = new URL('../dist/index.js', import.meta.url).href;
  const script = `
    const { CpuBackend, Tensor } = await import(${JSON.stringify(index)});
    const backend = await CpuBackend.create({ threads: 1, providers: [] });
    const x = Tensor.fromArray('f64', [${n}, 1], Array.from({ length: ${n} }, (_, i) => i % 5));
    const y = Tensor.fromArray('f64', [1, ${n}], Array.from({ length: ${n} }, (_, i) => i % 3));
    const call = async () => { ${loop} };
    for (let i = 0; i < 1500; i++) await call();
    console.log(${JSON.stringify(MARK)});
    for (let i = 0; i < ${calls}; i++) await call();
    await backend.close();
  `;
  const out = execFileSync(process.execPath, ['--trace-deopt', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  expect(out).toContain(MARK);
  const read = whole ? out : out.slice(out.indexOf(MARK));
  const found: string[] = [];
  for (const m of read.matchAll(/reason: (overflow|not a Smi|lost precision)\): begin\. deoptimizing 0x[0-9a-f]+ <JSFunction ([^ >(]*)/g)) found.push(`${m[1]}: ${m[2] || '(anonymous)'}`);
  return found;
}

describe('long loops stay optimised', () => {
  // An outer product of 256 elements: a 512 KiB f64 output from a cheap kernel (below the 2 MiB of bulk storage).
  it('a disposing loop passing 2 GiB of outputs: no deoptimisation for an integer overflow', () => {
    // 5,000 outputs after the warm-up: 2.4 GiB given away in all, past 2^30 and 2^31 bytes.
    expect(deopts('(await backend.matmul(x, y)).dispose();')).toEqual([]);
  }, 120_000);

  it('a loop that drops its outputs, the same', () => {
    expect(deopts('await backend.matmul(x, y);')).toEqual([]);
  }, 120_000);

  // An engine worker counts the storage each task's structured-clone payload names until it
  // collects its heap, and it collects at most every so often (COLLECT_DUTY in worker-entry.ts).
  // Small outputs are carved from 4 MiB shared slabs, which every such payload names whole: the count
  // passes 2^31 bytes within the warm-up, so this loop is read from its first call.
  it('a disposing loop of 64×64 outputs, from its first call: the same', () => {
    expect(deopts('(await backend.matmul(x, y)).dispose();', { n: 64, calls: 100, whole: true })).toEqual([]);
  }, 120_000);
});
