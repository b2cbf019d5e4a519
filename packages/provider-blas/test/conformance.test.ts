import { runProviderConformance } from '@tenferro/core/testing';
import { createBlasProvider } from '../src/index.js';

runProviderConformance(() => createBlasProvider(), { kind: 'blas', budgets: [1, 2] });
