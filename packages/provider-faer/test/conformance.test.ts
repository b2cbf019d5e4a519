import { runProviderConformance } from '@tenferro/core/testing';
import { describe } from 'vitest';
import { createFaerProvider, faerProviderStatus } from '../src/index.js';

const status = faerProviderStatus();
const supported = status.available ? status.native.supported : { avx512f: false, avx2: false, portable: false };

// The default path (the best ISA of this CPU), as an application gets it.
describe('faer provider (auto ISA)', () => {
  runProviderConformance(() => createFaerProvider(), { budgets: [1, 2] });
});

// The lower paths, forced: they must be just as correct.
describe.runIf(supported.avx2 && supported.avx512f)('faer provider (avx2 path)', () => {
  runProviderConformance(() => createFaerProvider({ isa: 'avx2' }), { budgets: [1, 2], cases: 6 });
});
describe.runIf(supported.portable && (supported.avx2 || supported.avx512f))('faer provider (portable path)', () => {
  runProviderConformance(() => createFaerProvider({ isa: 'portable' }), { budgets: [1, 2], cases: 6 });
});
