import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The CLI tests spawn the built package; this builds it when dist/ is stale.
    globalSetup: ['test/build-once.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    testTimeout: 30_000,
    pool: 'forks',
  },
})
