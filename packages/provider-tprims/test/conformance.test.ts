// Core's conformance kits against this package: the tensor-primitives slot (reference oracle,
// guard bands, declared dtypes execute, declines before writing, thread and lane honesty) at
// budgets 1 and 2, on the default ISA path and on every lower path this CPU has.
import { runTensorPrimitivesConformance } from '@tenferro/core/testing';
import { describe } from 'vitest';
import { createTprimsProvider, status } from '../src/index.js';

const s = status();
const paths = s.available ? String(s.details.isaPaths).split(', ') : [];

describe.runIf(s.available)('tprims (auto ISA)', () => {
  runTensorPrimitivesConformance(() => createTprimsProvider({ parallelMinElements: 64 }), { budgets: [1, 2] });
});
for (const isa of ['avx2', 'portable'] as const) {
  describe.runIf(paths.includes(isa) && paths[0] !== isa)(`tprims (${isa} path; needs a CPU whose best path is above ${isa})`, () => {
    runTensorPrimitivesConformance(() => createTprimsProvider({ isa, parallelMinElements: 64 }), { budgets: [1, 2], cases: 3 });
  });
}
