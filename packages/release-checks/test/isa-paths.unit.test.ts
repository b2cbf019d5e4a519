// TENFERRO_NATIVE_ISA (#39 item 4): `npm run demo` builds this CPU's best path and the portable
// baseline (`best`), `npm test` and .ci/run every path this CPU can execute (`host`), and a
// source build from the registry every path (`all`) unless the user says otherwise.
import { describe, expect, it } from 'vitest';
import { buildIsaMode, describeIsaPaths, isaGypArgs, isaPaths, setupIsaMode, type IsaPaths } from '../../native-build/isa-paths.mjs';

// scripts/setup-estimate.mjs (set-up's "about N min" before a first build), untyped: loaded by URL.
type Estimate = (packages: string[], paths: IsaPaths, cpuCount: number, options?: { linalgDtypes?: string; linalgPaths?: IsaPaths; clang?: boolean }) => number;
const { estimateBuildSeconds } = (await import(new URL('../../../scripts/setup-estimate.mjs', import.meta.url).href)) as { estimateBuildSeconds: Estimate };

const AVX512 = { avx2: true, avx512: true };
const AVX2 = { avx2: true, avx512: false };
const NONE = { avx2: false, avx512: false };

describe('TENFERRO_NATIVE_ISA (packages/native-build/isa-paths.mjs)', () => {
  it('best: the best path this CPU runs plus the portable baseline, without the baseline copy of vectorised kernels', () => {
    expect(isaPaths('best', AVX512)).toEqual({ avx2: false, avx512: true, portable: false });
    expect(isaPaths('best', AVX2)).toEqual({ avx2: true, avx512: false, portable: false });
    // A CPU without AVX2 runs the baseline: every kernel keeps it.
    expect(isaPaths('best', NONE)).toEqual({ avx2: false, avx512: false, portable: true });
    expect(isaGypArgs('best', AVX512)).toEqual(['-Dtenferro_avx2=0', '-Dtenferro_avx512=1', '-Dtenferro_portable=0']);
    expect(isaGypArgs('best', AVX2)).toEqual(['-Dtenferro_avx2=1', '-Dtenferro_avx512=0', '-Dtenferro_portable=0']);
    expect(isaGypArgs('best', NONE)).toEqual(['-Dtenferro_avx2=0', '-Dtenferro_avx512=0', '-Dtenferro_portable=1']);
    expect(describeIsaPaths('best', AVX512)).toBe('portable (only where no vector path) + avx512');
    expect(describeIsaPaths('best', NONE)).toBe('portable');
  });

  it('host: every path this CPU can execute (AVX2 kept on an AVX-512 CPU); all: every path; both keep every baseline kernel', () => {
    expect(isaPaths('host', AVX512)).toEqual({ avx2: true, avx512: true, portable: true });
    expect(isaPaths('host', AVX2)).toEqual({ avx2: true, avx512: false, portable: true });
    expect(isaGypArgs('host', AVX2)).toEqual(['-Dtenferro_avx2=1', '-Dtenferro_avx512=0', '-Dtenferro_portable=1']);
    expect(isaGypArgs('host', AVX512)).toEqual(['-Dtenferro_avx2=1', '-Dtenferro_avx512=1', '-Dtenferro_portable=1']);
    expect(isaPaths('all', NONE)).toEqual({ avx2: true, avx512: true, portable: true });
    expect(isaGypArgs('all', AVX2)).toEqual(['-Dtenferro_avx2=1', '-Dtenferro_avx512=1', '-Dtenferro_portable=1']);
    expect(describeIsaPaths('host', AVX2)).toBe('portable + avx2');
  });

  it("set-up's estimate counts what each mode builds: linalg's baseline f32/f64 units only where kept, its f64-only build", () => {
    const host = estimateBuildSeconds(['linalg'], isaPaths('host', AVX2), 2);
    const best = estimateBuildSeconds(['linalg'], isaPaths('best', AVX2), 2);
    const f64 = estimateBuildSeconds(['linalg'], isaPaths('best', AVX2), 2, { linalgDtypes: 'f64' });
    expect(best).toBeLessThan(host);
    expect(f64).toBeLessThan(best);
    // Other packages have no baseline to leave out: best and host cost the same there.
    expect(estimateBuildSeconds(['provider-faer'], isaPaths('best', AVX2), 2)).toBe(estimateBuildSeconds(['provider-faer'], isaPaths('host', AVX2), 2));
    // linalgPaths: linalg built in another mode than the rest (set-up under `npm run demo`).
    expect(estimateBuildSeconds(['linalg'], isaPaths('host', AVX2), 2, { linalgPaths: isaPaths('best', AVX2) })).toBe(best);
    // Without clang++, g++ compiles every linalg unit (native/cxx-select.cjs): a longer build; the
    // f64-only build is g++'s either way.
    expect(estimateBuildSeconds(['linalg'], isaPaths('host', AVX2), 2, { clang: false })).toBeGreaterThan(host);
    expect(estimateBuildSeconds(['linalg'], isaPaths('best', AVX2), 2, { linalgDtypes: 'f64', clang: false })).toBe(f64);
  });

  it('an unknown value is refused, naming the three', () => {
    expect(() => isaPaths('fast', AVX2)).toThrow(/TENFERRO_NATIVE_ISA=fast: expected 'all'.*'host'.*'best'/);
  });

  it('who builds what: demo best, npm test / CI / plain setup host, a registry install all unless set', () => {
    expect(setupIsaMode({ npm_lifecycle_event: 'demo' }, [])).toBe('best');
    expect(setupIsaMode({ npm_lifecycle_event: 'test' }, [])).toBe('host');
    expect(setupIsaMode({}, [])).toBe('host');
    expect(setupIsaMode({ npm_lifecycle_event: 'demo', TENFERRO_NATIVE_ISA: 'all' }, [])).toBe('all');
    expect(setupIsaMode({ npm_lifecycle_event: 'demo' }, ['--isa=host'])).toBe('host');
    expect(buildIsaMode({})).toBe('all');
    expect(buildIsaMode({ TENFERRO_NATIVE_ISA: 'best' })).toBe('best');
  });
});
