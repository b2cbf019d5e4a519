import { runProviderConformance } from '@tenferro/core/testing';
import { blasProviderStatus, createBlasProvider } from '../src/index.js';

runProviderConformance(() => createBlasProvider(), {
  kind: 'blas',
  budgets: [1, 2],
  // A globalOrUncontrolled runtime (OpenBLAS pthreads) is held to the thread count it reports.
  runtimeThreads: () => {
    const s = blasProviderStatus();
    if (!s.available) throw new Error(`no BLAS runtime: ${s.reasons.join('; ')}`);
    return s.runtime.threads;
  },
});
