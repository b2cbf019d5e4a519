// The `library` option and TENFERRO_BLAS_LIBRARY (#42): checked before anything loads, the
// aliases, and an unusable choice that says why and which library would work. Child processes:
// the library is process-wide and chosen once.
import { describe, expect, it } from 'vitest';
import { TenferroError } from '@tenferro/core';
import { createBlasProvider } from '../src/index.js';
import { validateBlasProviderOptions } from '../src/options.js';
import { libraryChoice } from '../src/native/candidates.js';
import { DIST_INDEX, runChild } from './helpers.js';

describe('library choice (#42)', () => {
  it('a bad library option is InvalidArgument naming options.library, before anything loads', () => {
    for (const bad of [5, '', 'openblas:mkl', 'blas', 'lib foo.so', 'libfoo.dylib', 'relative/libblas.so.3', null]) {
      let caught: unknown;
      try {
        validateBlasProviderOptions({ library: bad });
      } catch (e) {
        caught = e;
      }
      expect(TenferroError.is(caught) && caught.code, JSON.stringify(bad)).toBe('InvalidArgument');
      expect((caught as TenferroError).message).toContain('options.library');
    }
    expect(() => createBlasProvider({ libary: 'mkl' } as never)).toThrow(/options\.libary/);
    for (const good of ['mkl', 'openblas', 'libblas.so.3', 'libopenblas.so.0', '/usr/lib/x86_64-linux-gnu/libmkl_rt.so']) expect(validateBlasProviderOptions({ library: good }).library).toBe(good);
  });

  it('the choice: option, else TENFERRO_BLAS_LIBRARY (aliases expanded), else the system libblas.so.3 first and no MKL', () => {
    expect(libraryChoice(undefined, {}).candidates[0]).toBe('libblas.so.3');
    expect(libraryChoice(undefined, {}).candidates.some((c) => c.includes('mkl'))).toBe(false);
    expect(libraryChoice(undefined, { TENFERRO_BLAS_LIBRARY: 'mkl' })).toMatchObject({ source: 'environment', candidates: ['libmkl_rt.so.2', 'libmkl_rt.so'] });
    expect(libraryChoice('openblas', { TENFERRO_BLAS_LIBRARY: 'mkl' })).toMatchObject({ source: 'option', candidates: ['libopenblas.so.0', 'libopenblas.so'] });
  });

  it('a library that cannot be loaded is ProviderUnavailable naming it, why, and the system BLAS that works', () => {
    const r = runChild(
      `const { createBlasProvider, status } = await import(${JSON.stringify(DIST_INDEX)});
       const before = status();
       try { createBlasProvider({ library: 'libtenferro-no-such-blas.so.9' }); console.log(JSON.stringify({ threw: false })); }
       catch (e) { console.log(JSON.stringify({ threw: true, code: e.code, message: e.message, detail: e.detail, system: before.available })); }`,
      { TENFERRO_BLAS_LIBRARY: undefined },
      60_000,
    );
    expect(r.status, r.stderr).toBe(0);
    const out = r.json as { threw: boolean; code: string; message: string; detail: { library: string; reasons: string[]; possibleSolutions: string[] }; system: boolean };
    expect(out).toMatchObject({ threw: true, code: 'ProviderUnavailable', detail: { library: 'libtenferro-no-such-blas.so.9' } });
    expect(out.detail.reasons.join(' ')).toContain('libtenferro-no-such-blas.so.9: libtenferro-no-such-blas.so.9: cannot open shared object file');
    if (out.system) expect(out.detail.possibleSolutions[0]).toMatch(/^the system's BLAS loads: .+ \(libblas\.so\.3\)/);
  });
});
