// The process-wide arbiter's native side (native/src/arbiter.cc, arbiter_binding.cc): the rule
// itself is tested through core's ProcessArbiter (core's arbiter unit and model tests run on it);
// here: what only the binding can show — descriptor checks, two copies of the addon in one
// process sharing one state, a copy with another ABI refusing, and an isolate that ends.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ARBITER_FLAGS, type ArbiterClient, type OsBinding, loadOs } from '../src/index.js';

const ADDON = fileURLToPath(new URL('../native/build/Release/tenferro_os.node', import.meta.url));
const { admitted: ADMITTED, reentrant: REENTRANT, removed: REMOVED, grantsPending: GRANTS } = ARBITER_FLAGS;

function binding(): OsBinding {
  const os = loadOs();
  if (!os.available) throw new Error(os.reason);
  return os.binding;
}

/** A copy of the addon at another path: the dynamic loader loads it as a second library. */
function addonCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tenferro-os-copy-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true })); // #39: no temporary folder left
  const path = join(dir, 'tenferro_os.node');
  copyFileSync(ADDON, path);
  return path;
}

const pairs = (...xs: number[]) => new Uint32Array(xs);

describe('native arbiter: descriptors', () => {
  it('answers -1 for every malformed request and admits nothing', () => {
    const b = binding();
    const c = b.arbiterOpen(() => undefined, true)!;
    const bad: unknown[] = [
      new Uint32Array([]), // empty set
      new Uint32Array([0]), // odd length
      new Uint32Array([0, 0]), // zero mask
      new Uint32Array([3, 1, 2, 1]), // decreasing words
      new Uint32Array([3, 1, 3, 2]), // repeated word
      new Uint32Array([32768, 1]), // word beyond 2^20 CPUs
      new Int32Array([0, 1]), // wrong element type
      [0, 1], // not a typed array
      'x',
    ];
    for (const p of bad) expect(b.arbiterAcquire(c, 1, 1, p as Uint32Array)).toBe(-1);
    for (const [request, owner] of [[0, 1], [1, 0], [1.5, 1], [2 ** 52, 1], [1, 2 ** 53], [Number.NaN, 1], [-1, 1]]) {
      expect(b.arbiterAcquire(c, request!, owner!, pairs(0, 1))).toBe(-1);
    }
    expect(b.arbiterAcquire({} as ArbiterClient, 1, 1, pairs(0, 1))).toBe(-1);
    expect(b.arbiterStats(c)).toEqual({ active: 0, waiting: 0, clients: 1 });
    expect(b.arbiterReserveOwners(0, 0)).toBe(0);
    expect(b.arbiterReserveOwners(2 ** 21, 0)).toBe(0);
    expect(b.arbiterReserveOwners(1, 2 ** 53)).toBe(0);
  });

  it('flags: admitted, reentrant, queued, removed, grants for the caller', () => {
    const b = binding();
    const c = b.arbiterOpen(() => undefined, true)!;
    expect(b.arbiterAcquire(c, 1, 10, pairs(0, 0b11))).toBe(ADMITTED);
    expect(b.arbiterAcquire(c, 2, 10, pairs(0, 0b10))).toBe(ADMITTED | REENTRANT);
    expect(b.arbiterAcquire(c, 3, 11, null)).toBe(0);
    expect(b.arbiterAcquire(c, 4, 12, pairs(0, 0b100))).toBe(0); // behind the exclusive waiter
    expect(b.arbiterCancel(c, 3)).toBe(REMOVED | GRANTS); // the abort admits #4
    expect(b.arbiterTakeGrants(c)).toEqual([4 * 2]);
    expect(b.arbiterCancel(c, 4)).toBe(0); // admitted already: not removed
    expect(b.arbiterStats(c)).toEqual({ active: 3, waiting: 0, clients: 1 });
  });
});

