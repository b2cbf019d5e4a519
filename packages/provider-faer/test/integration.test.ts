// The package as an application uses it: CpuBackend.create({ kind: 'faer', providers: [createFaerProvider()] }).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CpuBackend, type CpuExecutionContext, type CpuGemmProvider, type CpuGemmRequest, type CpuProviderPackage, type KernelArgs, Tensor } from '@tenferro/core';
import { naiveDotGeneral, peakThreadsDuring, randomValues, relativeError, seededRandom, taskEventsDuring, toleranceFor } from '@tenferro/core/testing';
import { describe, expect, it } from 'vitest';
import { planParts, splitRange } from '../src/gemm-provider.js';
import { DEFAULT_PARALLEL_MIN_WORK, defaultParallelMinWork, fixedSplitMinWork } from '../src/options.js';
import { createFaerProvider, faerProviderStatus, status } from '../src/index.js';
import { faerGemm } from '../src/kernels/gemm.js';

const packageStatus = status();
const isa = packageStatus.available ? String(packageStatus.details.isa) : 'unavailable';
const DIST_INDEX = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/** Run an ES module in a fresh Node process (the addon loads once per process) and parse the JSON it prints. */
function child(script: string, env: Record<string, string> = {}): Record<string, any> {
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, ...env } }));
}

function random(dtype: 'f32' | 'f64' | 'c64' | 'c128', shape: [number, number], seed: number): Tensor {
  return Tensor.fromArray(dtype, shape, randomValues(seededRandom(seed), dtype, shape[0] * shape[1]));
}

/** A provider that records the pool size it was offered, then delegates. */
function spying(pkg: CpuProviderPackage, seen: (number | undefined)[]): CpuProviderPackage {
  const inner = pkg.gemm!;
  const gemm: CpuGemmProvider = {
    name: inner.name,
    executionCapabilities: () => inner.executionCapabilities(),
    declaredSupport: () => inner.declaredSupport!(),
    gemm: (ctx, req) => {
      seen.push(ctx.workerPool()?.size);
      return inner.gemm(ctx, req);
    },
  };
  return { kind: 'faer', name: pkg.name, gemm };
}

