// "Always allow" / "Always deny" in the viewer over a store (issue 26): a click records the
// `-always` decision for the call and writes the standing rule to the store (the file store's
// standing file, PostgreSQL's table), the resume applies the decision, and a later call of that
// tool by that agent on another runtime sharing the store is answered by the rule without asking.
// A denial's typed reason reaches the model and stays text on the page; a race between an
// "always" and another decision leaves exactly the winner's rule.
import { createHash } from 'node:crypto'
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { JsonValue } from '../../src/contract/json-value.js'
import { type ApprovalAnswerSource, createAgent, type ToolExecutionResult } from '../../src/index.js'
import { resumeModelLoop, runModelLoop } from '../../src/providers/index.js'
import { createFileStore, createPostgresStore, type Store, standingApprovalsIn } from '../../src/store/index.js'
import { VIEWER_DENIAL_REASON } from '../../src/viewer/approval-state.js'
import { startViewer } from '../../src/viewer/server.js'
import { storeApproval } from '../../src/viewer/store-source.js'
import { scriptedModel, setupTurn } from '../approval/loop-fixture.js'
import { signal } from '../runtime/helpers.js'
import { launchBrowser, TEST_OUTPUT, watchPage } from '../viewer/browser.js'
import { type PgServer, startPgServer } from './pg-server.js'

let server: PgServer
let browser: Browser
const dir = mkdtempSync(join(tmpdir(), 'toolgate-viewer-always-'))
beforeAll(async () => {
  ;[server, browser] = await Promise.all([startPgServer(), launchBrowser()])
}, 120_000)
afterAll(async () => {
  await browser?.close()
  server?.destroy()
  rmSync(dir, { recursive: true, force: true })
})

const code = (result: ToolExecutionResult) => (result.isError ? result.error.info?.code : 'OK')
const card = (page: Page, id: string) => page.locator(`article.card[data-call-id="${id}"]`)
const writesIn = (marker: string) =>
  existsSync(marker)
    ? readFileSync(marker, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('write:'))
        .sort()
    : []

/** Instance A: run the scripted turn until its two writes wait for a decision, saved as 'turn'. */
async function suspend(store: Store, marker: string): Promise<void> {
  const a = await setupTurn({ marker, store })
  const first = await runModelLoop({
    tools: a.tools,
    agent: a.agent,
    model: scriptedModel(),
    messages: [{ role: 'user', content: 'update the files' }],
    store,
  })
  expect(first.stopReason).toBe('approval-required')
  await store.saveTurn('turn', first.state as unknown as JsonValue)
}

/**
 * Resume 'turn' on another instance. Its runtime keeps standing rules in its own memory (it installs
 * no standing store), so a rule another instance finds in the store can only come from the viewer.
 */
async function resume(store: Store, marker: string) {
  const c = await setupTurn({ marker, store })
  const turn = await store.loadTurn('turn')
  const resumed = await resumeModelLoop({
    state: turn?.state,
    tools: c.tools,
    agent: c.agent,
    model: scriptedModel(),
    store,
    turnId: 'turn',
  })
  return resumed
}

/**
 * A later instance sharing the store: its own runtime, asking through SuspendingApproval (an asked
 * call suspends), with standing rules read from the store. Calls `write` as `agentId`.
 */
async function laterCall(store: Store, marker: string, agentId: string, callId: string) {
  const d = await setupTurn({ marker, store })
  d.tools.host.installStandingStore(standingApprovalsIn(store))
  const sources: ApprovalAnswerSource[] = []
  d.ctx.on('tools/approval-answered', (_request, _outcome, source) => void sources.push(source))
  const agent = agentId === d.agent.id ? d.agent : createAgent(d.ctx, { id: agentId })
  const result = await d.tools.execute({
    callId,
    name: 'write',
    arguments: { path: `${callId}.txt`, text: 'later' },
    agent,
    signal: signal(),
  })
  return { result, sources }
}

/** Open the viewer page and wait for the suspended calls' buttons. */
async function openPage(url: string): Promise<{ page: Page; watch: ReturnType<typeof watchPage> }> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
  const watch = watchPage(page)
  await page.goto(url)
  await card(page, 'call_c').locator('> .decide button.approve-always').waitFor({ timeout: 30_000 })
  return { page, watch }
}

/** Read the viewer's event stream until its snapshot; answers the page token. */
async function pageToken(url: string, headers: Record<string, string> = {}): Promise<string> {
  const controller = new AbortController()
  const response = await fetch(`${url}events`, { signal: controller.signal, headers })
  const reader = response.body!.getReader()
  let text = ''
  while (!/event: snapshot\ndata: .*\n/.test(text)) {
    const { value, done } = await reader.read()
    if (done) break
    text += new TextDecoder().decode(value)
  }
  controller.abort()
  const head = /event: snapshot\ndata: (.*)\n/.exec(text)
  return head ? ((JSON.parse(head[1]) as { token?: string }).token ?? '') : ''
}

