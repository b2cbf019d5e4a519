import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Packing and linting five packages, and a `changeset version`, take a while on two cores.
    testTimeout: 180_000,
    hookTimeout: 300_000,
  },
});
