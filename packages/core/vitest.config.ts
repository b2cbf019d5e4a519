import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: '@tenferro/core',
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
