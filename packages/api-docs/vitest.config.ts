import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: '@tenferro/api-docs',
    include: ['test/**/*.test.ts'],
  },
});
