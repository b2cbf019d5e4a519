import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: '@tenferro/provider-faer',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
  },
});
