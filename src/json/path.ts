/** Paths name members the way a reader would write them: `value.items[3].when`, `value["odd key"]`. */
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** Append an object key to a path, bracket-quoting keys that are not identifiers. */
export function appendKey(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

/** Append an array index to a path. */
export function appendIndex(path: string, index: number): string {
  return `${path}[${index}]`
}
