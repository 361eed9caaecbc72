import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Each test file gets its own SQLite file; files run in parallel worker processes.
    pool: 'forks',
  },
})
