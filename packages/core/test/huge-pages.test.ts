// Huge pages for large storage (#38): storage of 2 MiB or more starts its data on a 2 MiB
// boundary where THP is `always` or `madvise`, the range is advised MADV_HUGEPAGE in `madvise`
// mode, and TENFERRO_HUGE_PAGES=0 / TENFERRO_PREFAULT=0 turn placement, advice and pre-faulting off.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadOs, sharedMemoryRange, transparentHugePages } from '@tenferro/os';
import { CpuBackend, Tensor, hugePagePolicy } from '../src/index.js';
import { resetHugePagePolicy } from '../src/buffer/huge-pages.js';
import { gate, kernel } from './helpers.js';

const noop = kernel('noop');
const holdUntil = kernel<{ buffer: SharedArrayBuffer; index: number; enteredIndex: number; timeoutMs: number }, boolean>('holdUntil');

const MiB = 1024 * 1024;
const thp = transparentHugePages();
const osAvailable = loadOs().available;
const thpUsable = osAvailable && (thp.enabled === 'madvise' || thp.enabled === 'always') && thp.hugePageBytes === 2 * MiB;
const whyNot = !osAvailable ? 'the @tenferro/os binding is unavailable' : `THP is ${thp.enabled} on this machine`;

/** The smaps entry (first line and fields) of the mapping that holds `address`. */
function vmaOf(address: bigint): { range: [bigint, bigint]; fields: Map<string, string> } {
  const smaps = readFileSync('/proc/self/smaps', 'utf8');
  for (const block of smaps.split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)) {
    const [lo, hi] = block.slice(0, block.indexOf(' ')).split('-').map((h) => BigInt(`0x${h}`)) as [bigint, bigint];
    if (address >= lo && address < hi) {
      const fields = new Map<string, string>();
      for (const line of block.split('\n').slice(1)) {
        const m = /^(\w+):\s*(.*)$/.exec(line);
        if (m !== null) fields.set(m[1]!, m[2]!.trim());
      }
      return { range: [lo, hi], fields };
    }
  }
  throw new Error(`no mapping holds 0x${address.toString(16)}`);
}

/** Where `t`'s data starts in this process. */
function dataAddress(t: Tensor): bigint {
  return sharedMemoryRange(t.buffer).address + BigInt(t.offset * (t.dtype === 'f64' ? 8 : 4));
}

