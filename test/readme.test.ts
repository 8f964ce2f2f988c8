import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { main } from '../examples/readme.js'

describe('README example', () => {
  it('runs and produces the documented result', async () => {
    const result = await main()
    expect(result).toEqual({ isError: false, value: { sum: 5 }, content: [{ type: 'text', text: '2 + 3 = 5' }] })
  })

  it('is the code the README shows', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
    const example = readFileSync(new URL('../examples/readme.ts', import.meta.url), 'utf8')
    const shownDefinition = readme.slice(readme.indexOf('const add = defineTool('), readme.indexOf('const { tools }'))
    const exampleDefinition = example.slice(
      example.indexOf('const add = defineTool('),
      example.indexOf('export async function main'),
    )
    expect(shownDefinition.trim()).toBe(exampleDefinition.trim())
  })
})
