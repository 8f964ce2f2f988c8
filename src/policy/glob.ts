// Tool-name globs: `*` any run of characters, `?` one character, anchored at both ends.

/** A glob list as one anchored regular expression, or undefined for an empty list. */
export function globsRegExp(globs: readonly string[]): RegExp | undefined {
  if (globs.length === 0) return undefined
  const sources = globs.map((glob) =>
    glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.'),
  )
  return new RegExp(`^(?:${sources.join('|')})$`)
}

/** A compiled glob with its text. */
export interface Glob {
  readonly glob: string
  readonly re: RegExp
}

/** Compile each glob of `list` once. */
export function compileGlobs(list: readonly string[] | undefined): Glob[] {
  return (list ?? []).map((glob) => ({ glob, re: globsRegExp([glob]) as RegExp }))
}

/** The first glob of `globs` matching `name`, or undefined. */
export function firstGlob(globs: readonly Glob[], name: string): Glob | undefined {
  for (const glob of globs) if (glob.re.test(name)) return glob
  return undefined
}
