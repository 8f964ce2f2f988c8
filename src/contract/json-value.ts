/** A lossless JSON value: survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

/** A JSON object record. */
export type JsonObject = { [key: string]: JsonValue }
