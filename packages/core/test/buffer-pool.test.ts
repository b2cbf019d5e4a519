import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BufferLoan, BufferPool } from '../src/buffer/buffer-pool.js';
import { SLAB_BYTES, WIDE_SLAB_BLOCK_MAX_BYTES, WIDE_SLAB_BYTES, blockBytes, carvable, isSlab, slabBytes } from '../src/buffer/storage-slab.js';
import { DEFAULT_RETAINED_BYTES, PoolLimit, retainedBytesFromEnv } from '../src/buffer/pool-limit.js';
import { TenferroError } from '../src/errors/tenferro-error.js';
import { ALIGN_MIN_BYTES, STORAGE_ALIGNMENT, paddedBytes } from '../src/buffer/storage-alignment.js';
import { sharedMemoryRange } from '@tenferro/os';
import { type DType, DTYPE_INFO, DTYPES } from '../src/tensor/dtype.js';

function expectCode(fn: () => unknown, code: string) {
  try {
    fn();
  } catch (e) {
    expect(TenferroError.is(e, code as never)).toBe(true);
    return;
  }
  throw new Error(`expected ${code}`);
}

const MiB = 1024 * 1024;
/** A pool whose every loan is a buffer of its own (the slab-carving tests below say `slabs: true`). */
const poolOf = (bytes = MiB, slabs = false) => new BufferPool(new PoolLimit(bytes), { slabs });
const bytesOf = (loan: BufferLoan) => loan.buffer.byteLength;
/** Overwrite everything the loan holds (its block: only its own part of a slab). */
const garbage = (loan: BufferLoan) => new Uint8Array(loan.buffer, loan.blockStart, loan.blockBytes).fill(0xab);
const allZero = (loan: BufferLoan, elements = loan.length) =>
  new Uint8Array(loan.buffer, loan.offset * DTYPE_INFO[loan.dtype].bytes, elements * DTYPE_INFO[loan.dtype].bytes).every((b) => b === 0);
const lineOf = (buffer: SharedArrayBuffer, byteOffset: number) => Number((sharedMemoryRange(buffer).address + BigInt(byteOffset)) % BigInt(STORAGE_ALIGNMENT));
/** Elements a fresh buffer for `n` elements of `dtype` holds: padded from 256 bytes on, so that its data can start on a 64-byte line. */
const held = (dtype: DType, n: number) => paddedBytes(n * DTYPE_INFO[dtype].bytes) / DTYPE_INFO[dtype].bytes;

