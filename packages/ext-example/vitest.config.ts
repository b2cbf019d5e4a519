import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: '@tenferro/ext-example',
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
  },
});
