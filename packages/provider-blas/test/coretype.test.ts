// The core-type decision as a pure function: machines differ (Intel: OpenBLAS 0.3.21 picks
// Prescott; AMD Zen 4: Cooperlake), so the cases are forced here rather than read from this CPU.
import { describe, expect, it } from 'vitest';
import { decideCoretype } from '../src/coretype.js';

const avx512 = { level: 'avx512' as const, vendor: 'GenuineIntel', model: 'Intel Xeon' };
const zen3 = { level: 'avx2' as const, vendor: 'AuthenticAMD', model: 'AMD EPYC' };

describe('decideCoretype', () => {
  it('OpenBLAS alone would pick Prescott on an AVX-512 CPU: set SkylakeX (without replacing a user value)', () => {
    expect(decideCoretype({ option: undefined, envValue: undefined, vendor: 'openblas', predicted: 'Prescott', cpu: avx512 })).toMatchObject({
      action: 'set',
      value: 'SkylakeX',
      overwrite: false,
      predicted: 'Prescott',
    });
    expect(decideCoretype({ option: undefined, envValue: '', vendor: 'openblas', predicted: 'Sandybridge', cpu: zen3 })).toMatchObject({ action: 'set', value: 'Zen' });
  });

  it('a core that matches the CPU (Cooperlake on Zen 4, SkylakeX) is left alone', () => {
    expect(decideCoretype({ option: undefined, envValue: undefined, vendor: 'openblas', predicted: 'Cooperlake', cpu: avx512 }).action).toBe('notNeeded');
    expect(decideCoretype({ option: undefined, envValue: undefined, vendor: 'openblas', predicted: 'Haswell', cpu: zen3 }).action).toBe('notNeeded');
  });

  it("the user's OPENBLAS_CORETYPE and 'keep' win over the fix; an explicit core wins over everything", () => {
    expect(decideCoretype({ option: undefined, envValue: 'Prescott', vendor: 'openblas', predicted: 'Prescott', cpu: avx512 })).toMatchObject({ action: 'userEnvironment', value: undefined, userValue: 'Prescott' });
    expect(decideCoretype({ option: 'keep', envValue: undefined, vendor: 'openblas', predicted: 'Prescott', cpu: avx512 })).toMatchObject({ action: 'kept', value: undefined });
    expect(decideCoretype({ option: 'Haswell', envValue: 'Prescott', vendor: 'openblas', predicted: 'Prescott', cpu: avx512 })).toMatchObject({ action: 'option', value: 'Haswell', overwrite: true });
  });

  it('not OpenBLAS, or an unknown CPU or core: nothing is set', () => {
    expect(decideCoretype({ option: undefined, envValue: undefined, vendor: 'mkl', predicted: undefined, cpu: avx512 }).action).toBe('notOpenblas');
    expect(decideCoretype({ option: undefined, envValue: undefined, vendor: 'openblas', predicted: 'Prescott', cpu: undefined }).action).toBe('unknown');
    expect(decideCoretype({ option: undefined, envValue: undefined, vendor: 'openblas', predicted: 'NewCore9000', cpu: avx512 }).action).toBe('unknown');
  });
});