describe('BufferPool acquire/release', () => {
  it('fresh buffers are exact, shared and zeroed', () => {
    const pool = poolOf();
    const loan = pool.acquire('f64', 10);
    expect(loan.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(loan).toMatchObject({ dtype: 'f64', length: 10, capacity: 10 });
    expect(bytesOf(loan)).toBe(80);
    expect(allZero(loan)).toBe(true);
    expect(pool.stats()).toMatchObject({ outstanding: 1, misses: 1, hits: 0, buffers: 0, retainedBytes: 0 });
  });

  it('takes the best fit (R111)', () => {
    const pool = poolOf();
    const loans = [80, 120, 200].map((n) => pool.acquire('f64', n));
    loans.forEach((l) => pool.release(l));
    expect(pool.retained('f64')).toEqual([held('f64', 80), held('f64', 120), held('f64', 200)]);
    const loan = pool.acquire('f64', 100);
    expect(loan.capacity).toBeGreaterThanOrEqual(120);
    expect(loan.length).toBe(100);
    expect(loan.buffer).toBe(loans[1]!.buffer);
    expect(pool.retained('f64')).toEqual([held('f64', 80), held('f64', 200)]);
    expect(pool.acquire('f64', 80).buffer).toBe(loans[0]!.buffer);
    expect(pool.acquire('f64', 201).buffer.byteLength).toBe(held('f64', 201) * 8);
    expect(pool.stats()).toMatchObject({ hits: 2, misses: 4, outstanding: 3, buffers: 1, retainedBytes: held('f64', 200) * 8 });
  });

  it('keeps dtypes separate even at equal byte sizes', () => {
    const pool = poolOf();
    const f = pool.acquire('f32', 16);
    pool.release(f);
    const i = pool.acquire('i32', 16);
    expect(i.buffer).not.toBe(f.buffer);
    expect(pool.stats().misses).toBe(2);
    const c = pool.acquire('c64', 4);
    pool.release(c);
    expect(pool.acquire('f64', 4).buffer).not.toBe(c.buffer);
    expect(pool.acquire('c64', 4).buffer).toBe(c.buffer);
    expect(pool.acquire('f32', 10).buffer).toBe(f.buffer);
  });

  it('zeroed reuse clears the used range; zeroed:false may keep old data', () => {
    const pool = poolOf();
    const a = pool.acquire('f32', 32);
    garbage(a);
    pool.release(a);
    const b = pool.acquire('f32', 20);
    expect(b.buffer).toBe(a.buffer);
    expect(allZero(b)).toBe(true);
    expect(Array.from(new Float32Array(b.buffer, 0, b.length))).toEqual(new Array(20).fill(0));
    garbage(b);
    pool.release(b);
    const c = pool.acquire('f32', 32, { zeroed: false });
    expect(c.buffer).toBe(a.buffer);
    expect(new Uint8Array(c.buffer)[0]).toBe(0xab);
  });

  it('length 0 never touches the pool (R112)', () => {
    const pool = poolOf();
    const a = pool.acquire('f64', 5);
    pool.release(a);
    const z = pool.acquire('f64', 0);
    expect(z).toMatchObject({ dtype: 'f64', length: 0, capacity: 0 });
    expect(z.buffer.byteLength).toBe(0);
    expect(pool.stats()).toMatchObject({ buffers: 1, outstanding: 0, hits: 0, misses: 1 });
    pool.release(z);
    pool.release(z);
    expect(pool.stats()).toMatchObject({ buffers: 1, outstanding: 0 });
  });

  it('validates dtype and length', () => {
    const pool = poolOf();
    for (const bad of [-1, 1.5, Number.NaN, Infinity, 2 ** 53, '3' as never]) {
      expectCode(() => pool.acquire('f64', bad), 'InvalidArgument');
    }
    expectCode(() => pool.acquire('f16' as never, 1), 'InvalidArgument');
    expectCode(() => pool.release(null as never), 'InvalidArgument');
    expect(pool.stats()).toMatchObject({ outstanding: 0, misses: 0 });
  });

  it('double release is an idempotent no-op; foreign loans are rejected', () => {
    const pool = poolOf();
    const other = poolOf();
    const loan = pool.acquire('i64', 4);
    pool.release(loan);
    const before = pool.stats();
    pool.release(loan);
    expect(pool.stats()).toEqual(before);
    expect(pool.stats()).toMatchObject({ buffers: 1, outstanding: 0 });
    const foreign = other.acquire('i64', 4);
    expectCode(() => pool.release(foreign), 'InvalidArgument');
    expectCode(() => pool.release({ ...loan }), 'InvalidArgument');
    expect(pool.stats()).toEqual(before);
    expect(other.stats().outstanding).toBe(1);
  });

  it('reset drops retained buffers but not loans (R114)', () => {
    const pool = poolOf();
    const a = pool.acquire('f64', 8);
    const b = pool.acquire('f64', 8);
    pool.release(a);
    pool.reset();
    expect(pool.stats()).toMatchObject({ buffers: 0, retainedBytes: 0, outstanding: 1 });
    pool.release(b);
    expect(pool.stats()).toMatchObject({ buffers: 1, retainedBytes: 64, outstanding: 0 });
  });

  it('close unregisters from the limit and retains nothing afterwards', () => {
    const limit = new PoolLimit(MiB);
    const pool = new BufferPool(limit);
    expect(limit.pools).toBe(1);
    const a = pool.acquire('f64', 8);
    pool.release(pool.acquire('f64', 4));
    pool.close();
    expect(limit.pools).toBe(0);
    expect(pool.stats()).toMatchObject({ buffers: 0, retainedBytes: 0, outstanding: 1 });
    pool.release(a);
    expect(pool.stats()).toMatchObject({ buffers: 0, outstanding: 0 });
  });
});

describe('retention cap (R113, R114)', () => {
  it('evicts the smallest buffers across dtypes after a release', () => {
    const pool = poolOf(1000);
    const a = pool.acquire('f64', 50); // 400 B
    const b = pool.acquire('bool', 100); // 100 B
    const c = pool.acquire('f32', 75); // 300 B
    const d = pool.acquire('c128', 30); // 480 B
    [a, b, c].forEach((l) => pool.release(l));
    // 400 and 300 bytes are padded by 48 (from 256 bytes on, see storage-alignment.ts): 448 + 100 + 348
    expect(pool.stats()).toMatchObject({ buffers: 3, retainedBytes: 896 });
    pool.release(d); // 896 + 528 → evict bool(100) → 1324 → evict f32(348) → 976
    expect(pool.stats()).toMatchObject({ buffers: 2, retainedBytes: 976 });
    expect(pool.retained('bool')).toEqual([]);
    expect(pool.retained('f32')).toEqual([]);
    expect(pool.retained('f64')).toEqual([held('f64', 50)]);
    expect(pool.retained('c128')).toEqual([held('c128', 30)]);
  });

  it('a buffer larger than the cap is not retained', () => {
    const pool = poolOf(100);
    pool.release(pool.acquire('f64', 10));
    expect(pool.stats()).toMatchObject({ buffers: 1, retainedBytes: 80 });
    pool.release(pool.acquire('f64', 20));
    expect(pool.stats()).toMatchObject({ buffers: 0, retainedBytes: 0 });
  });

  it('cap 0 disables retention', () => {
    const pool = poolOf(0);
    const a = pool.acquire('f32', 4);
    pool.release(a);
    expect(pool.stats()).toMatchObject({ buffers: 0, retainedBytes: 0, outstanding: 0, limitBytes: 0 });
    expect(pool.acquire('f32', 4).buffer).not.toBe(a.buffer);
    expect(pool.stats().misses).toBe(2);
  });

  it('a shared PoolLimit change evicts in every registered pool and applies to later pools', () => {
    const limit = new PoolLimit(MiB);
    const p1 = new BufferPool(limit, { slabs: false });
    const p2 = new BufferPool(limit, { slabs: false });
    for (const [p, n] of [[p1, 10], [p1, 20], [p2, 5], [p2, 40]] as const) p.release(p.acquire('f64', n));
    expect(p1.stats().retainedBytes).toBe(240);
    expect(p2.stats().retainedBytes).toBe(40 + 368); // 320 bytes, padded by 48
    limit.set(200, 'CpuBackend.setBufferPoolLimitBytes');
    expect(p1.retained('f64')).toEqual([20]);
    expect(p2.retained('f64')).toEqual([]);
    expect(p1.stats().limitBytes).toBe(200);
    const p3 = new BufferPool(limit, { slabs: false });
    p3.release(p3.acquire('f64', 30));
    expect(p3.stats()).toMatchObject({ buffers: 0, limitBytes: 200 });
    limit.set(0, 'op');
    expect(p1.stats().buffers).toBe(0);
    expect(() => limit.set(-1, 'CpuBackend.setBufferPoolLimitBytes')).toThrowError(/CpuBackend\.setBufferPoolLimitBytes/);
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53, '10' as never]) expectCode(() => limit.set(bad, 'op'), 'InvalidArgument');
    expectCode(() => new PoolLimit(-5), 'InvalidArgument');
    expect(limit.bytes).toBe(0);
  });

  it('parses TENFERRO_BUFFER_POOL_MAX_RETAINED_BYTES', () => {
    const key = 'TENFERRO_BUFFER_POOL_MAX_RETAINED_BYTES';
    expect(DEFAULT_RETAINED_BYTES).toBe(100 * MiB);
    expect(retainedBytesFromEnv({})).toBe(DEFAULT_RETAINED_BYTES);
    expect(retainedBytesFromEnv({ [key]: '4096' })).toBe(4096);
    expect(retainedBytesFromEnv({ [key]: ' 12 ' })).toBe(12);
    expect(retainedBytesFromEnv({ [key]: '0' })).toBe(0);
    for (const bad of ['', 'abc', '-1', '1.5', '1e6', '0x10', '12MB', '99999999999999999999']) {
      expect(retainedBytesFromEnv({ [key]: bad })).toBe(DEFAULT_RETAINED_BYTES);
    }
    expect(typeof retainedBytesFromEnv()).toBe('number');
  });
});

