import { CpuBackend, TenferroError } from '@tenferro/core';
import { describe, expect, it } from 'vitest';
import { cpuIsa, isaOfOpenblasCore, isaRank, recommendedOpenblasCore } from '../src/cpu-isa.js';
import { blasProviderStatus, createBlasProvider, status as packageStatus } from '../src/index.js';
import { CORE_DIST_INDEX, DIST_INDEX, EXPECTED_RUNTIME, cpuHasAvx512, runChild } from './helpers.js';

const APT = 'apt-get install -y libopenblas-dev pkg-config';

describe('runtime identity and diagnostics', () => {
  it('identifies the loaded runtime (and it is the one this run expects)', () => {
    const status = blasProviderStatus();
    expect(status.available).toBe(true);
    if (!status.available) return;
    if (EXPECTED_RUNTIME !== undefined) expect(status.runtime.vendor).toBe(EXPECTED_RUNTIME);
    const r = status.runtime;
    expect(r.version).not.toBe('');
    expect(r.libraryPath).toMatch(/\.so/);
    expect(status.name).toContain(r.name);
    expect(status.name).toContain(r.threadingLayer);
    expect(status.name).toContain(r.libraryPath);
    const pkg = createBlasProvider();
    expect(pkg.kind).toBe('blas');
    expect(pkg.gemm?.name).toBe(status.name);
    expect(createBlasProvider()).toBe(pkg); // one runtime per process, one package
  });

  it('declares the capabilities the README table gives for this runtime', () => {
    const status = blasProviderStatus();
    if (!status.available) throw new Error('no BLAS');
    const { vendor, threadingLayer } = status.runtime;
    const caps = status.capabilities;
    if ((vendor === 'openblas' || vendor === 'blis') && (threadingLayer === 'pthreads' || threadingLayer === 'openmp') && caps.threadCount === 'globalOrUncontrolled') {
      expect(caps).toEqual({ threadCount: 'globalOrUncontrolled', placement: 'externalWorkers', workerLocalSequential: false, acceptsSequential: false, acceptsOuter: false, acceptsInner: true });
    } else if (vendor === 'reference' || threadingLayer === 'serial' || threadingLayer === 'sequential') {
      expect(caps).toEqual({ threadCount: 'sequential', placement: 'callingThread', workerLocalSequential: true, acceptsSequential: true, acceptsOuter: true, acceptsInner: true });
    } else {
      expect(caps.threadCount).toBe('perCallUpperBound');
      expect(caps.placement).toBe('externalWorkers');
    }
    if (vendor === 'openblas') {
      expect(threadingLayer).toBe('pthreads'); // Debian's libopenblas0-pthread, the default
      expect(status.declaredSupport.conjugation).toBe(true); // CblasConjNoTrans probed at load
    }
    if (vendor === 'reference') expect(status.declaredSupport.conjugation).toBe(false);
    expect(status.declaredSupport.stridedOperands).toBe(false);
    expect(status.declaredSupport.dtypes).toEqual(['f32', 'f64', 'c64', 'c128']);
  });

  const loaded = blasProviderStatus();
  it.skipIf(!loaded.available || loaded.runtime.vendor !== 'openblas')('the core-type warning is computed from the CPU, not assumed: one warning exactly when the running core is below this CPU, none otherwise (OpenBLAS only; whatever OPENBLAS_CORETYPE says)', () => {
    // Asserts on every machine and environment (#39): the expected outcome is derived here from
    // /proc/cpuinfo and the running core, then compared with what the provider reports.
    const status = blasProviderStatus();
    if (!status.available) throw new Error('BLAS unavailable');
    const core = status.runtime.coreType;
    expect(core, 'OpenBLAS names the core it runs').toEqual(expect.any(String));
    const cpu = cpuIsa();
    expect(status.runtime.cpuIsa).toBe(cpu?.level);
    const coreLevel = isaOfOpenblasCore(core!);
    const below = cpu !== undefined && coreLevel !== undefined && isaRank(coreLevel) < isaRank(cpu.level);
    const coreWarnings = status.warnings.filter((w) => w.includes('below this CPU'));
    expect(coreWarnings, `core ${core} (${coreLevel}) on a ${cpu?.level} CPU`).toHaveLength(below ? 1 : 0);
    if (below) {
      expect(coreWarnings[0]).toContain(`OpenBLAS runs its ${core} kernels`);
      expect(coreWarnings[0]).toContain(`OPENBLAS_CORETYPE=${recommendedOpenblasCore(cpu!.level, cpu!.vendor) ?? 'a newer core'}`);
      if (status.runtime.coretype?.action === 'userEnvironment') expect(coreWarnings[0]).toContain('comes from your environment');
    }
    if (cpuHasAvx512() && /^prescott$/i.test(core!)) expect(status.warnings.join(' ')).toContain('OPENBLAS_CORETYPE=SkylakeX');
  });

  it('status() reports the same runtime in the shape every provider package uses', () => {
    const full = blasProviderStatus();
    const s = packageStatus();
    if (!full.available || !s.available) throw new Error('no BLAS');
    expect(Object.isFrozen(s) && Object.isFrozen(s.details)).toBe(true);
    expect(s.name).toBe(full.name);
    expect(s.addonPath).toBe(full.addonPath);
    expect(s.warnings).toEqual(full.warnings);
    const r = full.runtime;
    expect(s.details).toMatchObject({
      runtime: r.name,
      version: r.version,
      vendor: r.vendor,
      threadingLayer: r.threadingLayer,
      threads: r.threads,
      coreType: r.coreType ?? null,
      cpuIsa: r.cpuIsa ?? null,
      libraryPath: r.libraryRealPath,
      threadControl: full.capabilities.threadCount,
      placementControl: full.capabilities.placement,
      conjNoTrans: full.declaredSupport.conjugation,
    });
    for (const value of Object.values(s.details)) expect(['string', 'number', 'boolean'].includes(typeof value) || value === null).toBe(true);
  });

  it('validates options before loading anything, naming the bad one', () => {
    const bad: [unknown, string][] = [
      [5, 'options'],
      [null, 'options'],
      [[], 'options'],
      [{ openblasCoretype: 5 }, 'options.openblasCoretype'],
      [{ openblasCoretype: 'Sky lake' }, 'options.openblasCoretype'],
      [{ bogus: 1 }, 'options.bogus'],
      [{ splitMinWork: -1 }, 'options.splitMinWork'],
      [{ splitMinWork: Number.NaN }, 'options.splitMinWork'],
      [{ splitMinWork: '1' }, 'options.splitMinWork'],
    ];
    for (const [options, param] of bad) {
      let err: unknown;
      try {
        createBlasProvider(options as never);
      } catch (e) {
        err = e;
      }
      expect(TenferroError.is(err, 'InvalidArgument'), JSON.stringify(options)).toBe(true);
      expect((err as TenferroError).detail).toEqual({ param });
      expect((err as TenferroError).op).toBe('createBlasProvider');
    }
  });
});

