import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuBackend, EXECUTED, Tensor, Unsupported, defineExtensionKey } from '@tenferro/core';
import { type CpuLinalgKernels, type LinalgRequest, LINALG_KERNELS_KEY_NAME, linalg, linalgKernelsKey } from '../src/index.js';
import { kernelRecorder } from './helpers.js';

// Every extension declares what its threads do (#35: one that declares nothing is refused on a faer backend).
const WELL_BEHAVED = Object.freeze({ threadCount: 'perCallUpperBound', placement: 'engineWorkers', workerLocalSequential: true, acceptsSequential: true, acceptsOuter: false, acceptsInner: true } as const);

const SPD = () => Tensor.fromArray('f64', [2, 2], [4, 2, 2, 3]);

async function withKernels<R>(kernels: CpuLinalgKernels, fn: (b: CpuBackend) => Promise<R>, threads = 1): Promise<R> {
  const b = await CpuBackend.create({ threads, providers: [{ kind: 'faer', name: 'test-linalg', extensions: [[linalgKernelsKey(), kernels]] }] });
  try {
    return await fn(b);
  } finally {
    await b.close();
  }
}

describe('extension first, built-in fallback (R64, R65)', () => {
  it('the key is lazy and identity-by-name', () => {
    expect(linalgKernelsKey()).toBe(linalgKernelsKey());
    expect(defineExtensionKey(LINALG_KERNELS_KEY_NAME)).toBe(linalgKernelsKey());
  });

  it('an extension that executes runs once and the built-in does not', async () => {
    let calls = 0;
    const kernels: CpuLinalgKernels = {
      name: 'writer',
      executionCapabilities: () => WELL_BEHAVED,
      cholesky: (_ctx, r: LinalgRequest) => {
        calls++;
        new Float64Array(r.out[0]!.buffer, r.out[0]!.offset * 8, 4).set([2, 1, 0, Math.SQRT2]);
        return EXECUTED;
      },
    };
    const rec = kernelRecorder();
    try {
      await withKernels(kernels, async (b) => {
        const la = linalg(b);
        const l = await la.cholesky(SPD());
        expect(l.toArray()).toEqual([2, 1, 0, Math.SQRT2]);
        expect(calls).toBe(1);
        expect(rec.take()).toEqual([{ op: 'cholesky', kernel: 'extension' }]);
      });
    } finally {
      rec.stop();
    }
  });

  it('an extension that declines before writing makes the built-in run once, and the process is told once', async () => {
    let calls = 0;
    const warnings: (Error & { code?: string })[] = [];
    const onWarning = (w: Error & { code?: string }) => warnings.push(w);
    process.on('warning', onWarning);
    const kernels: CpuLinalgKernels = { name: 'decliner', executionCapabilities: () => WELL_BEHAVED, cholesky: () => { calls++; return Unsupported.dtype('f64'); } };
    const rec = kernelRecorder();
    try {
      await withKernels(kernels, async (b) => {
        const la = linalg(b);
        const l = await la.cholesky(SPD());
        expect(l.toArray()[0]).toBeCloseTo(2, 14);
        expect(calls).toBe(1);
        expect(rec.take()).toEqual([{ op: 'cholesky', kernel: 'builtin', declined: 'dtype: f64' }]);
        await la.cholesky(SPD());
        // A primitive the extension lacks goes to the built-in directly.
        await la.qr(SPD());
        expect(rec.take()).toEqual([{ op: 'cholesky', kernel: 'builtin', declined: 'dtype: f64' }, { op: 'qr', kernel: 'builtin' }]);
      });
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      // core's one fallback warning of extension families (#35), once per extension and call
      const fallbacks = warnings.filter((w) => w.code === 'TENFERRO_EXTENSION_FALLBACK');
      expect(fallbacks.map((w) => w.message)).toEqual([expect.stringMatching(/^decliner declined cholesky for linalg\.cholesky \(dtype f64\)/)]);
    } finally {
      rec.stop();
      process.off('warning', onWarning);
    }
  });

  it('an extension that throws is ProviderFailed, not retried', async () => {
    let calls = 0;
    const kernels: CpuLinalgKernels = { name: 'thrower', executionCapabilities: () => WELL_BEHAVED, cholesky: () => { calls++; throw new Error('boom'); } };
    const rec = kernelRecorder();
    try {
      await withKernels(kernels, async (b) => {
        const la = linalg(b);
        await expect(la.cholesky(SPD())).rejects.toMatchObject({ code: 'ProviderFailed' });
        expect(calls).toBe(1);
        expect(rec.take()).toEqual([]);
      });
    } finally {
      rec.stop();
    }
  });

  it('an extension that writes then declines is a ProviderContractViolation', async () => {
    const kernels: CpuLinalgKernels = {
      name: 'liar',
      executionCapabilities: () => WELL_BEHAVED,
      cholesky: (_ctx, r) => {
        new Float64Array(r.out[0]!.buffer, r.out[0]!.offset * 8, 1)[0] = 1;
        return Unsupported.dtype('f64');
      },
    };
    const rec = kernelRecorder();
    try {
      await withKernels(kernels, async (b) => {
        const la = linalg(b);
        await expect(la.cholesky(SPD())).rejects.toMatchObject({ code: 'ProviderContractViolation' });
        expect(rec.take()).toEqual([]);
      });
    } finally {
      rec.stop();
    }
  });

  it('linalg(session) runs on the session entry', async () => {
    await withKernels({ name: 'none', executionCapabilities: () => WELL_BEHAVED }, async (b) => {
      const before = b.executionInfo().executorEntries;
      const r = await b.withBackendSession(async (s) => {
        const la = linalg(s);
        const x = await la.solve(SPD(), Tensor.fromArray('f64', [2, 1], [6, 5]));
        const d = await la.det(SPD());
        return [x.toArray(), d.toArray()];
      });
      expect(r[0]![0]).toBeCloseTo(1, 12);
      expect(r[0]![1]).toBeCloseTo(1, 12);
      expect(r[1]![0]).toBeCloseTo(8, 12);
      expect(b.executionInfo().executorEntries.installs - before.installs).toBe(1);
    });
  });

  it('a strict bundle rejects kernels whose declared thread control cannot enforce the budget, before any executor entry (R55)', async () => {
    let calls = 0;
    const kernels: CpuLinalgKernels = {
      name: 'uncontrolled',
      executionCapabilities: () => ({ threadCount: 'globalOrUncontrolled', placement: 'externalWorkers', workerLocalSequential: false, acceptsSequential: true, acceptsOuter: false, acceptsInner: true }),
      cholesky: () => { calls++; return EXECUTED; },
    };
    await withKernels(kernels, async (b) => {
      const before = b.executionInfo().executorEntries;
      await expect(linalg(b).cholesky(SPD())).rejects.toMatchObject({ code: 'IncompatibleDomain', cause: { code: 'ThreadCountNotEnforceable' }, detail: { slot: LINALG_KERNELS_KEY_NAME, provider: 'uncontrolled' } });
      expect(calls).toBe(0);
      expect(b.executionInfo().executorEntries).toEqual(before);
    });
  });

  it('kernels that refuse the linalg mode they would run in (R59, R73) are rejected before any entry, from a backend and from a session', async () => {
    let calls = 0;
    const kernels: CpuLinalgKernels = {
      name: 'sequential only',
      executionCapabilities: () => ({ threadCount: 'sequential', placement: 'engineWorkers', workerLocalSequential: true, acceptsSequential: true, acceptsOuter: false, acceptsInner: false }),
      cholesky: () => { calls++; return EXECUTED; },
    };
    await withKernels(kernels, async (b) => {
      expect(b.numThreads()).toBe(2);
      const before = b.executionInfo().executorEntries;
      await expect(linalg(b).cholesky(SPD())).rejects.toMatchObject({ code: 'IncompatibleDomain', cause: { code: 'ParallelModeNotSupported' } });
      expect(b.executionInfo().executorEntries).toEqual(before);
      await expect(b.withBackendSession((s) => linalg(s).cholesky(SPD()))).rejects.toMatchObject({ code: 'IncompatibleDomain', cause: { code: 'ParallelModeNotSupported' } });
      expect(calls).toBe(0);
    }, 2);
    // At budget 1 the linalg mode is Sequential, which it accepts: the extension runs.
    await withKernels(kernels, async (b) => {
      await linalg(b).cholesky(SPD());
      expect(calls).toBe(1);
    });
  });
});