describe('withLoans (R88)', () => {
  it('returns every loan on success', async () => {
    const pool = poolOf();
    const result = await pool.withLoans((take) => {
      const a = take('f64', 8);
      const b = take('i32', 3);
      take('bool', 0);
      expect(pool.stats().outstanding).toBe(2);
      return a.capacity + b.capacity;
    });
    expect(result).toBe(11);
    expect(pool.stats()).toMatchObject({ outstanding: 0, buffers: 2 });
  });

  it('returns every loan when fn throws synchronously', async () => {
    const pool = poolOf();
    await expect(
      pool.withLoans(() => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await expect(
      pool.withLoans((take) => {
        take('f32', 4);
        take('f32', 5);
        throw new Error('boom2');
      }),
    ).rejects.toThrow('boom2');
    expect(pool.stats()).toMatchObject({ outstanding: 0, buffers: 2 });
  });

  it('returns every loan when the promise rejects, including loans taken after an await', async () => {
    const pool = poolOf();
    let late: ((d: DType, n: number) => BufferLoan) | undefined;
    await expect(
      pool.withLoans(async (take) => {
        take('f64', 2);
        await Promise.resolve();
        take('c64', 3);
        late = take;
        throw new Error('rejected');
      }),
    ).rejects.toThrow('rejected');
    expect(pool.stats()).toMatchObject({ outstanding: 0, buffers: 2 });
    expectCode(() => late!('f64', 1), 'InvalidArgument');
    expect(pool.stats().outstanding).toBe(0);
  });

  it('tolerates loans released early inside the scope', async () => {
    const pool = poolOf();
    await pool.withLoans((take) => {
      pool.release(take('f64', 4));
    });
    expect(pool.stats()).toMatchObject({ outstanding: 0, buffers: 1 });
  });
});

// ---------------------------------------------------------------------------------------------
// Model test: random acquire/release/setLimit/reset against a reference model.
// ---------------------------------------------------------------------------------------------

type Op =
  | { kind: 'acquire'; pool: number; dtype: DType; length: number; zeroed: boolean }
  | { kind: 'release'; pool: number; pick: number; again: boolean }
  | { kind: 'return'; pool: number; pick: number; how: 'disposed' | 'collected' }
  | { kind: 'limit'; bytes: number }
  | { kind: 'reset'; pool: number };

const dtypeArb = fc.constantFrom(...DTYPES);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('acquire' as const), pool: fc.nat(1), dtype: dtypeArb, length: fc.integer({ min: 0, max: 40 }), zeroed: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('release' as const), pool: fc.nat(1), pick: fc.nat(), again: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('return' as const), pool: fc.nat(1), pick: fc.nat(), how: fc.constantFrom('disposed' as const, 'collected' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('limit' as const), bytes: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1200 })) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const), pool: fc.nat(1) }) },
);

