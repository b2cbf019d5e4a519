import { referenceGemmProvider, referenceLayoutProvider } from '../src/index.js';
import { runProviderConformance } from '../src/testing/index.js';

// Core's reference providers pass the same suite every provider package runs.
runProviderConformance(() => ({ kind: 'faer', name: 'reference', gemm: referenceGemmProvider, layoutTransform: referenceLayoutProvider }), {
  cases: 8,
});
