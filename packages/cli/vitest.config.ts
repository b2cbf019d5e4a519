import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: '@tenferro/cli',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
  },
});
