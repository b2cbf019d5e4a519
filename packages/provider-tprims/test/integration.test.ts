// The package through the public API: ops(backend) on real engines at 1 and 2 threads (the
// kernels run on the engine's pinned workers, split over the pool in Inner mode), declines that
// fall back to core's reference, no thread created, nothing loaded at import, status() and
// options errors, and the unavailable addon.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CpuBackend, type CpuLayoutTransformProvider, type CpuProviderPackage, type CpuTensorPrimitivesProvider, ops, Tensor } from '@tenferro/core';
import { peakThreadsDuring, taskEventsDuring } from '@tenferro/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTprimsProvider, status, validateTprimsProviderOptions } from '../src/index.js';

const DIST_INDEX = fileURLToPath(new URL('../dist/index.js', import.meta.url));

function child(script: string, env: Record<string, string> = {}): Record<string, any> {
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, ...env } }));
}

/** The tprims package with its tensor-primitives calls counted by outcome. */
function counted(pkg: CpuProviderPackage) {
  const calls = { executed: 0, declined: 0, lanes: 0, layouts: 0 };
  const inner = pkg.tensorPrimitives!;
  const layout = pkg.layoutTransform!;
  const note = async (p: ReturnType<CpuTensorPrimitivesProvider['binary']>) => {
    const outcome = await p;
    calls[outcome.executed ? 'executed' : 'declined']++;
    return outcome;
  };
  const tensorPrimitives: CpuTensorPrimitivesProvider = {
    name: inner.name,
    executionCapabilities: () => inner.executionCapabilities(),
    declaredSupport: () => inner.declaredSupport!(),
    binary: (ctx, r) => ((calls.lanes = Math.max(calls.lanes, ctx.workerPool()?.size ?? 1)), note(inner.binary(ctx, r))),
    unary: (ctx, r) => note(inner.unary(ctx, r)),
    reduce: (ctx, r) => note(inner.reduce(ctx, r)),
  };
  const layoutTransform: CpuLayoutTransformProvider = {
    name: layout.name,
    executionCapabilities: () => layout.executionCapabilities(),
    declaredSupport: () => layout.declaredSupport!(),
    materialize: (ctx, r) => (calls.layouts++, layout.materialize(ctx, r)),
  };
  return { pkg: { ...pkg, tensorPrimitives, layoutTransform } as CpuProviderPackage, calls };
}

const values = (n: number, seed: number) => Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + seed) * 3);

for (const threads of [1, 2]) {
  describe.runIf(status().available)(`ops(backend) on tprims, ${threads} thread${threads > 1 ? 's' : ''}`, () => {
    let backend: CpuBackend;
    let reference: CpuBackend;
    const { pkg, calls } = counted(createTprimsProvider({ parallelMinElements: 1024 }));
    beforeAll(async () => {
      backend = await CpuBackend.create({ kind: 'faer', threads, providers: [pkg] });
      reference = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [] });
    });
    afterAll(async () => {
      await backend.close();
      await reference.close();
    });

    it('add (broadcast), sum over an axis, argmax, cast and a transposing copy equal the reference, on the engine', async () => {
      const a = Tensor.fromArray('f64', [70, 90], values(70 * 90, 1));
      const b = Tensor.fromArray('f64', [70, 1], values(70, 2));
      const t = ops(backend);
      const r = ops(reference);
      const before = calls.executed;
      expect((await t.add(a, b)).toArray()).toEqual((await r.add(a, b)).toArray());
      const s1 = (await t.sum(a, { axes: [1] })).toArray() as number[];
      const s2 = (await r.sum(a, { axes: [1] })).toArray() as number[];
      s1.forEach((x, i) => expect(x).toBeCloseTo(s2[i]!, 10));
      expect((await t.argmax(a, { axes: [0] })).toArray()).toEqual((await r.argmax(a, { axes: [0] })).toArray());
      expect((await t.cast(a, 'i32')).toArray()).toEqual((await r.cast(a, 'i32')).toArray());
      const out = Tensor.zeros('f64', [90, 70]);
      await t.copyInto(out, a.transpose());
      expect(out.toArray()).toEqual(a.transpose().toArray());
      expect(calls.executed - before).toBe(4);
      // Inner mode with the budget: the provider was offered the pool (and split the add over it).
      expect(calls.lanes).toBe(threads);
    });

    it('C[i,l] = Σ A[i,j,k]·B[k,j,l] on row-major operands: dotGeneral permutes one operand through tprims (one layout call) and equals the reference backend', async () => {
      const d = 12;
      const rowMajor = (seed: number) => Tensor.fromArray('f64', [d, d, d], values(d ** 3, seed)).permute([2, 1, 0]);
      const A = rowMajor(5);
      const B = rowMajor(6);
      const dims = { contracting: [[1, 2], [1, 0]] as [number[], number[]] };
      const before = calls.layouts;
      const got = (await backend.dotGeneral(A, B, dims)).toArray() as number[];
      expect(calls.layouts - before).toBe(1);
      const want = (await reference.dotGeneral(A, B, dims)).toArray() as number[];
      got.forEach((x, i) => expect(x).toBeCloseTo(want[i]!, 9));
    });

    it('a declined case falls back to the reference and is still right', async () => {
      // Every operation the façade defines has a kernel; a provider that declines is simulated by a 33-axis tensor (more than the kernels take).
      const x = Tensor.fromArray('f64', new Array(33).fill(1), [2.5]);
      const before = { ...calls };
      const y = await ops(backend).neg(x);
      expect(y.toArray()).toEqual([-2.5]);
      expect(calls.declined - before.declined).toBe(1);
      expect(calls.executed - before.executed).toBe(0);
    });

    it('creates no thread (census of /proc/self/task while it runs)', async () => {
      const a = Tensor.fromArray('f32', [512, 512], values(512 * 512, 3));
      const t = ops(backend);
      await t.add(a, a); // warm: the workers load the addon here
      const { newThreads, before, peak } = await peakThreadsDuring(async () => {
        for (let i = 0; i < 5; i++) {
          await t.add(a, a);
          await t.sum(a, { axes: [0] });
          await t.contiguous(a.transpose());
        }
      });
      expect(newThreads).toEqual([]);
      expect(peak).toBe(before);
    });
  });
}

