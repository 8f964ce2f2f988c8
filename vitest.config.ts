import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url))

export default defineConfig({
  // Examples import 'toolgate' as users do; in-process tests resolve it to the source (as tsconfig's
  // `paths` do for the type checker). test/examples.test.ts runs them against the built package.
  resolve: {
    alias: [
      { find: /^toolgate$/, replacement: src('index.ts') },
      {
        find: /^toolgate\/(presentation|providers|providers\/(?:openai|anthropic|gemini|ai-sdk)|mcp|code-mode|store|testing)$/,
        replacement: src('$1/index.ts'),
      },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The CLI tests spawn the built package; this builds it when dist/ is stale.
    globalSetup: ['test/build-once.ts'],
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    testTimeout: 30_000,
    pool: 'forks',
  },
})