interface ModelEntry {
  dtype: DType;
  bytes: number;
  /** Came home by collection (and not lent since). */
  collected: boolean;
}

const runKey = (e: { dtype: DType; bytes: number }) => `${e.dtype}:${e.bytes}`;

/** A loan's block, as an identity: its buffer and where in it the block starts. */
const bufferIds = new WeakMap<SharedArrayBuffer, number>();
let nextBufferId = 0;
const blockKey = (loan: BufferLoan) => {
  let id = bufferIds.get(loan.buffer);
  if (id === undefined) bufferIds.set(loan.buffer, (id = ++nextBufferId));
  return `${id}@${loan.blockStart}`;
};

class ModelPool {
  retained: ModelEntry[] = [];
  /** Blocks given back and not lent since (a superset of what the real pool retains). */
  candidates = new Set<string>();
  lent = new Set<string>();
  outstanding = new Set<BufferLoan>();
  released: BufferLoan[] = [];
  hits = 0;
  misses = 0;
  /** When each size of collected storage was last given or taken (a step count). */
  touched = new Map<string, number>();
  step = 0;

  bytes(): number {
    return this.retained.reduce((s, e) => s + e.bytes, 0);
  }

  touch(e: ModelEntry): void {
    if (e.collected) this.touched.set(runKey(e), ++this.step);
  }

  /** Smallest fitting capacity; on a tie, storage that was not collected. */
  bestFit(dtype: DType, needed: number): number {
    let best = -1;
    this.retained.forEach((e, i) => {
      if (e.dtype !== dtype || e.bytes < needed) return;
      const b = this.retained[best];
      if (b === undefined || e.bytes < b.bytes || (e.bytes === b.bytes && b.collected && !e.collected)) best = i;
    });
    return best;
  }

  /** Collected storage first, the size touched least recently first; then the smallest (R113). */
  trim(cap: number): void {
    while (this.bytes() > cap && this.retained.some((e) => e.collected)) {
      let v = -1;
      this.retained.forEach((e, i) => {
        if (e.collected && (v < 0 || this.touched.get(runKey(e))! < this.touched.get(runKey(this.retained[v]!))!)) v = i;
      });
      this.retained.splice(v, 1);
    }
    while (this.bytes() > cap) {
      let v = 0;
      this.retained.forEach((e, i) => {
        const w = this.retained[v]!;
        if (e.bytes < w.bytes || (e.bytes === w.bytes && DTYPES.indexOf(e.dtype) < DTYPES.indexOf(w.dtype))) v = i;
      });
      this.retained.splice(v, 1);
    }
  }
}

function checkInvariants(pool: BufferPool, model: ModelPool, cap: number) {
  const s = pool.stats();
  expect(s.retainedBytes).toBeLessThanOrEqual(cap);
  expect(s.retainedBytes).toBe(model.bytes());
  expect(s.buffers).toBe(model.retained.length);
  expect(s.outstanding).toBe(model.outstanding.size);
  expect(s.hits).toBe(model.hits);
  expect(s.misses).toBe(model.misses);
  expect(s.limitBytes).toBe(cap);
  for (const d of DTYPES) {
    const expected = model.retained.filter((e) => e.dtype === d).map((e) => e.bytes / DTYPE_INFO[d].bytes).sort((a, b) => a - b);
    expect(pool.retained(d)).toEqual(expected);
  }
}

