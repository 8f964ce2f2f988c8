// What the two bundle steps (bundle-dist, bundle-cli) share.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'

/**
 * An esbuild plugin: a bundled module no longer sits at its own path, so each module of `dist`
 * that reads `import.meta.url` gets back the URL of its per-file twin in dist/ (relative assets and
 * `createRequire` keep working). `base` is the expression for the URL of the file the code ends up
 * in (`import.meta.url` in an ES module).
 */
export function perModuleImportMetaUrl(dist, base) {
  return {
    name: 'per-module-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(dist)) return undefined
        const source = await readFile(args.path, 'utf8')
        if (!source.includes('import.meta.url')) return undefined
        const rel = path.relative(dist, args.path).split(path.sep).join('/')
        const own = `new URL(${JSON.stringify(rel)}, ${base}.slice(0, ${base}.lastIndexOf('/dist/') + 6)).href`
        return { contents: source.replaceAll('import.meta.url', `(${own})`), loader: 'js' }
      })
    },
  }
}

/** The class names declared in tsc's per-file modules under `dir`. */
export async function tscClassNames(dir, names = new Set()) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) await tscClassNames(full, names)
    else if (entry.name.endsWith('.js'))
      for (const m of (await readFile(full, 'utf8')).matchAll(/^(?:export )?class (\w+)/gm)) names.add(m[1])
  }
  return names
}
