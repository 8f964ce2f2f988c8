// The floors of the source tree (issue 21): a folder imports only from its own floor or lower, folders
// on one floor never form a cycle, and every other folder enters the runtime core through
// src/runtime/index.ts. docs/decisions.md ("Architecture") explains each floor.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = fileURLToPath(new URL('../src/', import.meta.url))

/** Lowest first. A folder may import from its own floor and every floor below it. */
const FLOORS: readonly (readonly string[])[] = [
  ['contract', 'util'],
  ['errors'],
  ['json'],
  ['schema'],
  ['runtime'],
  ['scheduling', 'presentation'],
  ['search'],
  ['code-mode', 'tools'],
  ['journal', 'observability', 'policy'],
  ['providers', 'mcp', 'store'],
  ['viewer', 'testing'],
  ['preset'],
  ['gateway'],
  ['cli'],
  ['.'], // src/index.ts, the package root
]

const floorOf = new Map<string, number>()
FLOORS.forEach((folders, floor) => {
  for (const folder of folders) floorOf.set(folder, floor)
})

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.(ts|tsx|mts)$/.test(entry.name) ? [path] : []
  })
}

/** The top folder of a file under src/ ('.' for src/index.ts). */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split(sep)
  return parts.length === 1 ? '.' : parts[0]
}

interface Edge {
  readonly from: string
  readonly to: string
  readonly target: string
  readonly specifier: string
}

/** Every relative import, re-export and dynamic import of every source file. */
function edges(): Edge[] {
  const out: Edge[] = []
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8')
    const specifiers = [
      ...text.matchAll(/\bfrom\s+'(\.[^']+)'/g),
      ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g),
      ...text.matchAll(/^import\s+'(\.[^']+)'/gm),
    ].map((match) => match[1])
    for (const specifier of specifiers) {
      const target = resolve(dirname(file), specifier)
      if (!target.startsWith(SRC)) continue
      out.push({ from: relative(SRC, file), to: folderOf(target), target: relative(SRC, target), specifier })
    }
  }
  return out
}

const all = edges()

describe('the folder floors', () => {
  it('every folder under src/ has a floor', () => {
    const folders = new Set(sourceFiles(SRC).map(folderOf))
    expect([...folders].filter((folder) => !floorOf.has(folder))).toEqual([])
  })

  it('no import runs from a lower floor to a higher one', () => {
    const upward = all
      .filter((edge) => (floorOf.get(edge.to) ?? -1) > (floorOf.get(folderOf(join(SRC, edge.from))) ?? -1))
      .map((edge) => `${edge.from} imports ${edge.specifier}`)
    expect(upward).toEqual([])
  })

  it('no cycle between folders', () => {
    const graph = new Map<string, Set<string>>()
    for (const edge of all) {
      const from = folderOf(join(SRC, edge.from))
      if (from === edge.to) continue
      const targets = graph.get(from) ?? new Set<string>()
      graph.set(from, targets)
      targets.add(edge.to)
    }
    const cycles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const visit = (folder: string, path: string[]): void => {
      if (state.get(folder) === 'done') return
      if (state.get(folder) === 'open') {
        cycles.push([...path.slice(path.indexOf(folder)), folder].join(' -> '))
        return
      }
      state.set(folder, 'open')
      for (const next of graph.get(folder) ?? []) visit(next, [...path, folder])
      state.set(folder, 'done')
    }
    for (const folder of graph.keys()) visit(folder, [])
    expect(cycles).toEqual([])
  })

  it('the core names no feature: src/runtime imports nothing above it', () => {
    const features = [
      'code-mode',
      'scheduling',
      'search',
      'journal',
      'providers',
      'mcp',
      'viewer',
      'gateway',
      'cli',
      'preset',
    ]
    const named = all.filter((edge) => edge.from.startsWith(`runtime${sep}`) && features.includes(edge.to))
    expect(named.map((edge) => `${edge.from} imports ${edge.specifier}`)).toEqual([])
  })
})

describe('one way into the runtime', () => {
  it('every other folder imports src/runtime/index.ts and nothing else of src/runtime', () => {
    const reachIns = all
      .filter((edge) => edge.to === 'runtime' && !edge.from.startsWith(`runtime${sep}`))
      .filter((edge) => edge.target !== join('runtime', 'index.js') && edge.target !== join('runtime', 'index.ts'))
      .map((edge) => `${edge.from} imports ${edge.specifier}`)
    expect(reachIns).toEqual([])
  })

  it('the checks see the imports they judge (the scan is not empty)', () => {
    expect(all.some((edge) => edge.from === join('preset', 'create.ts') && edge.to === 'runtime')).toBe(false)
    expect(all.some((edge) => edge.from === join('preset', 'tool-runtime.ts') && edge.to === 'runtime')).toBe(true)
    expect(all.some((edge) => edge.from.startsWith('code-mode') && edge.to === 'runtime')).toBe(true)
  })
})