describe.each([false, true])('BufferPool model (slabs: %s)', (slabs) => {
  /** Bytes a fresh loan of `padded` bytes holds: a block of whole lines carved from a slab, or a buffer of its own. */
  const freshBytes = (padded: number, cap: number) => (slabs && carvable(padded, cap) ? blockBytes(padded) : padded);
  /**
   * With slabs, every other cap is large enough to carve from slabs (four slabs at least): a
   * sequence then lends carved blocks and whole buffers, and evicts both when the cap comes down.
   */
  const capOf = (bytes: number) => (slabs && bytes % 2 === 0 ? 32 * MiB + bytes : bytes);

  it('agrees with a reference model over random operation sequences', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1200 }), fc.array(opArb, { maxLength: 80 }), (initialBytes, ops) => {
        const initialCap = capOf(initialBytes);
        const limit = new PoolLimit(initialCap);
        const pools = [new BufferPool(limit, { slabs }), new BufferPool(limit, { slabs })];
        const models = [new ModelPool(), new ModelPool()];
        let cap = initialCap;
        for (const op of ops) {
          if (op.kind === 'acquire') {
            const pool = pools[op.pool]!;
            const model = models[op.pool]!;
            const bytes = DTYPE_INFO[op.dtype].bytes;
            const fit = op.length === 0 ? -1 : model.bestFit(op.dtype, paddedBytes(op.length * bytes));
            const loan = pool.acquire(op.dtype, op.length, { zeroed: op.zeroed });
            expect(loan.length).toBe(op.length);
            expect(loan.dtype).toBe(op.dtype);
            expect((loan.offset + loan.capacity) * bytes).toBeLessThanOrEqual(loan.blockStart + loan.blockBytes);
            expect(loan.offset * bytes).toBeGreaterThanOrEqual(loan.blockStart);
            expect(loan.blockStart + loan.blockBytes).toBeLessThanOrEqual(loan.buffer.byteLength);
            expect(loan.capacity).toBeGreaterThanOrEqual(loan.length);
            if (op.length === 0) {
              expect(loan.capacity).toBe(0);
            } else {
              const key = blockKey(loan);
              expect(models.some((m) => m.lent.has(key))).toBe(false);
              if (fit >= 0) {
                const entry = model.retained.splice(fit, 1)[0]!;
                model.touch(entry);
                expect(loan.blockBytes).toBe(entry.bytes);
                expect(model.candidates.has(key)).toBe(true);
                model.hits += 1;
              } else {
                expect(loan.blockBytes).toBe(freshBytes(paddedBytes(op.length * bytes), cap));
                expect(models.some((m) => m.candidates.has(key))).toBe(false);
                model.misses += 1;
              }
              model.candidates.delete(key);
              model.lent.add(key);
              model.outstanding.add(loan);
              if (op.zeroed) expect(allZero(loan)).toBe(true);
              garbage(loan);
            }
          } else if (op.kind === 'release') {
            const pool = pools[op.pool]!;
            const model = models[op.pool]!;
            const live = [...model.outstanding];
            if (op.again && model.released.length > 0) {
              const before = pool.stats();
              pool.release(model.released[op.pick % model.released.length]!);
              expect(pool.stats()).toEqual(before);
            } else if (live.length > 0) {
              const loan = live[op.pick % live.length]!;
              const otherPool = pools[1 - op.pool]!;
              expectCode(() => otherPool.release(loan), 'InvalidArgument');
              pool.release(loan);
              model.outstanding.delete(loan);
              model.lent.delete(blockKey(loan));
              model.candidates.add(blockKey(loan));
              model.released.push(loan);
              model.retained.push({ dtype: loan.dtype, bytes: loan.blockBytes, collected: false });
              model.trim(cap);
            }
          } else if (op.kind === 'return') {
            // a fresh output's storage: detached when its tensor was made, home when that tensor is disposed or collected
            const pool = pools[op.pool]!;
            const model = models[op.pool]!;
            const live = [...model.outstanding];
            if (live.length > 0) {
              const loan = live[op.pick % live.length]!;
              pool.detach(loan);
              pool.returnStorage(loan.dtype, loan.buffer, op.how, 0, loan.blockStart, loan.blockBytes);
              model.outstanding.delete(loan);
              model.lent.delete(blockKey(loan));
              model.candidates.add(blockKey(loan));
              const entry = { dtype: loan.dtype, bytes: loan.blockBytes, collected: op.how === 'collected' };
              model.retained.push(entry);
              model.touch(entry);
              model.trim(cap);
            }
          } else if (op.kind === 'limit') {
            cap = capOf(op.bytes);
            limit.set(cap, 'test');
            models.forEach((m) => m.trim(cap));
          } else {
            pools[op.pool]!.reset();
            models[op.pool]!.retained = [];
          }
          pools.forEach((p, i) => checkInvariants(p, models[i]!, cap));
        }
        // every temporary comes back
        models.forEach((m, i) => [...m.outstanding].forEach((l) => pools[i]!.release(l)));
        pools.forEach((p) => expect(p.stats().outstanding).toBe(0));
        pools.forEach((p) => expect(p.stats().retainedBytes).toBeLessThanOrEqual(cap));
      }),
      { numRuns: 300 },
    );
  });
});

