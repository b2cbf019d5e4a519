import { defineConfig } from 'vitest/config';
import { tenferroTest } from '../../scripts/vitest-config.mjs';

export default defineConfig({
  test: tenferroTest(import.meta.url, {
    name: '@tenferro/linalg',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
  }),
});