describe('native arbiter: two copies of the addon in one process', () => {
  it('the second copy joins the first copy\'s state: a conflict across copies waits, a release wakes it', async () => {
    const first = binding();
    expect(first.arbiterInfo()).toEqual({ abi: 1, shared: false, refused: false, otherAbi: 0 });
    const second = createRequire(import.meta.url)(addonCopy()) as OsBinding;
    expect(second.arbiterInfo()).toEqual({ abi: 1, shared: true, refused: false, otherAbi: 1 });
    const a = first.arbiterOpen(() => undefined, false)!;
    let woken: (ids: number[]) => void;
    const grants = new Promise<number[]>((resolve) => (woken = resolve));
    const b = second.arbiterOpen((ids) => woken(ids), false)!;
    expect(first.arbiterAcquire(a, 1, first.arbiterReserveOwners(1, 0), pairs(0, 1))).toBe(ADMITTED);
    second.arbiterRef(b, true);
    expect(second.arbiterAcquire(b, 1, second.arbiterReserveOwners(1, 0), pairs(0, 3))).toBe(0);
    expect(first.arbiterStats(null)).toEqual({ active: 1, waiting: 1, clients: 2 });
    expect(first.arbiterRelease(a, 1)).toBe(0); // the grant is the other client's
    expect(await grants).toEqual([2]);
    second.arbiterRef(b, false);
    expect(second.arbiterRelease(b, 1)).toBe(0);
    expect(first.arbiterStats(null)).toEqual({ active: 0, waiting: 0, clients: 2 });
    // Owner ids come from one counter too.
    const o1 = first.arbiterReserveOwners(4, 0);
    expect(second.arbiterReserveOwners(4, 0)).toBe(o1 + 4);
  });

  it('a copy with another arbiter ABI refuses: no client, no owners — never a second state', () => {
    const copy = addonCopy();
    const script = `
      const b1 = require(${JSON.stringify(ADDON)});
      process.env.TENFERRO_OS_ARBITER_ABI_CLAIM = '7';
      const b2 = require(${JSON.stringify(copy)});
      console.log(JSON.stringify({ info: b2.arbiterInfo(), open: b2.arbiterOpen(() => {}, false), owners: b2.arbiterReserveOwners(1, 0), stats: b2.arbiterStats(null), first: b1.arbiterInfo() }));`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({
      info: { abi: 7, shared: false, refused: true, otherAbi: 1 },
      open: null,
      owners: 0,
      stats: null,
      first: { abi: 1, shared: false, refused: false, otherAbi: 0 },
    });
  });
});

describe('native arbiter: an isolate that ends', () => {
  it('a worker that exits while it holds a permit and waits for another releases both; the main thread\'s waiter runs', async () => {
    const b = binding();
    let woken: (ids: number[]) => void;
    const grants = new Promise<number[]>((resolve) => (woken = resolve));
        const shared = b.arbiterOpen((ids) => woken(ids), false)!;
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const b = require(${JSON.stringify(ADDON)});
       const c = b.arbiterOpen(() => {}, false);
       const owner = b.arbiterReserveOwners(2, 0);
       const held = b.arbiterAcquire(c, 1, owner, new Uint32Array([0, 1]));
       const queued = b.arbiterAcquire(c, 2, owner + 1, new Uint32Array([0, 3]));
       parentPort.postMessage([held, queued]);
       setInterval(() => {}, 1 << 30); // stays alive until terminated`,
      { eval: true },
    );
    const answers = await new Promise<number[]>((resolve) => worker.once('message', resolve));
    expect(answers).toEqual([ADMITTED, 0]);
    b.arbiterRef(shared, true);
    // CPU 1 is free, but the worker's older waiter (CPUs 0-1) conflicts: FIFO without bypass.
    expect(b.arbiterAcquire(shared, 1, b.arbiterReserveOwners(1, 0), pairs(0, 2))).toBe(0);
    expect(b.arbiterStats(null)).toMatchObject({ active: 1, waiting: 2 });
    await worker.terminate();
    expect(await grants).toEqual([2]);
    b.arbiterRef(shared, false);
    expect(b.arbiterStats(null)).toMatchObject({ active: 1, waiting: 0 });
    expect(b.arbiterRelease(shared, 1)).toBe(0);
    expect(b.arbiterStats(null)).toMatchObject({ active: 0, waiting: 0 });
  });
});

describe('native arbiter: stress across isolates', () => {
  it('main + 4 workers, random acquire/release/cancel and malformed requests, 2 workers terminated mid-run: never two holders of a CPU', () => {
    const child = fileURLToPath(new URL('./fuzz/arbiter-stress-child.mjs', import.meta.url));
    const r = spawnSync(process.execPath, [child, '--ops', '5000', '--workers', '4'], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect({ status: r.status, stdout: r.stdout.trim() }).toEqual({ status: 0, stdout: 'ok' });
  });
});