/** Click "Always allow" on call_b, then resume, then call write again on another instance. */
async function alwaysAllow(stores: Store[], marker: string, shot: string): Promise<void> {
  const [onA, onB, onC, onD] = stores
  await suspend(onA, marker)
  const viewer = await startViewer({
    journal: 'store',
    title: 'store',
    store: onB,
    approval: storeApproval(onB),
    pollMs: 100,
  })
  try {
    const { page, watch } = await openPage(viewer.url)
    for (const id of ['call_b', 'call_c']) {
      for (const button of ['approve', 'approve-always', 'deny', 'deny-always'])
        expect(await card(page, id).locator(`> .decide button.${button}`).count()).toBe(1)
    }
    await card(page, 'call_b').locator('> .decide button.approve-always').click()
    await card(page, 'call_b').locator('> .decide.decided').waitFor({ timeout: 15_000 })
    const decided = await card(page, 'call_b').locator('> .decide').textContent()
    expect(decided).toContain('allowed-always')
    expect(decided).toContain('later calls of this tool by this agent run without asking')
    await page.screenshot({ path: join(TEST_OUTPUT, `${shot}.png`), fullPage: true })

    // The decision is in the turn and the rule is in the store, before anything resumed (read
    // through another instance's store).
    expect((await onC.loadTurn('turn'))?.decisions).toEqual({ call_b: { kind: 'allowed-always' } })
    expect(await onC.standingApprovals('agent-1')).toEqual([
      { agentId: 'agent-1', toolName: 'write', kind: 'allowed-always' },
    ])

    // Resumed on C: call_b runs on its decision. call_c was asked before the rule existed and has
    // no decision of its own, so it still waits (a rule answers later asks, not calls already asked).
    const resumed = await resume(onC, marker)
    expect(resumed.stopReason).toBe('approval-required')
    expect(writesIn(marker)).toEqual(['write:b.txt'])

    // A later call of write by the same agent on instance D runs without asking; another agent's is asked.
    const later = await laterCall(onD, marker, 'agent-1', 'call_d')
    expect(code(later.result)).toBe('OK')
    expect(later.sources).toEqual(['standing'])
    const other = await laterCall(onD, marker, 'agent-2', 'call_e')
    expect(code(other.result)).toBe('APPROVAL_SUSPENDED')
    expect(other.sources).toEqual(['service'])
    expect(writesIn(marker)).toEqual(['write:b.txt', 'write:call_d.txt'])

    // The page saw the resume: call_b ran, call_c still offers its buttons.
    await page.locator('article.card[data-call-id="call_b"][data-status="ok"]').waitFor({ timeout: 15_000 })
    expect(await card(page, 'call_c').locator('> .decide button.approve-always').count()).toBe(1)
    expect(watch.dialogs).toEqual([])
    expect(watch.errors).toEqual([])
    expect(watch.requests.filter((r) => r.endsWith('/decision'))).toHaveLength(1)
    await page.close()
  } finally {
    await viewer.close()
  }
}