describe('no BLAS: the package still loads and says what to do (child process)', () => {
  it('status() is unavailable with reasons and the apt-get line; createBlasProvider() throws ProviderUnavailable carrying the same', () => {
    const r = runChild(
      `import { blasProviderStatus, createBlasProvider, status } from ${JSON.stringify(DIST_INDEX)};
       import { CpuBackend } from ${JSON.stringify(CORE_DIST_INDEX)};
       const attempt = (options) => { try { createBlasProvider(options); } catch (e) { return { code: e.code, kind: e.kind, message: e.message, detail: e.detail }; } };
       let kindError;
       try { await CpuBackend.create({ kind: 'blas' }); } catch (e) { kindError = e.code; }
       console.log(JSON.stringify({ status: status(), full: blasProviderStatus(), error: attempt(), badOptions: attempt({ bogus: 1 }), kindError }));`,
      { TENFERRO_IGNORE_SYSTEM_BLAS: '1' },
    );
    expect(r.status, r.stderr).toBe(0);
    type Unavailable = { available: boolean; reasons: string[]; possibleSolutions: string[] };
    type Failure = { code: string; kind: string; message: string; detail: Record<string, unknown> };
    const out = r.json as { status: Unavailable; full: Unavailable; error: Failure; badOptions: Failure; kindError: string };
    expect(out.status.available).toBe(false);
    expect(out.status.reasons).toEqual(['disabled by TENFERRO_IGNORE_SYSTEM_BLAS=1']);
    expect(out.status.possibleSolutions[0]).toBe('unset TENFERRO_IGNORE_SYSTEM_BLAS');
    expect(out.status.possibleSolutions.join('\n')).toContain(APT);
    expect(out.full).toEqual(out.status);
    expect(out.error.code).toBe('ProviderUnavailable');
    expect(out.error.kind).toBe('Unsupported');
    expect(out.error.message).toContain(APT);
    expect(out.error.detail).toEqual({ reasons: out.status.reasons, possibleSolutions: out.status.possibleSolutions });
    expect(out.badOptions).toMatchObject({ code: 'InvalidArgument', detail: { param: 'options.bogus' } });
    expect(out.kindError).toBe('BackendKindUnavailable');
  });

  it('an addon that cannot be loaded: the load error, and the BLAS detection\'s view', () => {
    const r = runChild(
      `import { status } from ${JSON.stringify(DIST_INDEX)};
       console.log(JSON.stringify(status()));`,
      { TENFERRO_BLAS_ADDON: '/nonexistent/tenferro_blas.node' },
    );
    const out = r.json as { available: boolean; reasons: string[]; possibleSolutions: string[] };
    expect(out.available).toBe(false);
    expect(out.reasons[0]).toContain('cannot load the native addon /nonexistent/tenferro_blas.node');
    expect(out.possibleSolutions.join('\n')).toContain('install python3, make and g++');
    expect(out.possibleSolutions.join('\n')).toContain('npm rebuild @tenferro/provider-blas');
  });

  it('the detection module reports the same when told to ignore the system BLAS', () => {
    const r = runChild(
      `import { detectBlas } from ${JSON.stringify(new URL('../scripts/detect-blas.mjs', import.meta.url).pathname)};
       console.log(JSON.stringify(detectBlas()));`,
      { TENFERRO_IGNORE_SYSTEM_BLAS: '1' },
    );
    const d = r.json as { found: boolean; possibleSolutions: string[] };
    expect(d.found).toBe(false);
    expect(d.possibleSolutions.join('\n')).toContain(APT);
  });
});

