// Build step after tsc: bundle the viewer page's script and stylesheet (Preact, htm, lowlight,
// the highlight.js theme) into dist/viewer/assets/, so the package serves them without a CDN and
// without bundling at run time.
import { writeViewerAssets } from '../dist/viewer/assets.js'

await writeViewerAssets(
  new URL('../dist/viewer/assets/', import.meta.url),
  new URL('../src/viewer/client/', import.meta.url),
)