describe('storage alignment', () => {

  it.each([false, true])('loans of 256 bytes or more start on a 64-byte line, inside their block, for every dtype (slabs: %s)', (slabs) => {
    fc.assert(
      fc.property(dtypeArb, fc.integer({ min: 1, max: 5000 }), fc.boolean(), (dtype, length, zeroed) => {
        const pool = poolOf(MiB, slabs);
        const bytes = DTYPE_INFO[dtype].bytes;
        for (let round = 0; round < 2; round++) {
          // round 1 takes the block back from the pool
          const loan = pool.acquire(dtype, length, { zeroed });
          expect(Number.isInteger(loan.offset)).toBe(true);
          expect((loan.offset + loan.length) * bytes).toBeLessThanOrEqual(loan.blockStart + loan.blockBytes);
          if (length * bytes >= ALIGN_MIN_BYTES) expect(lineOf(loan.buffer, loan.offset * bytes)).toBe(0);
          else expect(loan.offset * bytes).toBe(loan.blockStart);
          if (zeroed) expect(allZero(loan)).toBe(true);
          garbage(loan);
          pool.release(loan);
        }
        expect(pool.stats().hits).toBe(1);
      }),
      { numRuns: 200 },
    );
  });

  it('zeroing a reused loan clears its elements and nothing before them', () => {
    const pool = poolOf();
    const first = pool.acquire('f64', 100);
    garbage(first);
    pool.release(first);
    const again = pool.acquire('f64', 100);
    expect(again.buffer).toBe(first.buffer);
    expect(allZero(again)).toBe(true);
    expect(new Uint8Array(again.buffer, 0, again.offset * 8).every((b) => b === 0xab)).toBe(true);
  });
});

describe('warm storage first', () => {
  it('a disposed storage is lent before any collected one of its size', () => {
    const pool = poolOf();
    const collectedFirst = new SharedArrayBuffer(held('f64', 100) * 8);
    const collectedSecond = new SharedArrayBuffer(held('f64', 100) * 8);
    const disposed = new SharedArrayBuffer(held('f64', 100) * 8);
    pool.returnStorage('f64', collectedFirst, 'collected');
    pool.returnStorage('f64', disposed, 'disposed');
    pool.returnStorage('f64', collectedSecond, 'collected');
    expect(pool.stats()).toMatchObject({ returnedByDispose: 1, returnedByCollection: 2, buffers: 3 });
    expect(pool.lendable('f64', 100)).toBe(3);
    expect(pool.acquire('f64', 100).buffer).toBe(disposed);
    const rest = [pool.acquire('f64', 100).buffer, pool.acquire('f64', 100).buffer];
    expect(new Set(rest)).toEqual(new Set([collectedFirst, collectedSecond]));
    expect(pool.acquire('f64', 100).buffer).not.toBe(disposed);
    expect(pool.stats()).toMatchObject({ hits: 3, misses: 1, buffers: 0 });
  });
});

describe('of collected storage, the most recently lent first (#38)', () => {
  it('lends collected storage newest first, whatever order the finalizers bring it home in, and evicts the oldest first', () => {
    const pool = poolOf(4 * held('f64', 100) * 8);
    const made = [5, 9, 2, 7].map((stamp) => ({ stamp, buffer: new SharedArrayBuffer(held('f64', 100) * 8) }));
    // V8 runs finalizers newest first, and batches interleave: any order must come out newest first.
    for (const m of [made[1]!, made[3]!, made[0]!, made[2]!]) pool.returnStorage('f64', m.buffer, 'collected', m.stamp);
    const byStamp = (stamp: number) => made.find((m) => m.stamp === stamp)!.buffer;
    expect(pool.acquire('f64', 100).buffer).toBe(byStamp(9));
    // Over the cap the one lent longest ago goes: of a fifth and a sixth buffer, stamps 10 and 1, stamp 1.
    const newest = new SharedArrayBuffer(held('f64', 100) * 8);
    const oldest = new SharedArrayBuffer(held('f64', 100) * 8);
    pool.returnStorage('f64', newest, 'collected', 10);
    pool.returnStorage('f64', oldest, 'collected', 1);
    expect(pool.stats().buffers).toBe(4);
    const lent = [1, 2, 3, 4].map(() => pool.acquire('f64', 100).buffer);
    expect(lent).toEqual([newest, byStamp(7), byStamp(5), byStamp(2)]);
  });

});

