import { runProviderConformance } from '@tenferro/core/testing';
import { describe } from 'vitest';
import { createFaerProvider, status } from '../src/index.js';

const s = status();
const paths = s.available ? String(s.details.isaPaths).split(', ') : [];
const supported = { avx512f: paths.includes('avx512f'), avx2: paths.includes('avx2'), portable: paths.includes('portable') };

// The default path (the best ISA of this CPU), as an application gets it.
describe('faer provider (auto ISA)', () => {
  runProviderConformance(() => createFaerProvider(), { budgets: [1, 2] });
});

// The lower paths, forced: they must be just as correct.
describe.runIf(supported.avx2 && supported.avx512f)('faer provider (avx2 path; needs AVX-512, where avx2 is a lower path than the one picked)', () => {
  runProviderConformance(() => createFaerProvider({ isa: 'avx2' }), { budgets: [1, 2], cases: 6 });
});
describe.runIf(supported.portable && (supported.avx2 || supported.avx512f))('faer provider (portable path; needs AVX2 or AVX-512, where portable is a lower path)', () => {
  runProviderConformance(() => createFaerProvider({ isa: 'portable' }), { budgets: [1, 2], cases: 6 });
});
