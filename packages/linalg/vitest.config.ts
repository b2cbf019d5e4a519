import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: '@tenferro/linalg',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
  },
});