describe('the package itself', () => {
  it('importing the package loads no addon (child process, /proc/self/maps)', () => {
    const script = `
      const fs = await import('node:fs');
      const loaded = () => fs.readFileSync('/proc/self/maps', 'utf8').includes('tenferro_tprims.node');
      const mod = await import(${JSON.stringify(DIST_INDEX)});
      const afterImport = loaded();
      mod.createTprimsProvider();
      console.log(JSON.stringify({ afterImport, afterCreate: loaded() }));`;
    expect(child(script)).toEqual({ afterImport: false, afterCreate: true });
  });

  it('without the addon, status() says why and createTprimsProvider throws ProviderUnavailable', () => {
    const r = child(
      `const mod = await import(${JSON.stringify(DIST_INDEX)});
      let error; try { mod.createTprimsProvider(); } catch (e) { error = { code: e.code, detail: e.detail }; }
      console.log(JSON.stringify({ status: mod.status(), error }));`,
      { TENFERRO_TPRIMS_DISABLE: '1' },
    );
    expect(r.status.available).toBe(false);
    expect(r.status.reasons).toEqual(['disabled by TENFERRO_TPRIMS_DISABLE=1']);
    expect(r.error.code).toBe('ProviderUnavailable');
    expect(r.error.detail.reasons).toEqual(r.status.reasons);
  });

  it('options: unknown keys and bad values are InvalidArgument, before anything loads', () => {
    expect(() => validateTprimsProviderOptions({ bogus: 1 })).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    expect(() => validateTprimsProviderOptions({ isa: 'sse9' })).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    expect(() => validateTprimsProviderOptions({ parallelMinElements: -1 })).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    expect(() => createTprimsProvider({ bogus: 1 } as never)).toThrow(expect.objectContaining({ code: 'InvalidArgument' }));
    expect(validateTprimsProviderOptions(undefined)).toEqual({ isa: 'auto', parallelMinElements: 1 << 18 });
  });

  it.runIf(status().available)('status() and the package shape', () => {
    const s = status();
    expect(s).toMatchObject({ available: true, details: { slots: 'tensorPrimitives, layoutTransform' } });
    const pkg = createTprimsProvider();
    expect(pkg.kind).toBe('any');
    expect(pkg.tensorPrimitives!.executionCapabilities()).toEqual({
      threadCount: 'perCallUpperBound',
      placement: 'engineWorkers',
      workerLocalSequential: true,
      acceptsSequential: true,
      acceptsOuter: true,
      acceptsInner: true,
    });
    expect(pkg.layoutTransform!.executionCapabilities()).toEqual(pkg.tensorPrimitives!.executionCapabilities());
  });
});

describe('indexed plans (R118)', () => {
  it('task plans live in the engine cache: an identical request reuses its plan, other offsets and alpha included; a zero bound retains none', async () => {
    const backend = await CpuBackend.create({ threads: 2, providers: [createTprimsProvider()] });
    try {
      const t = ops(backend);
      const base = Tensor.fromArray('f64', [6, 40], values(240, 1));
      const x = base.slice([0, 4], undefined);
      const y = base.slice([2, 6], undefined); // the same layout at another offset
      backend.clearIndexedPlanCache();
      const s0 = backend.indexedPlanCacheStats();
      const a = await t.scale(x, 2);
      const b = await t.scale(y, -1);
      const s1 = backend.indexedPlanCacheStats();
      expect(s1.misses - s0.misses).toBe(1);
      expect(s1.hits - s0.hits).toBe(1);
      expect(s1.entries).toBe(1);
      expect(s1.bytes).toBeGreaterThan(0);
      expect(a.toArray()).toEqual((x.toArray() as number[]).map((v) => 2 * v));
      expect(b.toArray()).toEqual((y.toArray() as number[]).map((v) => -v));
      backend.setIndexedPlanCacheLimits({ maxEntries: 0, maxBytes: 1 << 20 });
      expect(backend.indexedPlanCacheStats().entries).toBe(0);
      expect((await t.scale(x, 3)).toArray()).toEqual((x.toArray() as number[]).map((v) => 3 * v));
      expect(backend.indexedPlanCacheStats().entries).toBe(0);
    } finally {
      await backend.close();
    }
  });
});

describe.runIf(status().available)('tprims tasks on a 2-worker backend', () => {
  it('a primitive run as one task is posted as one thread (the addon starts none: tenferro:task)', async () => {
    const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [createTprimsProvider()] });
    const { events } = await taskEventsDuring(async () => {
      try {
        const a = Tensor.fromArray('f64', [8, 8], values(64, 3));
        (await ops(backend).add(a, a)).dispose();
        (await ops(backend).sum(a, { axes: [1] })).dispose();
      } finally {
        await backend.close();
      }
    });
    const runs = events.filter((t) => t.kernel === 'tprimsRun');
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.map((t) => t.threads)).toEqual(runs.map(() => 1));
  });
});
