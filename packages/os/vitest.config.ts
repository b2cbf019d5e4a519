import { defineConfig } from 'vitest/config';
import { tenferroTest } from '../../scripts/vitest-config.mjs';

export default defineConfig({
  test: tenferroTest(import.meta.url, {
    include: ['test/**/*.test.ts'],
    // Each test file runs on the main thread of its own child process, so the "main thread"
    // tests really are on a process's main thread (gettid() === process.pid) and a test
    // never changes the affinity of a thread another file runs on.
    pool: 'forks',
    testTimeout: 20_000,
  }),
});
