// TENFERRO_NATIVE_ISA (#39 item 4): `npm run demo` builds this CPU's best path and the portable
// baseline (`best`), `npm test` and .ci/run every path this CPU can execute (`host`), and a
// source build from the registry every path (`all`) unless the user says otherwise.
import { describe, expect, it } from 'vitest';
import { buildIsaMode, describeIsaPaths, isaGypArgs, isaPaths, setupIsaMode } from '../../native-build/isa-paths.mjs';

const AVX512 = { avx2: true, avx512: true };
const AVX2 = { avx2: true, avx512: false };
const NONE = { avx2: false, avx512: false };

describe('TENFERRO_NATIVE_ISA (packages/native-build/isa-paths.mjs)', () => {
  it('best: the best path this CPU runs plus the portable baseline', () => {
    expect(isaPaths('best', AVX512)).toEqual({ avx2: false, avx512: true });
    expect(isaPaths('best', AVX2)).toEqual({ avx2: true, avx512: false });
    expect(isaPaths('best', NONE)).toEqual({ avx2: false, avx512: false });
    expect(isaGypArgs('best', AVX512)).toEqual(['-Dtenferro_avx2=0', '-Dtenferro_avx512=1']);
    expect(describeIsaPaths('best', AVX512)).toBe('portable + avx512');
    expect(describeIsaPaths('best', NONE)).toBe('portable');
  });

  it('host: every path this CPU can execute (AVX2 kept on an AVX-512 CPU); all: every path', () => {
    expect(isaPaths('host', AVX512)).toEqual({ avx2: true, avx512: true });
    expect(isaPaths('host', AVX2)).toEqual({ avx2: true, avx512: false });
    expect(isaGypArgs('host', AVX2)).toEqual(['-Dtenferro_avx2=1', '-Dtenferro_avx512=0']);
    expect(isaPaths('all', NONE)).toEqual({ avx2: true, avx512: true });
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
