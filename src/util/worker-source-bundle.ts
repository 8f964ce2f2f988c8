// Only used when toolgate runs from its TypeScript sources (its own tests, tsx): a worker thread
// does not inherit the parent's TypeScript loader, so a worker entry (Code Mode's, the type
// checker's, tool search's encoder) is bundled once with esbuild into a data: URL module. Packages
// stay external, imported by absolute file URL (a data: module has no directory to resolve bare
// names from), so a package still finds its own files (QuickJS its .wasm file).
import { isBuiltin } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { build } from 'esbuild'

const SKIP = Symbol('resolving')

export async function bundleWorkerEntry(entry: URL): Promise<URL> {
  const result = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
    plugins: [
      {
        name: 'packages-by-absolute-url',
        setup(plugin) {
          plugin.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (isBuiltin(args.path) || args.pluginData === SKIP) return undefined
            const resolved = await plugin.resolve(args.path, {
              kind: args.kind,
              resolveDir: args.resolveDir,
              importer: args.importer,
              pluginData: SKIP,
            })
            if (resolved.errors.length > 0) return { errors: resolved.errors }
            return { path: pathToFileURL(resolved.path).href, external: true }
          })
        },
      },
    ],
  })
  const code = result.outputFiles[0]?.text
  if (code === undefined) throw new Error('esbuild produced no worker bundle')
  return new URL(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)
}