const saved = { huge: process.env.TENFERRO_HUGE_PAGES, prefault: process.env.TENFERRO_PREFAULT };
afterEach(() => {
  for (const [name, value] of [
    ['TENFERRO_HUGE_PAGES', saved.huge],
    ['TENFERRO_PREFAULT', saved.prefault],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetHugePagePolicy();
});

describe('hugePagePolicy', () => {
  it('follows the kernel mode, and each off switch turns its part off with a reason', () => {
    const on = hugePagePolicy({});
    expect(on.thp).toBe(thp.enabled);
    expect(on.defrag).toBe(thp.defrag);
    expect(on.prefault).toBe(true);
    expect(on.placement).toBe(thpUsable);
    expect(on.advice).toBe(thpUsable && thp.enabled === 'madvise');
    expect(on.reason === '').toBe(thpUsable);
    const noHuge = hugePagePolicy({ TENFERRO_HUGE_PAGES: '0' });
    expect(noHuge).toMatchObject({ placement: false, advice: false, prefault: true, reason: 'TENFERRO_HUGE_PAGES=0' });
    expect(hugePagePolicy({ TENFERRO_PREFAULT: '0' })).toMatchObject({ prefault: false, placement: thpUsable });
    expect(hugePagePolicy({ TENFERRO_PREFAULT: 'off', TENFERRO_HUGE_PAGES: 'false' })).toMatchObject({ prefault: false, placement: false });
    expect(hugePagePolicy({ TENFERRO_HUGE_PAGES: '1' }).placement).toBe(thpUsable);
  });
});

describe.skipIf(!thpUsable)(thpUsable ? `huge-page placement (THP ${thp.enabled})` : `huge-page placement (skipped: ${whyNot})`, () => {
  it('storage of 2 MiB or more starts on a 2 MiB boundary, smaller storage on a 64-byte line', () => {
    const big = Tensor.zeros('f64', [512, 512]); // 2 MiB
    expect(dataAddress(big) % BigInt(2 * MiB)).toBe(0n);
    expect(big.buffer.byteLength).toBe(4 * MiB); // padded by a huge page
    const small = Tensor.zeros('f64', [512, 511]); // just below
    expect(dataAddress(small) % 64n).toBe(0n);
    expect(small.buffer.byteLength).toBe(512 * 511 * 8 + 48);
  });

  it('TENFERRO_HUGE_PAGES=0: storage is placed as before (64-byte lines, no 2 MiB padding)', () => {
    process.env.TENFERRO_HUGE_PAGES = '0';
    resetHugePagePolicy();
    const t = Tensor.zeros('f64', [1024, 1024]);
    expect(t.buffer.byteLength).toBe(8 * MiB + 48);
    expect(dataAddress(t) % 64n).toBe(0n);
  });
});

describe('huge pages back a 16 MiB pooled buffer', () => {
  const title = 'the VMA of a 16 MiB pooled output shows THPeligible: 1';
  it.skipIf(!thpUsable)(thpUsable ? `${title} (THP ${thp.enabled})` : `${title} (skipped: ${whyNot})`, async () => {
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      // A cheap 2048×1024 f64 product (K = 1): a 16 MiB fresh output from the engine's pool.
      const x = Tensor.fromArray('f64', [2048, 1], Array.from({ length: 2048 }, (_, i) => i % 7));
      const y = Tensor.fromArray('f64', [1, 1024], Array.from({ length: 1024 }, (_, i) => i % 5));
      const out = await b.matmul(x, y);
      expect(b.bufferPoolStats().misses).toBeGreaterThanOrEqual(1);
      const start = dataAddress(out);
      expect(start % BigInt(2 * MiB)).toBe(0n);
      const vma = vmaOf(start);
      expect(vma.fields.get('THPeligible')).toBe('1');
      // The advised mapping covers the data (madvise splits it off at the data's 2 MiB boundaries).
      const end = start + BigInt(16 * MiB);
      expect(vma.range[0] <= start && vma.range[1] >= end).toBe(true);
      expect(out.toArray()[2047 + 2048 * 1023]).toBe((2047 % 7) * (1023 % 5));
      console.info(`16 MiB pooled output: THPeligible ${vma.fields.get('THPeligible')}, AnonHugePages ${vma.fields.get('AnonHugePages')} (reported, not asserted)`);
      out.dispose();
    } finally {
      await b.close();
    }
  });
});

describe('collection nudges (#38)', () => {
  it('report their pressure to V8 at the next event-loop turn, once for several asks: never in front of the kernel of the operation that asked', async () => {
    const { nudgeCollection, pressureReports } = await import('../src/tensor/tensor-storage.js');
    const before = pressureReports();
    nudgeCollection();
    nudgeCollection();
    expect(pressureReports()).toBe(before);
    await new Promise((resolve) => setImmediate(resolve));
    expect(pressureReports()).toBe(before + 1);
    nudgeCollection();
    await new Promise((resolve) => setImmediate(resolve));
    expect(pressureReports()).toBe(before + 2);
  });

  it('report a queued nudge as soon as the kernel after it outlasts its poll: V8 answers while that kernel runs, not in front of the next post', async () => {
    const { nudgeCollection, pressureReports } = await import('../src/tensor/tensor-storage.js');
    const b = await CpuBackend.create({ threads: 1, providers: [] });
    try {
      await b.install((ctx) => ctx.run(noop, undefined)); // the worker started: from here an operation posts within microtasks
      const g = gate();
      const before = pressureReports();
      nudgeCollection();
      const running = b.install((ctx) => ctx.run(holdUntil, g.payload));
      // Microtasks only, no event-loop turn (the nudge's own immediate cannot run): the wait for the held kernel reports it.
      for (let i = 0; i < 100_000 && pressureReports() === before; i++) await Promise.resolve();
      const reported = pressureReports() - before;
      g.open();
      await running;
      expect(reported).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(pressureReports()).toBe(before + 1); // the queued immediate found nothing left to report
    } finally {
      await b.close();
    }
  });

  it('doubles the distance after each futile nudge, up to 4×, and resets once storage came back by collection', async () => {
    const { BufferPool } = await import('../src/buffer/buffer-pool.js');
    const { PoolLimit } = await import('../src/buffer/pool-limit.js');
    const pool = new BufferPool(new PoolLimit(64 * MiB));
    try {
      expect(pool.nudgeBackoff).toBe(1);
      pool.nudged(); // the first nudge: no earlier one to judge
      const backoffs = [pool.nudgeBackoff];
      for (let i = 0; i < 3; i++) {
        pool.nudged();
        backoffs.push(pool.nudgeBackoff);
      }
      expect(backoffs).toEqual([1, 2, 4, 4]);
      pool.returnStorage('f64', new SharedArrayBuffer(4 * MiB), 'collected');
      pool.nudged();
      expect(pool.nudgeBackoff).toBe(1);
      pool.returnStorage('f64', new SharedArrayBuffer(4 * MiB), 'disposed'); // a dispose is not the nudge's doing
      pool.nudged();
      expect(pool.nudgeBackoff).toBe(2);
    } finally {
      pool.close();
    }
  });
});
