import type { Application } from 'typedoc'

/** `text` without requirement ids and issue references. */
export function plain(text: string): string
/** The TypeDoc plugin entry. */
export function load(app: Application): void
