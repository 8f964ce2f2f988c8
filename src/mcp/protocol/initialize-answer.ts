// Whether a server's answer to `initialize` has the shape the MCP SDK client requires of it (its
// InitializeResult schema: the version, the capabilities and the server's description), checked by
// hand so that a caller that has not loaded the SDK can tell whether the SDK would take it.
// Optional fields may be absent, never null; fields it does not know are allowed, as the SDK allows them.
import { isRecord } from '../../util/is-record.js'

const isString = (value: unknown): boolean => typeof value === 'string'
const optional = (value: unknown, check: (value: unknown) => boolean): boolean => value === undefined || check(value)
const optionalBooleans = (value: Record<string, unknown>, keys: readonly string[]): boolean =>
  keys.every((key) => optional(value[key], (v) => typeof v === 'boolean'))
const recordOf = (value: unknown, check: (value: unknown) => boolean): boolean =>
  isRecord(value) && Object.values(value).every(check)

function isIcon(value: unknown): boolean {
  if (!isRecord(value) || !isString(value.src) || !optional(value.mimeType, isString)) return false
  if (!optional(value.sizes, (sizes) => Array.isArray(sizes) && sizes.every(isString))) return false
  return optional(value.theme, (theme) => theme === 'light' || theme === 'dark')
}

/** An `Implementation`: name and version, and the optional title, website, description and icons. */
export function isImplementation(value: unknown): boolean {
  if (!isRecord(value) || !isString(value.name) || !isString(value.version)) return false
  if (!['title', 'websiteUrl', 'description'].every((key) => optional(value[key], isString))) return false
  return optional(value.icons, (icons) => Array.isArray(icons) && icons.every(isIcon))
}

/** A server's `capabilities`, each declared one in its shape. */
export function isServerCapabilities(value: unknown): boolean {
  if (!isRecord(value)) return false
  const { experimental, extensions, logging, completions, prompts, resources, tools, tasks } = value
  if (!optional(experimental, (v) => recordOf(v, isRecord)) || !optional(extensions, (v) => recordOf(v, isRecord)))
    return false
  if (!optional(logging, isRecord) || !optional(completions, isRecord)) return false
  if (!optional(prompts, (v) => isRecord(v) && optionalBooleans(v, ['listChanged']))) return false
  if (!optional(resources, (v) => isRecord(v) && optionalBooleans(v, ['subscribe', 'listChanged']))) return false
  if (!optional(tools, (v) => isRecord(v) && optionalBooleans(v, ['listChanged']))) return false
  return optional(
    tasks,
    (v) =>
      isRecord(v) &&
      optional(v.list, isRecord) &&
      optional(v.cancel, isRecord) &&
      optional(
        v.requests,
        (requests) =>
          isRecord(requests) &&
          optional(requests.tools, (t) => isRecord(t) && optional((t as Record<string, unknown>).call, isRecord)),
      ),
  )
}

/** Whether `result` is an `initialize` answer the SDK client takes, speaking `protocolVersion`. */
export function isInitializeResult(result: unknown, protocolVersion: string): boolean {
  if (!isRecord(result) || result.protocolVersion !== protocolVersion) return false
  if (!isServerCapabilities(result.capabilities) || !isImplementation(result.serverInfo)) return false
  return optional(result.instructions, isString) && optional(result._meta, isRecord)
}