describe('faer backend', () => {
  it('the addon loads; status() names its ISA path as the provider does', () => {
    expect(packageStatus.available, packageStatus.available ? '' : packageStatus.reasons.join('; ')).toBe(true);
    if (!packageStatus.available) return;
    expect(Object.isFrozen(packageStatus)).toBe(true);
    expect(packageStatus.addonPath).toMatch(/native\/build\/Release\/tenferro_faer\.node$/);
    expect(String(packageStatus.details.isaPaths).split(', ')).toContain(isa === 'avx2+fma' ? 'avx2' : isa);
    expect(packageStatus.warnings.every((w) => typeof w === 'string')).toBe(true);
    const full = faerProviderStatus();
    expect(full.available && [full.isa, full.path]).toEqual([isa, packageStatus.addonPath]);
    const pkg = createFaerProvider();
    expect(pkg.kind).toBe('faer');
    expect(pkg.name).toBe(`tenferro faer GEMM (${isa})`);
    expect(packageStatus.name).toBe(pkg.name);
    expect(pkg.gemm?.executionCapabilities()).toMatchObject({ threadCount: 'perCallUpperBound', placement: 'engineWorkers', workerLocalSequential: true });
  });

  it('a build reports the paths it left out (TENFERRO_NATIVE_ISA=host), and warns only on a CPU that could run one', () => {
    if (!packageStatus.available) return;
    const info = faerProviderStatus();
    if (!info.available) return;
    const { notBuilt, runsNotBuilt, supported } = info.native;
    const avx512Cpu = ['avx512f', 'avx512dq', 'avx512bw', 'avx512vl'].every((f) => new RegExp(`\\b${f}\\b`).test(readFileSync('/proc/cpuinfo', 'utf8')));
    // Only the AVX-512 path can be left out; a left-out path is never reported as supported.
    expect(notBuilt.every((p) => p === 'avx512f')).toBe(true);
    for (const p of notBuilt) expect(supported[p as 'avx512f']).toBe(false);
    expect(runsNotBuilt).toBe(notBuilt.length > 0 && avx512Cpu);
    expect(packageStatus.details.isaNotBuilt).toBe(notBuilt.length > 0 ? notBuilt.join(', ') : undefined);
    expect(packageStatus.warnings.some((w) => w.includes('left out'))).toBe(runsNotBuilt);
    // A full build on an AVX-512 CPU runs it.
    if (notBuilt.length === 0 && avx512Cpu) expect(supported.avx512f).toBe(true);
  });

  it('operands whose K-step strides alias in L1 (whole multiples of 4 KiB) still agree with the reference: the packed path takes them', async () => {
    // A 64×64 f64 lhs with column stride 512 (4 KiB) and a row-major rhs with row stride 1024
    // (8 KiB): every K step of the small kernel would land in the same L1 set (gemm_engine.h,
    // lines_fit_l1), so these run packed; offsets keep the block off the buffer's start.
    const backend = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [createFaerProvider()] });
    try {
      for (const dtype of ['f64', 'f32'] as const) {
        const bytes = dtype === 'f64' ? 8 : 4;
        const n = 64;
        const fill = (len: number, seed: number): SharedArrayBuffer => {
          const buffer = new SharedArrayBuffer(len * bytes);
          (dtype === 'f64' ? new Float64Array(buffer) : new Float32Array(buffer)).set(randomValues(seededRandom(seed), dtype, len) as number[]);
          return buffer;
        };
        const a = Tensor.fromDescriptor({ dtype, shape: [n, n], strides: [1, 512], offset: 3, buffer: fill(512 * n + 8, 1) });
        const b = Tensor.fromDescriptor({ dtype, shape: [n, n], strides: [1024, 1], offset: 5, buffer: fill(1024 * n + 8, 2) });
        const got = await backend.matmul(a, b);
        const want = naiveDotGeneral(a, b, { contracting: [[1], [0]] });
        expect(relativeError(got.toArray() as number[], want.values), dtype).toBeLessThanOrEqual(toleranceFor(dtype));
      }
    } finally {
      await backend.close();
    }
  });

  it('runs matmul through these kernels on 2 workers; executionInfo names the ISA path', async () => {
    const seen: (number | undefined)[] = [];
    const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [spying(createFaerProvider(), seen)] });
    try {
      expect(backend.executionInfo().providerDiagnostic).toContain(`tenferro faer GEMM (${isa})`);
      for (const dtype of ['f64', 'f32', 'c128', 'c64'] as const) {
        const a = random(dtype, [150, 170], 1);
        const b = random(dtype, [170, 130], 2);
        const got = await backend.matmul(a, b);
        const want = naiveDotGeneral(a, b, { contracting: [[1], [0]] });
        expect(got.shape).toEqual([150, 130]);
        expect(relativeError((got.toArray() as number[]).map(Number), want.values), dtype).toBeLessThanOrEqual(toleranceFor(dtype));
      }
      // Inner mode: the provider was offered the 2-lane pool (and splits over it: 150·130·170 is above the split threshold).
      expect(seen.length).toBeGreaterThan(0);
      expect(seen.every((s) => s === 2)).toBe(true);
    } finally {
      await backend.close();
    }
  });

  it('a batched dot-general with conjugation runs through the kernels', async () => {
    const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [createFaerProvider()] });
    try {
      const rand = seededRandom(9);
      const lhs = Tensor.fromArray('c128', [40, 30, 5], randomValues(rand, 'c128', 40 * 30 * 5));
      const rhs = Tensor.fromArray('c128', [30, 50, 5], randomValues(rand, 'c128', 30 * 50 * 5));
      const dims = { contracting: [[1], [0]], batch: [[2], [2]] } as const;
      const got = await backend.dotGeneral(lhs, rhs, dims as never, { conjLhs: true });
      const want = naiveDotGeneral(lhs, rhs, dims as never, { conjLhs: true });
      expect(relativeError((got.toArray() as number[]).map(Number), want.values)).toBeLessThanOrEqual(toleranceFor('c128'));
    } finally {
      await backend.close();
    }
  });

  it('posts every task as one thread on a 2-worker backend — a whole GEMM, the lanes of a split, a grouped GEMM (tenferro:task)', async () => {
    // The addon starts no thread: a task posted as the context's nativeThreadCount() (2) made the
    // main thread wait for it by yielding its CPU to helpers that do not exist.
    const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [createFaerProvider()] });
    const { events } = await taskEventsDuring(async () => {
      try {
        const small = random('f64', [64, 64], 1);
        (await backend.matmul(small, small)).dispose();
        const large = random('f64', [384, 384], 2);
        (await backend.matmul(large, large)).dispose();
        await backend.gemmGrouped([{ out: Tensor.zeros('f64', [5, 4]), lhs: random('f64', [5, 7], 3), rhs: random('f64', [7, 4], 4) }]);
      } finally {
        await backend.close();
      }
    });
    const faerTasks = events.filter((t) => t.kernel === 'faerGemm' || t.kernel === 'faerGemmGroup');
    expect(faerTasks.filter((t) => t.kernel === 'faerGemm' && !t.fanOut).length, 'the small GEMM ran as one task').toBeGreaterThanOrEqual(1);
    expect(faerTasks.filter((t) => t.fanOut).length, 'the large GEMM was split over the lanes').toBeGreaterThanOrEqual(2);
    expect(faerTasks.some((t) => t.kernel === 'faerGemmGroup')).toBe(true);
    expect(faerTasks.map((t) => `${t.kernel}${t.fanOut ? ' (lane)' : ''}: ${t.threads}`).filter((d) => !d.endsWith(': 1'))).toEqual([]);
  });

  it('creates no threads during a 2-worker GEMM (thread census)', async () => {
    const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [createFaerProvider()] });
    try {
      const a = random('f64', [384, 384], 3);
      const b = random('f64', [384, 384], 4);
      await backend.matmul(a, b); // warm: workers load the addon here
      const { newThreads, before, peak } = await peakThreadsDuring(async () => {
        for (let i = 0; i < 5; i++) await backend.matmul(a, b);
      });
      expect(newThreads).toEqual([]);
      expect(peak).toBe(before);
      expect(backend.executionInfo().workerCount).toBeLessThanOrEqual(2);
    } finally {
      await backend.close();
    }
  });

  it('importing the package loads no addon (child process, /proc/self/maps)', () => {
    const script = `
      const fs = await import('node:fs');
      const loaded = () => fs.readFileSync('/proc/self/maps', 'utf8').includes('tenferro_faer.node');
      const mod = await import(${JSON.stringify(DIST_INDEX)});
      const afterImport = loaded();
      mod.createFaerProvider();
      console.log(JSON.stringify({ afterImport, afterCreate: loaded() }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ afterImport: false, afterCreate: true });
  });

  it('without the addon, status() says why and what to do, and createFaerProvider throws ProviderUnavailable with the same', () => {
    const r = child(
      `const mod = await import(${JSON.stringify(DIST_INDEX)});
      const attempt = (options) => { try { mod.createFaerProvider(options); } catch (e) { return { code: e.code, kind: e.kind, message: e.message, detail: e.detail }; } };
      console.log(JSON.stringify({ status: mod.status(), error: attempt(), badOptions: attempt({ isa: 'avx2', bogus: 1 }) }));`,
      { TENFERRO_FAER_DISABLE: '1' },
    );
    expect(r.status).toEqual({
      available: false,
      reasons: ['disabled by TENFERRO_FAER_DISABLE=1'],
      possibleSolutions: ['unset TENFERRO_FAER_DISABLE', expect.stringContaining("core's reference kernels")],
    });
    expect(r.error).toMatchObject({ code: 'ProviderUnavailable', kind: 'Unsupported', detail: { reasons: r.status.reasons, possibleSolutions: r.status.possibleSolutions } });
    expect(r.error.message).toContain('disabled by TENFERRO_FAER_DISABLE=1. Possible solutions: unset TENFERRO_FAER_DISABLE');
    // Options are checked before anything is loaded: a bad key wins over the missing addon.
    expect(r.badOptions).toMatchObject({ code: 'InvalidArgument', detail: { param: 'options.bogus' } });
  });

  it('an addon whose descriptor header is not the TypeScript one is unavailable, saying so', () => {
    // The addon as built, but reporting a header one entry longer (as one from another version would).
    const r = child(
      `const { default: Module } = await import('node:module');
      const load = Module._extensions['.node'];
      Module._extensions['.node'] = (module, file) => {
        load(module, file);
        if (file.endsWith('tenferro_faer.node')) module.exports = { ...module.exports, descHeader: module.exports.descHeader + 1 };
      };
      const mod = await import(${JSON.stringify(DIST_INDEX)});
      let error;
      try { mod.createFaerProvider(); } catch (e) { error = e.code; }
      console.log(JSON.stringify({ status: mod.status(), error }));`,
    );
    expect(r.status.available).toBe(false);
    expect(r.status.reasons).toEqual([expect.stringMatching(/descriptor header has \d+ entries but this package's TypeScript writes \d+/)]);
    expect(r.status.possibleSolutions[0]).toContain('rebuild the addon, so that it matches this version of @tenferro/provider-faer');
    expect(r.error).toBe('ProviderUnavailable');
  });

  it('installed, it is what CpuBackend.create({ kind: \'faer\' }) uses without being passed; providers: [] keeps core\'s reference kernels', async () => {
    const found = await CpuBackend.create({ kind: 'faer', threads: 1 });
    const reference = await CpuBackend.create({ kind: 'faer', threads: 1, providers: [] });
    try {
      expect(found.executionInfo().providerDiagnostic).toMatch(/faer GEMM \((avx512f|avx2\+fma|portable)\)/);
      expect(found.providerBundle().gemm.name).toBe(createFaerProvider().gemm!.name);
      expect(reference.executionInfo().providerDiagnostic).toContain('reference');
    } finally {
      await Promise.all([found.close(), reference.close()]);
    }
  });

  it('rejects bad options with InvalidArgument naming the option', () => {
    const bad: [unknown, string][] = [
      [null, 'options'],
      [[], 'options'],
      [5, 'options'],
      [{ isa: 'sse9' }, 'options.isa'],
      [{ isa: 2 }, 'options.isa'],
      [{ bogus: 1 }, 'options.bogus'],
      [{ parallelMinWork: -1 }, 'options.parallelMinWork'],
      [{ parallelMinWork: '5' }, 'options.parallelMinWork'],
      [{ parallelMinWork: Number.NaN }, 'options.parallelMinWork'],
    ];
    for (const [options, param] of bad) {
      expect(() => createFaerProvider(options as never), JSON.stringify(options)).toThrow(
        expect.objectContaining({ code: 'InvalidArgument', kind: 'Validation', op: 'createFaerProvider', detail: { param } }),
      );
    }
    expect(() => createFaerProvider({ bogus: 1 } as never)).toThrow('expected one of isa, parallelMinWork for options.bogus but received "bogus" (string)');
    expect(createFaerProvider({}).name).toBe(createFaerProvider().name);
  });
});

describe('partitioning', () => {
  it('splitRange gives near-equal disjoint granule-aligned ranges covering the extent', () => {
    for (const [extent, granule, count] of [[1024, 6, 2], [7, 6, 2], [100, 32, 3], [5, 1, 8], [1, 6, 2]] as const) {
      const r = splitRange(extent, granule, count);
      expect(r[0]![0]).toBe(0);
      expect(r[r.length - 1]![1]).toBe(extent);
      for (let i = 1; i < r.length; i++) expect(r[i]![0]).toBe(r[i - 1]![1]);
      for (const [lo] of r) expect(lo % granule).toBe(0);
      expect(r.length).toBeLessThanOrEqual(count);
    }
  });

  it('the default split threshold follows the ISA path and dtype: 200³ on AVX-512; on AVX2 150³ for f32 and f64', () => {
    expect(DEFAULT_PARALLEL_MIN_WORK).toBe(200 ** 3);
    expect(defaultParallelMinWork(2, 8)).toBe(DEFAULT_PARALLEL_MIN_WORK);
    expect(defaultParallelMinWork(2, 4)).toBe(DEFAULT_PARALLEL_MIN_WORK);
    expect(defaultParallelMinWork(1, 4)).toBe(150 ** 3);
    expect(defaultParallelMinWork(1, 8)).toBe(150 ** 3);
    expect(defaultParallelMinWork(0, 8)).toBe(300 ** 3 / 8);
    // A split into fixed parts (summed requests, batch ranges, large GEMMs) starts at 300³ on AVX-512.
    expect(fixedSplitMinWork(2, 8)).toBe(300 ** 3);
    expect(fixedSplitMinWork(2, 4)).toBe(300 ** 3);
    // ...and at 300³/2 (238³) on AVX2: every part waits for the latest lane.
    expect(fixedSplitMinWork(1, 8)).toBe(300 ** 3 / 2);
    expect(fixedSplitMinWork(1, 4)).toBe(300 ** 3 / 2);
    // On AVX-512, n = 224 and 256 split, n = 192 stays one task.
    const wide = { mr: 24, nr: 8 };
    expect(planParts({ m: 224, n: 224, k: 224, batch: [], dtype: 'f64' }, 2, wide, defaultParallelMinWork(2, 8))).toHaveLength(2);
    expect(planParts({ m: 256, n: 256, k: 256, batch: [], dtype: 'f32' }, 2, wide, defaultParallelMinWork(2, 4))).toHaveLength(2);
    expect(planParts({ m: 192, n: 192, k: 192, batch: [], dtype: 'f32' }, 2, wide, defaultParallelMinWork(2, 4))).toHaveLength(1);
    // On the avx2 path n = 160 and up split, f32 as f64; n = 144 and below stay one task.
    const shape = { mr: 8, nr: 6 };
    expect(planParts({ m: 256, n: 256, k: 256, batch: [], dtype: 'f64' }, 2, shape, defaultParallelMinWork(1, 8))).toHaveLength(2);
    expect(planParts({ m: 256, n: 256, k: 256, batch: [], dtype: 'f32' }, 2, shape, defaultParallelMinWork(1, 4))).toHaveLength(2);
    expect(planParts({ m: 160, n: 160, k: 160, batch: [], dtype: 'f32' }, 2, shape, defaultParallelMinWork(1, 4))).toHaveLength(2);
    expect(planParts({ m: 160, n: 160, k: 160, batch: [], dtype: 'f64' }, 2, shape, defaultParallelMinWork(1, 8))).toHaveLength(2);
    expect(planParts({ m: 144, n: 144, k: 144, batch: [], dtype: 'f32' }, 2, shape, defaultParallelMinWork(1, 4))).toHaveLength(1);
    expect(planParts({ m: 128, n: 128, k: 128, batch: [], dtype: 'f64' }, 2, shape, defaultParallelMinWork(1, 8))).toHaveLength(1);
  });

  it('planParts: one task when small or one lane; batches, N or M otherwise', () => {
    const shape = { mr: 32, nr: 6 };
    expect(planParts({ m: 1000, n: 1000, k: 1000, batch: [] }, 1, shape, 0)).toHaveLength(1);
    expect(planParts({ m: 10, n: 10, k: 10, batch: [] }, 2, shape, 1e6)).toHaveLength(1);
    // The threshold counts real multiply-adds: a complex m·n·k step is four of them.
    expect(planParts({ m: 100, n: 100, k: 100, batch: [], dtype: 'f64' }, 2, shape, 2e6)).toHaveLength(1);
    expect(planParts({ m: 100, n: 100, k: 100, batch: [], dtype: 'c128' }, 2, shape, 2e6)).toHaveLength(2);
    const byN = planParts({ m: 512, n: 1024, k: 512, batch: [] }, 2, shape, 0);
    expect(byN.map((p) => [p.n0, p.n1])).toEqual([[0, 516], [516, 1024]]);
    const byM = planParts({ m: 1024, n: 100, k: 512, batch: [] }, 2, shape, 0);
    expect(byM.map((p) => [p.m0, p.m1])).toEqual([[0, 512], [512, 1024]]);
    const byBatch = planParts({ m: 20, n: 20, k: 20, batch: [3, 2] }, 2, shape, 0);
    expect(byBatch.map((p) => [p.b0, p.b1])).toEqual([[0, 3], [3, 6]]);
  });

  it('the parts of a pool-split request together compute exactly the whole GEMM', async () => {
    // A stand-in context whose pool runs the kernel tasks in this thread.
    const tasks: KernelArgs[] = [];
    const pool = {
      size: 2,
      map: async (_k: unknown, payloads: readonly KernelArgs[]) => payloads.map((p) => (tasks.push(p), faerGemm(p))),
      runOn: async () => undefined,
    };
    const ctx = { workerPool: () => pool, run: async (_k: unknown, p: KernelArgs) => (tasks.push(p), faerGemm(p)), threadBudget: 2 } as unknown as CpuExecutionContext;
    const gemm = createFaerProvider({ parallelMinWork: 0 }).gemm!;
    const a = random('f64', [70, 33], 5);
    const b = random('f64', [33, 45], 6);
    const out = Tensor.fromArray('f64', [70, 45], new Array(70 * 45).fill(Number.NaN));
    const op = (t: Tensor) => ({ buffer: t.buffer, offset: t.offset, rowStride: 1, colStride: t.shape[0]!, batchStrides: [] });
    const req: CpuGemmRequest = { dtype: 'f64', m: 70, n: 45, k: 33, batch: [], lhs: op(a), rhs: op(b), out: op(out), alpha: 1, beta: 0, conjLhs: false, conjRhs: false };
    const outcome = await gemm.gemm(ctx, req);
    expect(outcome.executed).toBe(true);
    expect(tasks).toHaveLength(2);
    const want = naiveDotGeneral(a, b, { contracting: [[1], [0]] });
    expect(relativeError((out.toArray() as number[]).map(Number), want.values)).toBeLessThanOrEqual(toleranceFor('f64'));
  });
});

describe('grouped GEMM (R110)', () => {
  it('the package leaves grouped GEMM provider-owned (its groupedGemm schedules the lanes itself)', async () => {
    const pkg = createFaerProvider();
    expect(pkg.engineOuterGroupedGemm).toBeUndefined();
    const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [pkg] });
    try {
      expect(backend.providerBundle().groupedScheduling).toBe('providerOwned');
    } finally {
      await backend.close();
    }
  });

  it('a faer bundle that opts in to engine scheduling: at 2 threads each job is one Sequential call without a pool, results equal the oracle', async () => {
    const seen: (number | undefined)[] = [];
    const pkg = createFaerProvider();
    const spied = { ...spying(pkg, seen), engineOuterGroupedGemm: true };
    const backend = await CpuBackend.create({ kind: 'faer', threads: 2, providers: [spied] });
    try {
      expect(backend.providerBundle().groupedScheduling).toBe('engineOuter');
      const jobs = Array.from({ length: 6 }, (_, i) => ({
        out: Tensor.zeros('f64', [5 + i, 4]),
        lhs: random('f64', [5 + i, 7], 10 + i),
        rhs: random('f64', [7, 4], 20 + i),
      }));
      const before = backend.executionInfo().executorEntries;
      await backend.gemmGrouped(jobs);
      const after = backend.executionInfo().executorEntries;
      if (backend.numThreads() > 1) {
        expect(after.submits - before.submits).toBe(1);
        expect(seen).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
      } else {
        expect(after.installs - before.installs).toBe(1);
      }
      for (const job of jobs) {
        const want = naiveDotGeneral(job.lhs, job.rhs, { contracting: [[1], [0]] }).values;
        expect(relativeError((job.out.toArray() as number[]).map(Number), want)).toBeLessThanOrEqual(toleranceFor('f64'));
      }
    } finally {
      await backend.close();
    }
  });

  // The provider-owned path (one thread, or a bundle without engine scheduling): the provider's
  // groupedGemm runs the jobs in one task per lane (claimed through a shared counter), a job big
  // enough to split on its own through gemm; core audits the ledger (each job recorded once).
  for (const threads of [1, 2]) {
    it(`provider-owned grouped GEMM at ${threads} thread(s): one groupedGemm call, every job equal to the oracle, each recorded once`, async () => {
      const pkg = createFaerProvider({ parallelMinWork: 40 * 40 * 40 });
      const inner = pkg.gemm!;
      let groupedCalls = 0;
      let gemmCalls = 0;
      const gemm: CpuGemmProvider = {
        name: inner.name,
        executionCapabilities: () => inner.executionCapabilities(),
        declaredSupport: () => inner.declaredSupport!(),
        gemm: (ctx, req) => {
          gemmCalls++;
          return inner.gemm(ctx, req);
        },
        groupedGemm: (ctx, req) => {
          groupedCalls++;
          return inner.groupedGemm!(ctx, req);
        },
      };
      const backend = await CpuBackend.create({ kind: 'faer', threads, providers: [{ kind: 'faer', name: pkg.name, gemm }] });
      try {
        expect(backend.providerBundle().groupedScheduling).toBe('providerOwned');
        for (const dtype of ['f64', 'f32', 'c128'] as const) {
          // 23 small jobs of assorted shapes and one of 48 x 48 x 48 (above parallelMinWork).
          const jobs = Array.from({ length: 24 }, (_, i) => {
            const [m, n, k] = i === 5 ? [48, 48, 48] : [3 + (i % 7), 2 + ((i * 3) % 5), 1 + ((i * 5) % 9)];
            return { out: Tensor.zeros(dtype, [m, n]), lhs: random(dtype, [m, k], 100 + i), rhs: random(dtype, [k, n], 200 + i) };
          });
          await backend.gemmGrouped(jobs);
          for (const job of jobs) {
            const want = naiveDotGeneral(job.lhs, job.rhs, { contracting: [[1], [0]] }).values;
            expect(relativeError((job.out.toArray() as number[]).map(Number), want), dtype).toBeLessThanOrEqual(toleranceFor(dtype));
          }
        }
        // One provider call per group: core never went job by job through gemm.
        expect(groupedCalls).toBe(3);
        expect(gemmCalls).toBe(0);
      } finally {
        await backend.close();
      }
    });
  }
});
