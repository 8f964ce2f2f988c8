// The page's script and stylesheet. `npm run build` bundles them once into dist/viewer/assets/
// (Preact, htm, lowlight and the highlight.js theme included: nothing is fetched from a CDN);
// running from source, they are bundled on first use with esbuild and kept in memory.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'

/** The page's own script and stylesheet. */
export interface ViewerAssets {
  readonly js: string
  readonly css: string
}

const PREBUILT_DIR = new URL('./assets/', import.meta.url)
const CLIENT_DIR = new URL('./client/', import.meta.url)

/** Bundle the client sources in `clientDir` (its `main.ts` and `viewer.css`). */
export async function bundleViewerAssets(clientDir: URL = CLIENT_DIR): Promise<ViewerAssets> {
  const esbuild = await import('esbuild')
  const common = {
    bundle: true,
    minify: true,
    write: false,
    logLevel: 'silent',
    legalComments: 'eof',
  } as const
  const [js, css] = await Promise.all([
    esbuild.build({
      ...common,
      entryPoints: [fileURLToPath(new URL('main.ts', clientDir))],
      format: 'iife',
      platform: 'browser',
      target: 'es2020',
    }),
    esbuild.build({
      ...common,
      entryPoints: [fileURLToPath(new URL('viewer.css', clientDir))],
      loader: { '.css': 'css' },
    }),
  ])
  return { js: js.outputFiles[0].text, css: css.outputFiles[0].text }
}

/** Bundle the client and write `viewer.js` / `viewer.css` into `outDir` (the build step). */
export async function writeViewerAssets(outDir: URL = PREBUILT_DIR, clientDir: URL = CLIENT_DIR): Promise<void> {
  const assets = await bundleViewerAssets(clientDir)
  await mkdir(outDir, { recursive: true })
  await writeFile(new URL('viewer.js', outDir), assets.js)
  await writeFile(new URL('viewer.css', outDir), assets.css)
}

let cached: Promise<ViewerAssets> | undefined

async function load(): Promise<ViewerAssets> {
  try {
    const [js, css] = await Promise.all([
      readFile(new URL('viewer.js', PREBUILT_DIR), 'utf8'),
      readFile(new URL('viewer.css', PREBUILT_DIR), 'utf8'),
    ])
    return { js, css }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  try {
    return await bundleViewerAssets()
  } catch (error) {
    throw new Error(
      `toolgate viewer: the page assets are missing (no prebuilt ${fileURLToPath(PREBUILT_DIR)} and the client ` +
        `sources could not be bundled: ${error instanceof Error ? error.message : String(error)})`,
    )
  }
}

/** The page assets (prebuilt when present, else bundled once per process). */
export function loadViewerAssets(): Promise<ViewerAssets> {
  cached ??= load().catch((error: unknown) => {
    cached = undefined
    throw error
  })
  return cached
}
