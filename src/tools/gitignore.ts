import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Ignore, Options } from 'ignore'
import { lazyRequire } from '../util/lazy-require.js'

const ignore = lazyRequire<(options?: Options) => Ignore>('ignore')

/**
 * `.gitignore` rules of a workspace, added per directory as a walk finds them, with git's
 * semantics: a directory's rules apply to paths below it, deeper files win over shallower ones,
 * `!` re-includes, and nothing below an ignored directory can be re-included. The rule matching
 * itself is the `ignore` package's (the gitignore implementation ESLint and others use).
 */
export class GitignoreRules {
  private readonly rules = new Map<string, Ignore>()
  private readonly dirVerdicts = new Map<string, boolean>()

  /** Add the rules of `<dirRel>/.gitignore` (`dirRel` workspace-relative POSIX, `''` for the root). */
  add(dirRel: string, content: string): void {
    const rules = ignore()().add(content)
    this.rules.set(dirRel, rules)
  }

  get size(): number {
    return this.rules.size
  }

  /** Whether a workspace-relative POSIX path is ignored by the rules added so far. */
  ignores(rel: string, isDirectory: boolean): boolean {
    if (this.rules.size === 0) return false
    const slash = rel.lastIndexOf('/')
    if (slash !== -1 && this.dirIgnored(rel.slice(0, slash))) return true
    return this.match(rel, isDirectory)
  }

  private dirIgnored(dir: string): boolean {
    let verdict = this.dirVerdicts.get(dir)
    if (verdict === undefined) {
      verdict = this.ignores(dir, true)
      this.dirVerdicts.set(dir, verdict)
    }
    return verdict
  }

  /** The deepest rule file with an opinion on `rel` decides. */
  private match(rel: string, isDirectory: boolean): boolean {
    let dir = rel
    for (;;) {
      const slash = dir.lastIndexOf('/')
      dir = slash === -1 ? '' : dir.slice(0, slash)
      const rules = this.rules.get(dir)
      if (rules !== undefined) {
        const below = dir === '' ? rel : rel.slice(dir.length + 1)
        const verdict = rules.test(isDirectory ? `${below}/` : below)
        if (verdict.ignored) return true
        if (verdict.unignored) return false
      }
      if (dir === '') return false
    }
  }
}

/**
 * The rules that apply inside `dirRel`: the `.gitignore` of the root and of every directory on
 * the way down to it, plus `dirRel`'s own. Unreadable or missing files add nothing.
 */
export async function loadGitignoreChain(rootAbs: string, dirRel: string): Promise<GitignoreRules> {
  const rules = new GitignoreRules()
  const segments = dirRel === '.' || dirRel === '' ? [] : dirRel.split('/')
  const dirs = [''].concat(segments.map((_, i) => segments.slice(0, i + 1).join('/')))
  const contents = await Promise.all(
    dirs.map((dir) => readFile(path.join(rootAbs, dir, '.gitignore'), 'utf8').catch(() => undefined)),
  )
  dirs.forEach((dir, i) => {
    const content = contents[i]
    if (content !== undefined) rules.add(dir, content)
  })
  return rules
}
