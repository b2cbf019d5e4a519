import { defineConfig } from 'vitest/config';
import { tenferroTest } from '../../scripts/vitest-config.mjs';

export default defineConfig({
  test: tenferroTest(import.meta.url, {
    name: '@tenferro/provider-blas',
    include: ['test/**/*.test.ts'],
    // Each test file runs in its own child process: the BLAS library is loaded once per
    // process (and OpenBLAS's core type and thread pool are fixed at that load).
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
  }),
});