describe('one way into the gateway (issue 35, item 7)', () => {
  it('src/cli imports src/gateway/index.ts and nothing else of src/gateway', () => {
    const reachIns = all
      .filter((edge) => edge.to === 'gateway' && edge.from.startsWith(`cli${sep}`))
      .filter((edge) => edge.target !== join('gateway', 'index.js') && edge.target !== join('gateway', 'index.ts'))
      .map((edge) => `${edge.from} imports ${edge.specifier}`)
    expect(reachIns).toEqual([])
  })

  it('the gateway lives in src/gateway: src/cli holds argument parsing and starting things', () => {
    expect(all.some((edge) => edge.from === join('cli', 'serve.ts') && edge.to === 'gateway')).toBe(true)
    const inCli = sourceFiles(join(SRC, 'cli')).map((file) => relative(join(SRC, 'cli'), file))
    for (const moved of [
      'config.ts',
      'gateway.ts',
      'http-auth.ts',
      'http-guard.ts',
      'policy.ts',
      'settings.ts',
      'log-calls.ts',
    ]) {
      expect(inCli).not.toContain(moved)
    }
  })
})

/** Source text without comments and string literals (a message or a doc may cite a code). */
function codeOnly(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g, "''")
    .replace(/\/\/.*$/gm, '')
}

describe('JSON-RPC error codes live in one place (issue 35, item 7)', () => {
  const HOME = join('mcp', 'protocol', 'jsonrpc-codes.ts')
  // A literal in JSON-RPC's reserved range, or a member of the SDK's ErrorCode enum.
  const written = /(?<![\w.])-\s*32\d{3}\b|\bErrorCode\.[A-Z]\w*/g
  const hits = (file: string) => [...codeOnly(readFileSync(file, 'utf8')).matchAll(written)].map((m) => m[0])

  it(`no src file but src/${HOME} writes one: the others name it through JsonRpcCode`, () => {
    const elsewhere = sourceFiles(SRC)
      .filter((file) => relative(SRC, file) !== HOME)
      .flatMap((file) => hits(file).map((hit) => `${relative(SRC, file)}: ${hit}`))
    expect(elsewhere).toEqual([])
  })

  it('the check sees what it judges: the codes module writes them, comments and strings do not count', () => {
    expect(hits(join(SRC, HOME))).toContain('-32700')
    expect(codeOnly("const a = -32601 // -32602\nconst b = 'x -32603'")).toMatch(/-32601/)
    expect(codeOnly("const a = -32601 // -32602\nconst b = 'x -32603'")).not.toMatch(/-32602|-32603/)
  })
})

describe('nothing reaches what the MCP SDK keeps private (issue 35, item 7)', () => {
  it('no src file that imports the SDK reads or writes an underscore member of another object', () => {
    const reached = sourceFiles(SRC).flatMap((file) => {
      const text = readFileSync(file, 'utf8')
      if (!text.includes('@modelcontextprotocol/')) return []
      // `this._x` is the file's own field; `_meta` is the protocol's field, not a private member.
      const members = [...codeOnly(text).matchAll(/(?<!\bthis)\??\._(?!meta\b)[A-Za-z]\w*/g)].map((m) => m[0])
      const indexed = [...text.matchAll(/\[\s*['"`]_(?!meta\b)[A-Za-z]\w*['"`]\s*\]/g)].map((m) => m[0])
      return [...members, ...indexed].map((hit) => `${relative(SRC, file)}: ${hit}`)
    })
    expect(reached).toEqual([])
  })
})

describe('the MCP SDK v1 is gone from the runtime (issue 35, item 1)', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    dependencies?: Record<string, string>
    devDependencies?: Record<string, string>
  }
  it('no src file imports @modelcontextprotocol/sdk (toolgate runs on the v2 packages)', () => {
    const v1 = sourceFiles(SRC).filter((file) =>
      /from\s+['"]@modelcontextprotocol\/sdk[/'"]|import\(\s*['"]@modelcontextprotocol\/sdk[/'"]/.test(
        readFileSync(file, 'utf8'),
      ),
    )
    expect(v1.map((file) => relative(SRC, file))).toEqual([])
  })
  it('the v1 package is a devDependency only (tests play a third-party 2025 client with it)', () => {
    expect(pkg.dependencies?.['@modelcontextprotocol/sdk']).toBeUndefined()
    expect(pkg.devDependencies?.['@modelcontextprotocol/sdk']).toBeDefined()
    expect(pkg.dependencies?.['@modelcontextprotocol/client']).toBeDefined()
    expect(pkg.dependencies?.['@modelcontextprotocol/server']).toBeDefined()
  })
})

describe('src/ comments say why in words', () => {
  it('no requirement id or issue number in src/ (they belong in tests and commits)', () => {
    const cited = sourceFiles(SRC).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\bR-[A-Z]+-\d+|\bissue #?\d+|\(#\d+\)/g)].map(
        (match) => `${relative(SRC, file)}: ${match[0]}`,
      ),
    )
    expect(cited).toEqual([])
  })
})

