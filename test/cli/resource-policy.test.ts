// The policy's rule language for prompts and resources (issue 23, item 2): "prompt:GLOB" and
// "resource:GLOB" in the existing allow/deny/ask lists, bare globs staying tool globs, an allow list
// failing closed for prompts and resources, and config mistakes reported with their path.
import { describe, expect, it } from 'vitest'
import { parseConfig } from '../../src/gateway/config.js'
import { catalogVerdict } from '../../src/gateway/resource-policy.js'

describe('catalogVerdict', () => {
  it('issue 23, item 2: no policy, or one without prompt:/resource: globs and without allow, allows everything', () => {
    expect(catalogVerdict(undefined, 'prompt', 'a__greet')).toEqual({ verdict: 'allow' })
    expect(catalogVerdict({ deny: ['*'], ask: ['*'] }, 'resource', 'file:///etc/passwd')).toEqual({ verdict: 'allow' })
  })

  it('issue 23, item 2: deny hides; its glob matches across "/" in URIs; a prompt glob does not touch resources', () => {
    const policy = { deny: ['resource:file:///secrets/*', 'prompt:gh__*'] }
    expect(catalogVerdict(policy, 'resource', 'file:///secrets/a/b.txt')).toEqual({
      verdict: 'hidden',
      reason: 'the gateway policy denies the resource "file:///secrets/a/b.txt" (deny: "resource:file:///secrets/*")',
    })
    expect(catalogVerdict(policy, 'resource', 'file:///public/x')).toEqual({ verdict: 'allow' })
    expect(catalogVerdict(policy, 'prompt', 'gh__review').verdict).toBe('hidden')
    expect(catalogVerdict(policy, 'resource', 'gh__review').verdict).toBe('allow')
  })

  it('issue 23, item 2: an allow list hides every prompt and resource it does not name (fails closed)', () => {
    const tools = { allow: ['fs__*'] }
    expect(catalogVerdict(tools, 'prompt', 'fs__hello')).toEqual({
      verdict: 'hidden',
      reason: 'the gateway policy does not allow the prompt "fs__hello" (it matches no allow glob)',
    })
    expect(catalogVerdict(tools, 'resource', 'note://x').verdict).toBe('hidden')
    const both = { allow: ['fs__*', 'prompt:*', 'resource:note://?/*'] }
    expect(catalogVerdict(both, 'prompt', 'anything').verdict).toBe('allow')
    expect(catalogVerdict(both, 'resource', 'note://a/readme').verdict).toBe('allow')
    expect(catalogVerdict(both, 'resource', 'note://ab/readme').verdict).toBe('hidden')
  })

  it('issue 23, item 2: ask asks unless deny or allow hides first', () => {
    const policy = { deny: ['prompt:x'], ask: ['prompt:*', 'resource:db://*'] }
    expect(catalogVerdict(policy, 'prompt', 'x').verdict).toBe('hidden')
    expect(catalogVerdict(policy, 'prompt', 'y')).toEqual({
      verdict: 'ask',
      reason: 'the gateway policy asks before the prompt "y" (ask: "prompt:*")',
    })
    expect(catalogVerdict(policy, 'resource', 'db://t/1').verdict).toBe('ask')
  })
})

describe('config: prompt:/resource: globs', () => {
  it('reports an empty glob after the kind and a deadline on a prompt or resource, with their paths', () => {
    let error: unknown
    try {
      parseConfig(
        JSON.stringify({
          policy: { allow: ['prompt:', 'resource:*'], deny: ['resource:'], timeoutMs: { 'prompt:*': 1000 } },
        }),
        'test.json',
      )
    } catch (e) {
      error = e
    }
    expect((error as { issues: string[] }).issues).toEqual([
      'policy.allow[0]: "prompt:" needs a glob after "prompt:" (e.g. "prompt:*")',
      'policy.deny[0]: "resource:" needs a glob after "resource:" (e.g. "resource:*")',
      'policy.timeoutMs.prompt:*: deadlines apply to tool calls only, not to prompts or resources',
    ])
  })
})
