// The guide's five policy examples (docs/guide/policy-conditions.md), as one document that the
// library tests and the gateway tests both load (issue 38, item 5).
export const GUIDE_POLICY = {
  rules: [
    {
      id: 'no-workflow-writes',
      deny: ['write_file'],
      when: "args.path.startsWith('.github/') || args.path.contains('/.github/')",
      reason: 'files under .github/ are not written by agents',
    },
    { id: 'large-transfers', ask: ['transfer'], when: 'args.amount > 100' },
    { id: 'issue-quota', tools: ['github__create_issue'], quota: { calls: 20, per: 'hour', by: 'subject' } },
    { id: 'no-bash-after-fetch', deny: ['bash'], when: "'fetch' in turn.tools" },
    {
      id: 'acme-repos-only',
      deny: ['github__*'],
      when: "has(args.repo) && !args.repo.matches('^acme/[A-Za-z0-9_.-]+$')",
    },
  ],
} as const