describe('collected storage under the cap', () => {
  const sab = (dtype: DType, n: number) => new SharedArrayBuffer(held(dtype, n) * DTYPE_INFO[dtype].bytes);

  it('a dropping loop that filled the cap cannot evict the smaller storage another loop disposes', () => {
    const big = held('f64', 512) * 8; // 4 KiB
    const pool = poolOf(8 * big);
    for (let i = 0; i < 8; i++) pool.returnStorage('f64', sab('f64', 512), 'collected');
    expect(pool.stats().retainedBytes).toBe(8 * big);
    const small = sab('f32', 256);
    pool.returnStorage('f32', small, 'disposed');
    expect(pool.retained('f32')).toEqual([held('f32', 256)]);
    expect(pool.retained('f64')).toHaveLength(7);
    expect(pool.acquire('f32', 256).buffer).toBe(small);
  });

  it('collected storage never evicts released storage: it goes itself when nothing else fits', () => {
    const limit = new PoolLimit(MiB);
    const pool = new BufferPool(limit, { slabs: false });
    const loans = [pool.acquire('f32', 500), pool.acquire('f32', 500)];
    loans.forEach((l) => pool.release(l));
    limit.set(pool.stats().retainedBytes, 'test');
    const before = pool.retained('f32');
    expect(before).toHaveLength(2);
    pool.returnStorage('f64', sab('f64', 8), 'collected');
    expect(pool.retained('f32')).toEqual(before);
    expect(pool.retained('f64')).toEqual([]);
    expect(pool.stats().retainedBytes).toBe(limit.bytes);
  });

  it('of collected storage, the size lent from or returned to least recently goes first', () => {
    const U = held('f64', 1000) * 8;
    expect(held('f32', 2000) * 4).toBe(U);
    expect(held('i32', 2000) * 4).toBe(U);
    const run = () => {
      const pool = poolOf(4 * U);
      for (let i = 0; i < 2; i++) pool.returnStorage('f32', sab('f32', 2000), 'collected');
      for (let i = 0; i < 2; i++) pool.returnStorage('f64', sab('f64', 1000), 'collected');
      return pool;
    };
    // the f32 size came home first: it goes first
    const idle = run();
    idle.returnStorage('i32', sab('i32', 2000), 'disposed');
    expect([idle.retained('f32').length, idle.retained('f64').length, idle.retained('i32').length]).toEqual([1, 2, 1]);
    // lending from the f32 size makes it the recent one: the f64 size goes first
    const used = run();
    used.acquire('f32', 2000);
    used.returnStorage('f32', sab('f32', 2000), 'disposed');
    used.returnStorage('i32', sab('i32', 2000), 'disposed');
    expect([used.retained('f32').length, used.retained('f64').length, used.retained('i32').length]).toEqual([2, 1, 1]);
    expect(used.stats().retainedBytes).toBe(4 * U);
  });

  it('a collected size lent out to its last block leaves the eviction order: what is evicted next is another size', () => {
    const U = held('f64', 1000) * 8;
    const pool = poolOf(4 * U);
    pool.returnStorage('f32', sab('f32', 2000), 'collected');
    pool.returnStorage('f64', sab('f64', 1000), 'collected');
    pool.acquire('f32', 2000); // the f32 size is empty now, and was touched last
    pool.returnStorage('f64', sab('f64', 1000), 'collected'); // the f64 size is the recent one
    for (let i = 0; i < 3; i++) pool.returnStorage('i32', sab('i32', 2000), 'disposed'); // past the cap: evicts an f64 block
    expect([pool.retained('f32').length, pool.retained('f64').length, pool.retained('i32').length]).toEqual([0, 1, 3]);
    expect(pool.stats().retainedBytes).toBe(4 * U);
  });
});