describe('src/mcp is split by side (issue 35, item 7)', () => {
  const MCP = join(SRC, 'mcp')
  const SIDES = ['client', 'server', 'relay', 'protocol'] as const
  /** The side folder of a path under src/, or undefined outside src/mcp's side folders. */
  const sideOf = (path: string): string | undefined => {
    const parts = path.split(sep)
    return parts[0] === 'mcp' && parts.length > 2 ? parts[1] : undefined
  }
  const crossings = (from: string, to: readonly string[]) =>
    all
      .filter((edge) => sideOf(edge.from) === from && to.includes(sideOf(edge.target) ?? ''))
      .map((edge) => `${edge.from} imports ${edge.specifier}`)
      .sort()

  // A side crossing fails until it is listed here with its reason; none is left: what both sides
  // used of the other (the common call-result check, the log levels, the capability handler types,
  // the list kinds) is a protocol concept and lives in protocol/.
  const KNOWN: readonly string[] = []

  it("src/mcp holds only its two doors, index.ts and the gateway's gateway.ts, beside the four side folders", () => {
    const entries = readdirSync(MCP, { withFileTypes: true }).map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    expect(entries.sort()).toEqual(['client/', 'gateway.ts', 'index.ts', 'protocol/', 'relay/', 'server/'])
    for (const side of SIDES) expect(sourceFiles(join(MCP, side)).length).toBeGreaterThan(0)
  })

  it('protocol/ imports no side: both sides share it', () => {
    expect(crossings('protocol', ['client', 'server', 'relay'])).toEqual([])
  })

  it('client/ and server/ do not import each other (nor relay/), but for the listed crossings (none)', () => {
    const found = [...crossings('client', ['server', 'relay']), ...crossings('server', ['client', 'relay'])].sort()
    expect(found).toEqual(KNOWN)
  })

  it('no side folder imports a door, src/mcp/index.ts or src/mcp/gateway.ts (they are for the rest of toolgate)', () => {
    const inward = all
      .filter((edge) => sideOf(edge.from) && [join('mcp', 'index.js'), join('mcp', 'gateway.js')].includes(edge.target))
      .map((edge) => `${edge.from} imports ${edge.specifier}`)
    expect(inward).toEqual([])
  })

  it('outside src/gateway, toolgate enters src/mcp only through src/mcp/index.ts', () => {
    const reachIns = all
      .filter(
        (edge) => edge.to === 'mcp' && !edge.from.startsWith(`mcp${sep}`) && !edge.from.startsWith(`gateway${sep}`),
      )
      .filter((edge) => edge.target !== join('mcp', 'index.js') && edge.target !== join('mcp', 'index.ts'))
      .map((edge) => `${edge.from} imports ${edge.specifier}`)
    expect(reachIns).toEqual([])
  })

  it('src/gateway enters src/mcp only through src/mcp/gateway.ts, its own door', () => {
    const reachIns = all
      .filter((edge) => edge.to === 'mcp' && edge.from.startsWith(`gateway${sep}`))
      .filter((edge) => edge.target !== join('mcp', 'gateway.js'))
      .map((edge) => `${edge.from} imports ${edge.specifier}`)
    expect(reachIns).toEqual([])
  })

  it('the checks see the imports they judge', () => {
    expect(all.some((edge) => sideOf(edge.from) === 'client' && sideOf(edge.target) === 'protocol')).toBe(true)
    expect(all.some((edge) => sideOf(edge.from) === 'relay' && sideOf(edge.target) === 'client')).toBe(true)
    expect(all.some((edge) => edge.from === join('gateway', 'gateway.ts') && edge.to === 'mcp')).toBe(true)
    // The gateway's door reaches the sides, lazily too (its loaders are dynamic imports).
    const door = all.filter((edge) => edge.from === join('mcp', 'gateway.ts'))
    expect(door.some((edge) => edge.target === join('mcp', 'server', 'server.js'))).toBe(true)
    expect(door.some((edge) => edge.target === join('mcp', 'server', 'server-modern.js'))).toBe(true)
  })
})
