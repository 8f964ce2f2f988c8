// Sizes of base64 payloads, in the words a person or a model reads them.

/** How many bytes a base64 string decodes to. */
export function base64Bytes(data: string): number {
  let length = data.length
  let padding = 0
  while (padding < 2 && length > 0 && data[length - 1] === '=') {
    length--
    padding++
  }
  return Math.floor(((length + padding) * 3) / 4) - padding
}

/** `512 B`, `1.5 KB`, `12 KB`, `3.2 MB`: one decimal below ten units, whole numbers above. */
export function formatBytes(bytes: number): string {
  if (!(Number.isFinite(bytes) && bytes >= 0)) return '? B'
  if (bytes < 1024) return `${Math.round(bytes)} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let value = bytes / 1024
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  const shown = value < 10 ? Math.round(value * 10) / 10 : Math.round(value)
  return `${shown} ${units[unit]}`
}
