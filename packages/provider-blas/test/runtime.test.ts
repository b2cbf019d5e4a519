import { CpuBackend, TenferroError } from '@tenferro/core';
import { describe, expect, it } from 'vitest';
import { blasProviderStatus, createBlasProvider } from '../src/index.js';
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

  it('the core-type warning is computed from the CPU, not assumed (none when the core matches the CPU)', () => {
    const status = blasProviderStatus();
    if (!status.available || status.runtime.vendor !== 'openblas') return;
    const core = status.runtime.coreType ?? '';
    const avx512Core = /^(skylakex|cooperlake|sapphirerapids)$/i.test(core);
    if (cpuHasAvx512() && avx512Core) expect(status.warnings).toEqual([]);
    if (cpuHasAvx512() && /^prescott$/i.test(core)) expect(status.warnings.join(' ')).toContain('OPENBLAS_CORETYPE=SkylakeX');
  });

  it('validates options', () => {
    for (const bad of [5, null, [], { openblasCoretype: 5 }, { openblasCoretype: 'Sky lake' }, { bogus: 1 }]) {
      let err: unknown;
      try {
        createBlasProvider(bad as never);
      } catch (e) {
        err = e;
      }
      expect(TenferroError.is(err, 'InvalidArgument'), JSON.stringify(bad)).toBe(true);
    }
  });
});

describe('no BLAS: the package still loads and says what to do (child process)', () => {
  it('blasProviderStatus() is unavailable with reasons and the apt-get line; createBlasProvider() throws ProviderUnavailable', () => {
    const r = runChild(
      `import { blasProviderStatus, createBlasProvider } from ${JSON.stringify(DIST_INDEX)};
       import { CpuBackend } from ${JSON.stringify(CORE_DIST_INDEX)};
       const status = blasProviderStatus();
       let error;
       try { createBlasProvider(); } catch (e) { error = { code: e.code, kind: e.kind, message: e.message, detail: e.detail }; }
       let kindError;
       try { await CpuBackend.create({ kind: 'blas' }); } catch (e) { kindError = e.code; }
       console.log(JSON.stringify({ status, error, kindError }));`,
      { TENFERRO_IGNORE_SYSTEM_BLAS: '1' },
    );
    expect(r.status, r.stderr).toBe(0);
    const out = r.json as { status: { available: boolean; reasons: string[]; possibleSolutions: string[] }; error: { code: string; kind: string; message: string }; kindError: string };
    expect(out.status.available).toBe(false);
    expect(out.status.reasons.length).toBeGreaterThan(0);
    expect(out.status.possibleSolutions.join('\n')).toContain(APT);
    expect(out.error.code).toBe('ProviderUnavailable');
    expect(out.error.kind).toBe('Unsupported');
    expect(out.error.message).toContain(APT);
    expect(out.kindError).toBe('BackendKindUnavailable');
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

describe.skipIf(!isOpenblas)('the OpenBLAS core-type trap (child processes)', () => {
  const probe = (pre: string) =>
    runChild(
      `import { blasProviderStatus, createBlasProvider } from ${JSON.stringify(DIST_INDEX)};
       const errors = [];
       const attempt = (f) => { try { return f(); } catch (e) { errors.push({ code: e.code, message: e.message }); } };
       ${pre}
       const s = blasProviderStatus();
       console.log(JSON.stringify({ core: s.runtime?.coreType, warnings: s.warnings, name: s.name, errors }));`,
      { OPENBLAS_CORETYPE: undefined },
    );

  it.skipIf(!cpuHasAvx512())('OPENBLAS_CORETYPE=Prescott on an AVX-512 CPU: diagnostics carry the warning and the SkylakeX fix', () => {
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

  it('openblasCoretype sets OPENBLAS_CORETYPE before the first load; a different core later is refused', () => {
    const r = probe(`attempt(() => createBlasProvider({ openblasCoretype: 'Haswell' }));
                     attempt(() => createBlasProvider({ openblasCoretype: 'haswell' }));
                     attempt(() => createBlasProvider({ openblasCoretype: 'Sandybridge' }));`);
    const out = r.json as { core: string; errors: { code: string; message: string }[] };
    expect(out.core).toBe('Haswell');
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]!.code).toBe('InvalidArgument');
    expect(out.errors[0]!.message).toContain('already loaded');
  });

  it('after blasProviderStatus() loaded the default core, asking for another core is InvalidArgument', () => {
    const r = probe(`blasProviderStatus(); attempt(() => createBlasProvider({ openblasCoretype: 'Nehalem' }));`);
    const out = r.json as { core: string; errors: { code: string; message: string }[] };
    expect(out.core).not.toBe('Nehalem');
    expect(out.errors.map((e) => e.code)).toEqual(['InvalidArgument']);
    expect(out.errors[0]!.message).toContain('OPENBLAS_CORETYPE=Nehalem only takes effect before the library is first loaded');
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
