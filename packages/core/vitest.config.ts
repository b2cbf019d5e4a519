import { defineConfig } from 'vitest/config';
import { tenferroTest } from '../../scripts/vitest-config.mjs';

export default defineConfig({
  test: tenferroTest(import.meta.url, {
    name: '@tenferro/core',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    // Core's own tests run core's reference kernels even where provider packages are installed.
    env: { TENFERRO_DISCOVER_PROVIDERS: '0' },
  }),
});
