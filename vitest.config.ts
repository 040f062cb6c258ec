import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // End-to-end tests start real processes; on a 2-core machine that takes seconds.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