describe('"always" in the viewer over a store (issue 26)', { timeout: 180_000 }, () => {
  it('file store: "Always allow" writes the rule to the standing file; resume runs the call; another instance runs later calls unasked', async () => {
    const journal = join(dir, 'file.jsonl')
    appendFileSync(journal, '')
    const stores = [0, 1, 2, 3].map(() => createFileStore({ journal }))
    await alwaysAllow(stores, join(dir, 'file-marker'), 'viewer-always-file')
    expect(JSON.parse(readFileSync(`${journal}.standing.json`, 'utf8'))).toEqual([
      { agentId: 'agent-1', toolName: 'write', kind: 'allowed-always' },
    ])
    await Promise.all(stores.map((store) => store.close()))
  })

  it('PostgreSQL: "Always allow" writes the rule to the table; resume runs the call; another instance runs later calls unasked', async () => {
    const url = server.createDatabase('always_allow')
    const stores = await Promise.all([0, 1, 2, 3].map(() => createPostgresStore({ connectionString: url })))
    try {
      await alwaysAllow(stores, join(dir, 'pg-marker'), 'viewer-always-pg')
    } finally {
      await Promise.all(stores.map((store) => store.close()))
    }
  })

  it('file store: the decision carries who decided (the signed-in subject), as the state file does', async () => {
    const journal = join(dir, 'decided-by.jsonl')
    appendFileSync(journal, '')
    const store = createFileStore({ journal })
    await suspend(store, join(dir, 'decided-by-marker'))
    const approval = storeApproval(store)
    expect(await approval.decide({ callId: 'call_b', decision: 'approve-always', decidedBy: 'ann' })).toEqual({
      applied: true,
    })
    expect(await approval.decide({ callId: 'call_b', decision: 'deny-always', decidedBy: 'bob' })).toMatchObject({
      applied: false,
    })
    expect((await store.loadTurn('turn'))?.decisions).toEqual({ call_b: { kind: 'allowed-always', decidedBy: 'ann' } })
    expect(await store.standingApprovals()).toEqual([{ agentId: 'agent-1', toolName: 'write', kind: 'allowed-always' }])
    await store.close()
  })

  it('file store, with login: a signed-in non-approver\'s "always" is refused and writes nothing; an approver\'s is recorded as theirs', async () => {
    const journal = join(dir, 'login.jsonl')
    appendFileSync(journal, '')
    const store = createFileStore({ journal })
    await suspend(store, join(dir, 'login-marker'))
    const sha = (text: string) => createHash('sha256').update(text).digest('hex')
    const viewer = await startViewer({
      journal: 'store',
      store,
      approval: storeApproval(store),
      pollMs: 100,
      access: {
        tokens: [
          { sha256: sha('alice-secret'), subject: 'alice', groups: ['leads'] },
          { sha256: sha('bob-secret'), subject: 'bob', groups: ['dev'] },
        ],
        approvers: { groups: ['leads'] },
      },
    })
    try {
      const signIn = async (token: string) => {
        const reply = await fetch(`${viewer.url}login`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
        })
        expect(reply.status).toBe(303)
        const cookie = (reply.headers.get('set-cookie') ?? '').split(';')[0]
        return { cookie, csrf: await pageToken(viewer.url, { cookie }) }
      }
      const post = (who: { cookie: string; csrf: string }, body: unknown) =>
        fetch(`${viewer.url}decision`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', cookie: who.cookie, 'x-toolgate-token': who.csrf },
          body: JSON.stringify(body),
        })
      const bob = await signIn('bob-secret')
      const refused = await post(bob, { callId: 'call_b', decision: 'approve-always' })
      expect(refused.status).toBe(403)
      expect(await refused.text()).toContain('not among the approvers')
      expect(await store.standingApprovals()).toEqual([])
      expect((await store.loadTurn('turn'))?.decisions).toEqual({})
      const alice = await signIn('alice-secret')
      expect((await post(alice, { callId: 'call_b', decision: 'deny-always', reason: 'no' })).status).toBe(200)
      expect((await store.loadTurn('turn'))?.decisions).toEqual({
        call_b: { kind: 'denied-always', reason: `${VIEWER_DENIAL_REASON}: no`, decidedBy: 'alice' },
      })
      expect(await store.standingApprovals()).toEqual([
        { agentId: 'agent-1', toolName: 'write', kind: 'denied-always' },
      ])
    } finally {
      await viewer.close()
      await store.close()
    }
  })

  it('PostgreSQL: "Always deny" with a typed reason: the model reads it, the page shows it as text, later calls are refused', async () => {
    const url = server.createDatabase('always_deny')
    const stores = await Promise.all([0, 1, 2, 3].map(() => createPostgresStore({ connectionString: url })))
    const [onA, onB, onC, onD] = stores
    const marker = join(dir, 'deny-marker')
    const reason = '<img src=x onerror="globalThis.__pwned=1"> not on release day \u202eevil'
    await suspend(onA, marker)
    const viewer = await startViewer({
      journal: 'store',
      title: 'store',
      store: onB,
      approval: storeApproval(onB),
      pollMs: 100,
    })
    try {
      const { page, watch } = await openPage(viewer.url)
      await card(page, 'call_b').locator('> .decide input.deny-reason').fill(reason)
      await card(page, 'call_b').locator('> .decide button.deny-always').click()
      await card(page, 'call_b').locator('> .decide.decided').waitFor({ timeout: 15_000 })
      expect(await card(page, 'call_b').locator('> .decide').textContent()).toContain('denied-always')
      const full = `${VIEWER_DENIAL_REASON}: ${reason}`
      expect((await onC.loadTurn('turn'))?.decisions).toEqual({ call_b: { kind: 'denied-always', reason: full } })
      expect(await onC.standingApprovals('agent-1')).toEqual([
        { agentId: 'agent-1', toolName: 'write', kind: 'denied-always' },
      ])

      // Resumed: call_b is denied with the typed reason (what the model will read); call_c still
      // waits for its own decision; nothing was written.
      const resumed = await resume(onC, marker)
      expect(resumed.stopReason).toBe('approval-required')
      const results = (resumed.state as unknown as { pending: { results: unknown[] } }).pending.results
      expect(JSON.stringify(results[1])).toContain(
        `the approval service denied this and every later call of this tool: ${JSON.stringify(full).slice(1, -1)}`,
      )
      expect(results[2]).toBeNull()
      expect(writesIn(marker)).toEqual([])

      // A later call on instance D is refused without asking.
      const later = await laterCall(onD, marker, 'agent-1', 'call_d')
      expect(code(later.result)).toBe('TOOL_DENIED')
      expect(later.sources).toEqual(['standing'])
      expect(writesIn(marker)).toEqual([])

      // The page shows the reason as text (the bidi override made visible), and nothing of it ran.
      await page.locator('article.card[data-call-id="call_b"][data-status="denied"]').waitFor({ timeout: 15_000 })
      const line = await card(page, 'call_b').locator('.approvals .reason').last().textContent()
      expect(line).toContain('<img src=x onerror="globalThis.__pwned=1"> not on release day')
      expect(line).toContain('⟨U+202E⟩evil')
      expect(await page.locator('main img').count()).toBe(0)
      expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined()
      expect(watch.dialogs).toEqual([])
      expect(watch.errors).toEqual([])
      await page.close()
    } finally {
      await viewer.close()
      await Promise.all(stores.map((store) => store.close()))
    }
  })

  it('PostgreSQL: "always" racing another decision from a second viewer leaves exactly the winner\'s rule; CSRF and bad input are refused', async () => {
    const url = server.createDatabase('always_race')
    const stores = await Promise.all([0, 1, 2].map(() => createPostgresStore({ connectionString: url })))
    const [onA, onB, onC] = stores
    await suspend(onA, join(dir, 'race-marker'))
    const viewers = await Promise.all(
      [onB, onC].map((store) =>
        startViewer({ journal: 'store', title: 'store', store, approval: storeApproval(store), pollMs: 100 }),
      ),
    )
    try {
      const tokens = await Promise.all(viewers.map((viewer) => pageToken(viewer.url)))
      const post = (i: number, body: unknown, token = tokens[i]) =>
        fetch(`${viewers[i].url}decision`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-toolgate-token': token },
          body: JSON.stringify(body),
        })
      // Without the page's token, an "always" is refused and writes nothing.
      expect((await post(0, { callId: 'call_b', decision: 'approve-always' }, 'wrong')).status).toBe(403)
      // Bad input: an unknown kind, a reason on an approval, an overlong reason.
      const bad = [
        { callId: 'call_b', decision: 'always' },
        { callId: 'call_b', decision: 'approve-always', reason: 'because' },
        { callId: 'call_b', decision: 'deny-always', reason: 'x'.repeat(501) },
      ]
      for (const body of bad) {
        const response = await post(0, body)
        expect(response.status).toBe(400)
        expect(await response.text()).toMatch(/^bad decision: (decision|reason): /)
      }
      expect(await onA.standingApprovals()).toEqual([])

      // The race: B's "always allow" against C's plain deny of the same call.
      const [fromB, fromC] = await Promise.all([
        post(0, { callId: 'call_b', decision: 'approve-always' }),
        post(1, { callId: 'call_b', decision: 'deny' }),
      ])
      expect([fromB.status, fromC.status].sort()).toEqual([200, 409])
      const loser = await (fromB.status === 409 ? fromB : fromC).json()
      expect(loser.reason).toMatch(/call "call_b" was already decided \((allowed-always|denied)\)/)
      const rules = await onA.standingApprovals()
      if (fromB.status === 200)
        expect(rules).toEqual([{ agentId: 'agent-1', toolName: 'write', kind: 'allowed-always' }])
      else expect(rules).toEqual([])

      // And the other way round on call_c: C's "always deny" against B's plain approve.
      const [againB, againC] = await Promise.all([
        post(0, { callId: 'call_c', decision: 'approve' }),
        post(1, { callId: 'call_c', decision: 'deny-always' }),
      ])
      expect([againB.status, againC.status].sort()).toEqual([200, 409])
      const after = await onA.standingApprovals()
      const expected = [
        ...(fromB.status === 200 ? [{ agentId: 'agent-1', toolName: 'write', kind: 'allowed-always' }] : []),
      ]
      // One rule per agent and tool: a winning "always deny" replaces an earlier "always allow".
      if (againC.status === 200)
        expect(after).toEqual([{ agentId: 'agent-1', toolName: 'write', kind: 'denied-always' }])
      else expect(after).toEqual(expected)
      const decisions = (await onA.loadTurn('turn'))?.decisions ?? {}
      expect(Object.keys(decisions).sort()).toEqual(['call_b', 'call_c'])
    } finally {
      await Promise.all(viewers.map((viewer) => viewer.close()))
      await Promise.all(stores.map((store) => store.close()))
    }
  })
})
