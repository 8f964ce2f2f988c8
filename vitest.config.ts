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

/**
 * The files that need a fresh process each (vitest's `isolate`, its default): the CLI, store,
 * browser, Code Mode, tool and MCP tests spawn processes, servers and workers and patch globals;
 * thesaurus-prefetch mocks `node:fs` for the modules it imports; idle-build spies on the prototype
 * of every search engine the process builds (in a shared fork it once picked the wrong one).
 */
const ISOLATED = [
  'test/{cli,store,code-mode,tools,viewer,mcp,conformance,guide,deploy}/**/*.test.ts',
  'test/examples.test.ts',
  'test/search/thesaurus-prefetch.test.ts',
  'test/search/idle-build.test.ts',
]

/**
 * `--typecheck.enabled=false` (test:fast, .ci/node-lines): vitest hands only some command-line
 * options on to projects, and not this one, so the config reads it from the command line itself.
 */
const typecheckOff = process.argv.some(
  (arg, at, all) =>
    arg === '--typecheck.enabled=false' ||
    arg === '--no-typecheck.enabled' ||
    (arg === '--typecheck.enabled' && all[at + 1] === 'false'),
)

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
    // The CLI tests spawn the built package; this builds it when dist/ is stale.
    globalSetup: ['test/build-once.ts'],
    // The type-level tests: one tsc, in the 'isolated' project (the other turns it off).
    typecheck: { enabled: !typecheckOff, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    testTimeout: 30_000,
    // Hooks start PostgreSQL, gateways and worker pools: bound their hang generously for a loaded machine.
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: a single worker on CI's 2 cores, the
    // other core idle while tests wait on processes, PostgreSQL and sockets. At least two forks.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: { name: 'isolated', include: ISOLATED },
      },
      {
        // The rest run in the test process itself and clean up after themselves: a fork runs one
        // file after another with the modules it loaded kept, instead of a new fork importing the
        // sources again for each file (about 0.75 s a file, a third of the suite's imports).
        extends: true,
        test: {
          name: 'in-process',
          include: ['test/**/*.test.ts'],
          exclude: ISOLATED,
          isolate: false,
          typecheck: { enabled: false },
        },
      },
    ],
  },
})
