// Unknown fields: the API schemas (and kubernetes-models' validators) let them through, and the API
// server drops them silently, so a typo such as `readinesProbe` would deploy without its probe. The
// models' TypeScript interfaces are exact, so each manifest is type-checked as an object literal of
// its kind's interface: the compiler's excess-property check names every unknown field and its path.
import path from 'node:path'
import ts from 'typescript'
import { REPO } from './deploy-files.js'

export interface Typed {
  /** Where the manifest came from, for messages. */
  file: string
  /** The module (`kubernetes-models/apps/v1`) and the interface (`IDeployment`) it must satisfy. */
  module: string
  type: string
  data: object
}

/** The compiler's errors for each manifest that is not exactly of its interface, as `file: message`. */
export function unknownFieldErrors(manifests: Typed[]): string[] {
  const virtual = path.join(REPO, 'test/deploy/__manifests__.ts')
  const source = manifests
    .map(
      (m, i) =>
        `import type { ${m.type} as T${i} } from '${m.module}'\n` +
        `export const m${i}: T${i} = ${JSON.stringify(m.data, null, 1)}\n`,
    )
    .join('')
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  }
  const host = ts.createCompilerHost(options)
  const read = host.readFile.bind(host)
  const exists = host.fileExists.bind(host)
  const getSource = host.getSourceFile.bind(host)
  host.readFile = (file) => (file === virtual ? source : read(file))
  host.fileExists = (file) => file === virtual || exists(file)
  host.getSourceFile = (file, language, onError, create) =>
    file === virtual ? ts.createSourceFile(file, source, language) : getSource(file, language, onError, create)
  const program = ts.createProgram([virtual], options, host)
  const lineStarts = source.split('\n')
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n')
    if (d.file?.fileName !== virtual || d.start === undefined) return text
    // Which manifest: the nearest `export const mN` above the error.
    const { line } = d.file.getLineAndCharacterOfPosition(d.start)
    const owner = lineStarts
      .slice(0, line + 1)
      .reverse()
      .map((l) => /^export const m(\d+)/.exec(l)?.[1])
      .find((n) => n !== undefined)
    return `${manifests[Number(owner)]?.file ?? '?'}: ${text}`
  })
}
