import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url))

/**
 * TOOLGATE_SDK_MAJOR=next runs the same tests against the newer provider SDK majors, installed
 * beside the older ones as npm aliases (issue 42): `ai` 7, `openai` 7, `@google/genai` 3.
 */
const NEXT_MAJORS = [
  { find: /^ai(\/.*)?$/, replacement: 'ai7$1' },
  { find: /^openai(\/.*)?$/, replacement: 'openai7$1' },
  { find: /^@google\/genai(\/.*)?$/, replacement: 'genai3$1' },
]
const sdkMajor = process.env.TOOLGATE_SDK_MAJOR ?? 'current'
if (sdkMajor !== 'current' && sdkMajor !== 'next')
  throw new Error(`TOOLGATE_SDK_MAJOR: expected 'current' or 'next', got ${JSON.stringify(sdkMajor)}`)

export default defineConfig({
  // Examples import 'toolgate' as users do; in-process tests resolve it to the source (as tsconfig's
  // `paths` do for the type checker). test/examples.test.ts runs them against the built package.
  resolve: {
    alias: [
      ...(sdkMajor === 'next' ? NEXT_MAJORS : []),
      { find: /^toolgate$/, replacement: src('index.ts') },
      {
        find: /^toolgate\/(presentation|providers|providers\/(?:openai|anthropic|gemini|ai-sdk|openai-agents)|mcp|code-mode|store|testing)$/,
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
    // Hooks start PostgreSQL, gateways and worker pools: bound their hang generously for a loaded machine.
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: a single worker on CI's 2 cores, the
    // other core idle while tests wait on processes, PostgreSQL and sockets. At least two forks.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
})
