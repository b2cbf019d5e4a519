import { defineConfig } from 'vitest/config';
import { tenferroTest } from '../../scripts/vitest-config.mjs';

export default defineConfig({
  test: tenferroTest(import.meta.url, {
    name: '@tenferro/ext-example',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
  }),
});