const isOpenblas = (() => {
  const s = blasProviderStatus();
  return s.available && s.runtime.vendor === 'openblas';
})();

describe.skipIf(!isOpenblas)('the OpenBLAS core-type trap (child processes; OpenBLAS only)', () => {
  it.skipIf(!cpuHasAvx512())('OPENBLAS_CORETYPE=Prescott on an AVX-512 CPU: diagnostics carry the warning and the SkylakeX fix (needs AVX-512)', () => {
    const r = runChild(
      `import { blasProviderStatus, createBlasProvider } from ${JSON.stringify(DIST_INDEX)};
       const s = blasProviderStatus();
       console.log(JSON.stringify({ core: s.runtime.coreType, warnings: s.warnings, name: createBlasProvider().gemm.name }));`,
      { OPENBLAS_CORETYPE: 'Prescott' },
    );
    const out = r.json as { core: string; warnings: string[]; name: string };
    expect(out.core).toBe('Prescott');
    expect(out.warnings.join(' ')).toContain('OPENBLAS_CORETYPE=SkylakeX');
    expect(out.name).toContain('WARNING');
    expect(out.name).toContain('OPENBLAS_CORETYPE=SkylakeX');
  });

  /** Run `pre`, then one GEMM on a 2-thread blas backend, in a fresh process; report the runtime. */
  const gemmChild = (pre: string, env: Record<string, string | undefined> = { OPENBLAS_CORETYPE: undefined }) =>
    runChild(
      `import { blasProviderStatus, createBlasProvider } from ${JSON.stringify(DIST_INDEX)};
       import { CpuBackend, Tensor } from ${JSON.stringify(CORE_DIST_INDEX)};
       import { readFileSync } from 'node:fs';
       const errors = [];
       const attempt = (f) => { try { return f(); } catch (e) { errors.push({ code: e.code, message: e.message }); } };
       ${pre}
       const mappedBefore = /libopenblas|libblas\\.so/.test(readFileSync('/proc/self/maps', 'utf8'));
       const backend = await CpuBackend.create({ kind: 'blas', threads: 2, providers: [createBlasProvider()] });
       const a = Tensor.fromArray('f64', [64, 64], Array.from({ length: 4096 }, (_, i) => i % 7));
       await backend.matmul(a, a);
       const info = backend.executionInfo();
       const s = blasProviderStatus();
       await backend.close();
       console.log(JSON.stringify({ mappedBefore, core: s.runtime.coreType, coretype: s.runtime.coretype, decision: s.runtime.coretypeDecision, warnings: s.warnings,
         loadedOn: s.runtime.loadedOn, threads: s.runtime.runtimeThreads, workers: info.workers, domainCpus: info.domainCpus, diagnostic: info.providerDiagnostic, errors }));`,
      env,
    );
  type GemmOut = {
    mappedBefore: boolean;
    core: string;
    coretype: { action: string; value?: string; predicted?: string };
    decision: string;
    warnings: string[];
    loadedOn: { tid: number; cpus: string };
    threads: { tid: number; cpus: string }[];
    workers: { tid: number; cpus: string }[];
    domainCpus: string;
    diagnostic: string;
    errors: { code: string; message: string }[];
  };

  it('nothing loads BLAS before the first GEMM; it is loaded on a pinned engine worker, and its threads get that mask', () => {
    const r = gemmChild('blasProviderStatus();');
    const out = r.json as GemmOut;
    expect(out, r.stderr).toBeDefined();
    expect(out.mappedBefore).toBe(false);
    expect(out.workers.map((w) => w.tid)).toContain(out.loadedOn.tid);
    expect(out.loadedOn.cpus).toBe(out.domainCpus);
    for (const t of out.threads) expect(t.cpus).toBe(out.domainCpus);
    expect(out.diagnostic).toContain(`loaded on thread ${out.loadedOn.tid} (cpus ${out.domainCpus})`);
  });

  it('openblasCoretype is set (native setenv) before the load on the worker; a different core later is refused', () => {
    const r = gemmChild(`attempt(() => createBlasProvider({ openblasCoretype: 'Haswell' }));
                         attempt(() => createBlasProvider({ openblasCoretype: 'haswell' }));
                         attempt(() => createBlasProvider({ openblasCoretype: 'Sandybridge' }));`);
    const out = r.json as GemmOut;
    expect(out.core).toBe('Haswell');
    expect(out.coretype.action).toBe('option');
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]!.code).toBe('InvalidArgument');
    expect(out.errors[0]!.message).toContain('already decided');
  });

  it("openblasCoretype: 'keep' leaves OpenBLAS's own choice; an OPENBLAS_CORETYPE set by the user is left alone", () => {
    const kept = gemmChild(`createBlasProvider({ openblasCoretype: 'keep' });`).json as GemmOut;
    expect(kept.coretype.action).toBe('kept');
    expect(kept.core).toBe(kept.coretype.predicted);
    const user = gemmChild('', { OPENBLAS_CORETYPE: 'Sandybridge' }).json as GemmOut;
    expect(user.coretype.action).toBe('userEnvironment');
    expect(user.core).toBe('Sandybridge');
    expect(user.decision).toContain('from the environment');
    if (cpuHasAvx512()) expect(user.warnings.join(' ')).toContain('OPENBLAS_CORETYPE=SkylakeX');
  });

  it('without options: the core OpenBLAS picks by itself unless it is below this CPU, then the matching one (set by tenferro)', () => {
    const out = gemmChild('').json as GemmOut;
    const predicted = out.coretype.predicted ?? '';
    const low = cpuHasAvx512() && !/^(skylakex|cooperlake|sapphirerapids)$/i.test(predicted);
    if (low) {
      expect(out.coretype.action).toBe('set');
      expect(out.core).toBe('SkylakeX');
      expect(out.diagnostic).toContain('set by tenferro');
    } else {
      expect(out.core).toBe(predicted);
      expect(['notNeeded', 'unknown']).toContain(out.coretype.action);
    }
    expect(out.warnings).toEqual([]);
  });

  it('once loaded, asking for another core is InvalidArgument', () => {
    const r = gemmChild('', { OPENBLAS_CORETYPE: undefined });
    expect((r.json as GemmOut).errors).toEqual([]);
    const again = runChild(
      `import { createBlasProvider } from ${JSON.stringify(DIST_INDEX)};
       import { CpuBackend, Tensor } from ${JSON.stringify(CORE_DIST_INDEX)};
       const backend = await CpuBackend.create({ kind: 'blas', threads: 1, providers: [createBlasProvider()] });
       const a = Tensor.fromArray('f64', [2, 2], [1, 2, 3, 4]);
       await backend.matmul(a, a);
       let error;
       try { createBlasProvider({ openblasCoretype: 'Nehalem' }); } catch (e) { error = { code: e.code, message: e.message }; }
       await backend.close();
       console.log(JSON.stringify(error ?? null));`,
      { OPENBLAS_CORETYPE: undefined },
    );
    const e = again.json as { code: string; message: string };
    expect(e.code).toBe('InvalidArgument');
    expect(e.message).toContain('already');
  });
});

describe('CpuBackend with the blas kind', () => {
  it('executionInfo().providerDiagnostic names the runtime', async () => {
    const backend = await CpuBackend.create({ kind: 'blas', providers: [createBlasProvider()] });
    try {
      const s = blasProviderStatus();
      expect(backend.executionInfo().providerDiagnostic).toContain(s.available ? s.name : '?');
    } finally {
      await backend.close();
    }
  });
});
