// The conformance kit's linalg section (@tenferro/linalg/testing) run against the built-in kernels
// installed as an extension, and against provider-blas's LAPACK kernels on a blas backend.
import { describe, it } from 'vitest';
import { createBlasProvider, status as blasStatus } from '@tenferro/provider-blas';
import { BUILTIN_KERNELS, type CpuLinalgKernels } from '../src/index.js';
import { linalgConformanceCases } from '../src/testing/index.js';

describe('linalg conformance: built-in kernels as an extension', () => {
  for (const c of linalgConformanceCases(() => BUILTIN_KERNELS, { sizes: [1, 6] })) it(c.name, c.run);
});

describe.skipIf(!blasStatus().available)('linalg conformance: provider-blas LAPACK', () => {
  const blas = createBlasProvider();
  const kernels = blas.extensions![0]![1] as CpuLinalgKernels;
  for (const c of linalgConformanceCases(() => kernels, { kind: 'blas', providers: [blas], sizes: [1, 6], dtypes: ['f32', 'f64', 'c128'] })) it(c.name, c.run);
});
