// Provider-exclusive execution: a blas execution conflicts with every other execution of the
// process (R19, R81). Coordinated with the arbiter's stats and setImmediate polling: no sleeps.
import { CpuBackend, Tensor, processArbiter } from '@tenferro/core';
import { randomValues, seededRandom } from '@tenferro/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBlasProvider } from '../src/index.js';

const tick = () => new Promise<void>((r) => setImmediate(r));
async function until(cond: () => boolean, what: string, limit = 200_000): Promise<void> {
  for (let i = 0; i < limit; i++) {
    if (cond()) return;
    await tick();
  }
  throw new Error(`timed out waiting for ${what}`);
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

describe('provider-exclusive execution (blas vs faer)', () => {
  let blas: CpuBackend;
  const faers: CpuBackend[] = [];
  const n = 192;
  const rand = seededRandom(11);
  const a = Tensor.fromArray('f64', [n, n], randomValues(rand, 'f64', n * n));
  const b = Tensor.fromArray('f64', [n, n], randomValues(rand, 'f64', n * n));
  const arbiter = processArbiter();

  beforeAll(async () => {
    blas = await CpuBackend.create({ kind: 'blas', threads: 2, providers: [createBlasProvider()] });
    const faer = await CpuBackend.create({ kind: 'faer', threads: 2 });
    faers.push(faer);
    if (faer.supportsPlacement({ numaNode: 0 })) faers.push(faer.forPlacement({ numaNode: 0 }));
  });
  afterAll(async () => {
    await blas.close();
    await faers[0]?.close();
  });

  it('while a blas session runs GEMMs, a faer install (any CPU set) waits; it starts once the blas permit is released', async () => {
    for (const faer of faers) {
      const g = gate();
      let inBlas = false;
      let gemmsDone = 0;
      const blasRun = blas.withBackendSession(async (s) => {
        inBlas = true;
        await s.dotGeneral(a, b, { contracting: [[1], [0]] });
        gemmsDone++;
        await g.wait;
        await s.dotGeneral(a, b, { contracting: [[1], [0]] }); // a GEMM while faer is queued
        gemmsDone++;
      });
      await until(() => inBlas, 'the blas session');
      expect(arbiter.stats()).toEqual({ active: 1, waiting: 0 });
      let faerStarted = false;
      const faerRun = faer.install(() => {
        faerStarted = true;
      });
      await until(() => arbiter.stats().waiting === 1, 'the faer install to queue');
      expect(faerStarted).toBe(false);
      g.open();
      await until(() => gemmsDone === 2, 'the second blas GEMM');
      await blasRun;
      await faerRun;
      expect(faerStarted).toBe(true);
      expect(arbiter.stats()).toEqual({ active: 0, waiting: 0 });
    }
  });

  it('while a faer execution (any CPU set) runs, a blas GEMM waits; it runs once the faer permit is released', async () => {
    for (const faer of faers) {
      const g = gate();
      let inFaer = false;
      const faerRun = faer.install(async () => {
        inFaer = true;
        await g.wait;
      });
      await until(() => inFaer, 'the faer install');
      let blasDone = false;
      const blasRun = blas.matmul(a, b).then((t) => {
        blasDone = true;
        return t;
      });
      await until(() => arbiter.stats().waiting === 1, 'the blas GEMM to queue');
      expect(blasDone).toBe(false);
      g.open();
      await faerRun;
      const result = await blasRun;
      expect(blasDone).toBe(true);
      expect(result.shape).toEqual([n, n]);
    }
  });

  it('two blas executions exclude each other too (the provider-exclusive permit conflicts with itself)', async () => {
    const g = gate();
    let inFirst = false;
    const first = blas.install(async () => {
      inFirst = true;
      await g.wait;
    });
    await until(() => inFirst, 'the first blas install');
    let secondDone = false;
    const second = blas.clone().matmul(a, b).then(() => (secondDone = true));
    await until(() => arbiter.stats().waiting === 1, 'the second blas execution to queue');
    expect(secondDone).toBe(false);
    g.open();
    await first;
    await second;
    expect(secondDone).toBe(true);
  });
});
