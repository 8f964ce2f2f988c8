// htm bound to Preact's `h`: tagged templates instead of JSX, so the client needs no JSX build.
import htm from 'htm'
import { type ComponentChildren, h } from 'preact'

export const html: (strings: TemplateStringsArray, ...values: unknown[]) => ComponentChildren = htm.bind(h)
