import { defineConfig } from 'vitest/config';
import { tenferroTest } from '../../scripts/vitest-config.mjs';

export default defineConfig({
  test: tenferroTest(import.meta.url, {
    include: ['test/**/*.test.ts'],
    // Packing and linting five packages, and a `changeset version`, take a while on two cores.
    testTimeout: 180_000,
    hookTimeout: 300_000,
  }),
});