describe('small storage carved from slabs (#38)', () => {
  const f64Block = blockBytes(paddedBytes(64 * 64 * 8));
  const overlap = (a: BufferLoan, b: BufferLoan) =>
    a.buffer === b.buffer && a.blockStart < b.blockStart + b.blockBytes && b.blockStart < a.blockStart + a.blockBytes;

  it('fresh small loans share one slab in disjoint, line-aligned, zeroed blocks', () => {
    const pool = poolOf(64 * MiB, true);
    const loans = Array.from({ length: 40 }, (_, i) => pool.acquire(i % 2 === 0 ? 'f64' : 'f32', 64 * 64, { zeroed: i % 3 !== 0 }));
    expect(new Set(loans.map((l) => l.buffer)).size).toBe(1);
    expect(isSlab(loans[0]!.buffer)).toBe(true);
    for (let i = 0; i < loans.length; i++) {
      const loan = loans[i]!;
      expect(lineOf(loan.buffer, loan.blockStart)).toBe(0);
      expect(lineOf(loan.buffer, loan.offset * DTYPE_INFO[loan.dtype].bytes)).toBe(0);
      expect(allZero(loan)).toBe(true);
      for (let j = 0; j < i; j++) expect(overlap(loan, loans[j]!)).toBe(false);
      garbage(loan);
    }
    // what one loan wrote is still there: no other loan's block covers it
    for (const loan of loans) expect(new Uint8Array(loan.buffer, loan.blockStart, loan.blockBytes).every((b) => b === 0xab)).toBe(true);
    expect(pool.stats()).toMatchObject({ misses: 40, hits: 0, outstanding: 40 });
  });

  it('a slab holds as many blocks as fit: 1,000 fresh 64×64 f64 loans take ⌈1,000 / ⌊2 MiB / block⌋⌉ slabs', () => {
    const pool = poolOf(64 * MiB, true);
    const buffers = new Set(Array.from({ length: 1000 }, () => pool.acquire('f64', 64 * 64).buffer));
    expect(buffers.size).toBe(Math.ceil(1000 / Math.floor(SLAB_BYTES / f64Block)));
  });

  it('a released block is lent again, cleared; storage past the block limit gets a buffer of its own', () => {
    const pool = poolOf(64 * MiB, true);
    const first = pool.acquire('f64', 64 * 64);
    const second = pool.acquire('f64', 64 * 64);
    garbage(first);
    garbage(second);
    pool.release(first);
    const again = pool.acquire('f64', 64 * 64);
    expect([again.buffer, again.blockStart, again.offset]).toEqual([first.buffer, first.blockStart, first.offset]);
    expect(allZero(again)).toBe(true);
    expect(new Uint8Array(second.buffer, second.blockStart, second.blockBytes).every((b) => b === 0xab)).toBe(true);
    const large = pool.acquire('f32', (WIDE_SLAB_BLOCK_MAX_BYTES + 64) / 4);
    expect(isSlab(large.buffer)).toBe(false);
    expect([large.blockStart, large.blockBytes]).toEqual([0, large.buffer.byteLength]);
    expect(pool.stats()).toMatchObject({ hits: 1, misses: 3 });
  });

  it('storage from 256 KiB to just below 2 MiB is carved from 8 MiB slabs, apart from the smaller blocks', () => {
    const pool = poolOf(64 * MiB, true);
    const small = pool.acquire('f64', 64 * 64);
    const wide = Array.from({ length: 20 }, () => pool.acquire('f64', 256 * 256)); // 512 KiB each
    const perSlab = Math.floor(WIDE_SLAB_BYTES / blockBytes(paddedBytes(256 * 256 * 8)));
    const buffers = [...new Set(wide.map((l) => l.buffer))];
    expect(buffers).toHaveLength(Math.ceil(20 / perSlab));
    expect(buffers.map((b) => slabBytes(b))).toEqual(buffers.map(() => WIDE_SLAB_BYTES));
    expect(slabBytes(small.buffer)).toBe(SLAB_BYTES);
    expect(buffers).not.toContain(small.buffer);
    for (let i = 0; i < wide.length; i++) for (let j = 0; j < i; j++) expect(overlap(wide[i]!, wide[j]!)).toBe(false);
    const largest = pool.acquire('bool', WIDE_SLAB_BLOCK_MAX_BYTES - 48); // padded by 48: the largest block carved
    expect(slabBytes(largest.buffer)).toBe(WIDE_SLAB_BYTES);
  });

  it('a block that comes home is kept as storage of its own size, never its whole slab', () => {
    const pool = poolOf(64 * MiB, true);
    const loan = pool.acquire('f32', 1000);
    pool.detach(loan);
    pool.returnStorage('f32', loan.buffer, 'collected', 1, loan.blockStart, loan.blockBytes);
    expect(pool.stats()).toMatchObject({ buffers: 1, retainedBytes: loan.blockBytes });
    // caller-made storage over a whole slab (its buffer handed out, wrapped, reclaimed) is not kept
    pool.returnStorage('f32', loan.buffer, 'disposed');
    expect(pool.stats()).toMatchObject({ buffers: 1, retainedBytes: loan.blockBytes });
    expectCode(() => pool.adopt('f32', loan.buffer), 'InvalidArgument');
    const again = pool.acquire('f32', 1000);
    expect([again.buffer, again.blockStart]).toEqual([loan.buffer, loan.blockStart]);
  });

  it('a pool capped below four slabs of a size keeps a buffer per loan of that size', () => {
    const pool = poolOf(4 * WIDE_SLAB_BYTES - 1, true);
    expect(isSlab(pool.acquire('f64', 64 * 64).buffer)).toBe(true); // four 2 MiB slabs fit
    expect(isSlab(pool.acquire('f64', 256 * 256).buffer)).toBe(false); // four 8 MiB slabs do not
    const tiny = poolOf(4 * SLAB_BYTES - 1, true);
    expect(isSlab(tiny.acquire('f64', 64 * 64).buffer)).toBe(false);
    expect(isSlab(poolOf(0, true).acquire('f32', 1).buffer)).toBe(false);
  });

  it('without slabs, every loan has a buffer of its own', () => {
    const pool = poolOf(64 * MiB, false);
    const loans = Array.from({ length: 8 }, () => pool.acquire('f64', 64 * 64));
    expect(new Set(loans.map((l) => l.buffer)).size).toBe(8);
    for (const l of loans) expect([l.blockStart, l.blockBytes, isSlab(l.buffer)]).toEqual([0, l.buffer.byteLength, false]);
  });
});
