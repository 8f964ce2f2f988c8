// The shape of one model-facing content block, checked on plain JSON (a snapshot or a copy): shared
// by the pipeline, which throws on a malformed block, and by replayed views, which drop one.
import type { JsonValue } from '../contract/json-value.js'

/** Where a block is malformed and how. */
export interface ContentShapeProblem {
  readonly path: string
  readonly problem: string
}

type JsonRecord = { [key: string]: JsonValue }

const KINDS = '"text", "image", "audio", "resource-link" or "resource"'

function isObject(value: JsonValue | undefined): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The first problem of `block` as a content block, or undefined when it is well formed. */
export function contentBlockProblem(block: JsonValue, path: string): ContentShapeProblem | undefined {
  if (!isObject(block)) return { path, problem: 'expected a content block object' }
  const needString = (key: string, what = 'a string'): ContentShapeProblem | undefined =>
    typeof block[key] === 'string' ? undefined : { path: `${path}.${key}`, problem: `expected ${what}` }
  const optionalStrings = (record: JsonRecord, at: string, keys: readonly string[]) => {
    for (const key of keys)
      if (record[key] !== undefined && typeof record[key] !== 'string')
        return { path: `${at}.${key}`, problem: 'expected a string when present' }
    return undefined
  }
  let problem: ContentShapeProblem | undefined
  switch (block.type) {
    case 'text':
      problem = needString('text')
      break
    case 'image':
    case 'audio':
      problem = needString('mediaType') ?? needString('data', 'a base64 string')
      break
    case 'resource-link':
      problem =
        needString('uri') ??
        needString('name') ??
        optionalStrings(block, path, ['title', 'description', 'mediaType']) ??
        sizeProblem(block.size, `${path}.size`) ??
        iconsProblem(block.icons, `${path}.icons`)
      break
    case 'resource':
      problem = resourceProblem(block.resource, `${path}.resource`)
      break
    default:
      return { path: `${path}.type`, problem: `expected ${KINDS}, got ${JSON.stringify(block.type) ?? 'nothing'}` }
  }
  return problem ?? annotationsProblem(block.annotations, `${path}.annotations`) ?? metaProblem(block._meta, path)
}

function metaProblem(meta: JsonValue | undefined, path: string): ContentShapeProblem | undefined {
  if (meta === undefined || isObject(meta)) return undefined
  return { path: `${path}._meta`, problem: 'expected an object when present' }
}

// Any number, as MCP allows: a gateway must not refuse what a direct client would accept.
function sizeProblem(size: JsonValue | undefined, path: string): ContentShapeProblem | undefined {
  if (size === undefined || typeof size === 'number') return undefined
  return { path, problem: 'expected a number of bytes when present' }
}

function annotationsProblem(value: JsonValue | undefined, path: string): ContentShapeProblem | undefined {
  if (value === undefined) return undefined
  if (!isObject(value)) return { path, problem: 'expected an object when present' }
  const { audience, priority, lastModified } = value
  if (audience !== undefined) {
    if (!Array.isArray(audience)) return { path: `${path}.audience`, problem: 'expected an array of roles' }
    for (let i = 0; i < audience.length; i++)
      if (audience[i] !== 'user' && audience[i] !== 'assistant')
        return { path: `${path}.audience[${i}]`, problem: 'expected "user" or "assistant"' }
  }
  if (priority !== undefined && !(typeof priority === 'number' && priority >= 0 && priority <= 1))
    return { path: `${path}.priority`, problem: 'expected a number from 0 to 1 when present' }
  if (lastModified !== undefined && typeof lastModified !== 'string')
    return { path: `${path}.lastModified`, problem: 'expected an ISO 8601 string when present' }
  return undefined
}

function iconsProblem(value: JsonValue | undefined, path: string): ContentShapeProblem | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value)) return { path, problem: 'expected an array of icons when present' }
  for (let i = 0; i < value.length; i++) {
    const icon = value[i]
    const at = `${path}[${i}]`
    if (!isObject(icon)) return { path: at, problem: 'expected an icon object' }
    if (typeof icon.src !== 'string') return { path: `${at}.src`, problem: 'expected a string' }
    if (icon.mediaType !== undefined && typeof icon.mediaType !== 'string')
      return { path: `${at}.mediaType`, problem: 'expected a string when present' }
    const { sizes, theme } = icon
    if (sizes !== undefined && !(Array.isArray(sizes) && sizes.every((s) => typeof s === 'string')))
      return { path: `${at}.sizes`, problem: 'expected an array of strings when present' }
    if (theme !== undefined && theme !== 'light' && theme !== 'dark')
      return { path: `${at}.theme`, problem: 'expected "light" or "dark" when present' }
  }
  return undefined
}

function resourceProblem(value: JsonValue | undefined, path: string): ContentShapeProblem | undefined {
  if (!isObject(value)) return { path, problem: 'expected the resource contents object' }
  if (typeof value.uri !== 'string') return { path: `${path}.uri`, problem: 'expected a string' }
  if (value.mediaType !== undefined && typeof value.mediaType !== 'string')
    return { path: `${path}.mediaType`, problem: 'expected a string when present' }
  const hasText = value.text !== undefined
  const hasBlob = value.blob !== undefined
  if (hasText === hasBlob) return { path, problem: 'expected exactly one of "text" and "blob"' }
  if (hasText && typeof value.text !== 'string') return { path: `${path}.text`, problem: 'expected a string' }
  if (hasBlob && typeof value.blob !== 'string') return { path: `${path}.blob`, problem: 'expected a base64 string' }
  return metaProblem(value._meta, path)
}
