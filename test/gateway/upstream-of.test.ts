// upstreamOf: which connection serves a tool, asked per call by the upstream cap and the journal's
// credential; its per-list set must follow a connection whose list changed.
import { describe, expect, it } from 'vitest'
import { upstreamOf } from '../../src/gateway/upstream-of.js'

describe('upstreamOf', () => {
  it('names the connection that serves a tool, and follows a connection whose list was replaced', () => {
    const github = { tools: Object.freeze(['gh_issues', 'gh_pulls']) as readonly string[] }
    const slack = { tools: Object.freeze(['slack_post']) as readonly string[] }
    const connections = new Map([
      ['github', github],
      ['slack', slack],
    ])
    expect(upstreamOf(connections, 'gh_pulls')).toBe('github')
    expect(upstreamOf(connections, 'slack_post')).toBe('slack')
    expect(upstreamOf(connections, 'read_file')).toBeUndefined()
    // A list_changed: the connection hands back a new list; the old one's set is not consulted.
    github.tools = Object.freeze(['gh_issues', 'gh_labels'])
    expect(upstreamOf(connections, 'gh_pulls')).toBeUndefined()
    expect(upstreamOf(connections, 'gh_labels')).toBe('github')
    connections.delete('slack')
    expect(upstreamOf(connections, 'slack_post')).toBeUndefined()
  })
})
