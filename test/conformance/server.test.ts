// Issue 23 (Verification): the official conformance suite's server scenarios, run against its
// reference server directly (the baseline) and against `toolgate serve --config` in front of it
// with `prefix: ""`. Every scenario that passes directly must pass through toolgate, and every
// check that succeeds directly must succeed through toolgate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir, writeConfig } from '../cli/helpers.js'
import {
  type Check,
  failures,
  listScenarios,
  passed,
  type Running,
  runSuite,
  type SuiteRun,
  startReferenceServer,
  startToolgate,
} from './suite.js'

const scenarios = listScenarios('server')

let reference: Running | undefined
let gateway: Running | undefined
let cleanup: (() => Promise<void>) | undefined
let direct: SuiteRun
let through: SuiteRun
/** Why the servers or the suite could not run: every test fails with it (none is skipped). */
let setupError: unknown

beforeAll(async () => {
  try {
    await setup()
  } catch (error) {
    setupError = error
  }
}, 600_000)

async function setup(): Promise<void> {
  reference = await startReferenceServer()
  const temp = await tempDir()
  cleanup = temp.cleanup
  // A pure relay: none of the gateway's own file tools beside the reference server's.
  const config = await writeConfig(temp.dir, {
    files: false,
    servers: { conformance: { url: reference.url, prefix: '' } },
  })
  gateway = await startToolgate(['--config', config])
  // One run of every scenario (pending ones too) per target, one after the other: the machine is
  // shared, and the suite runs its scenarios in sequence anyway.
  direct = await runSuite(['server', '--url', reference.url, '--suite', 'all'])
  through = await runSuite(['server', '--url', gateway.url, '--suite', 'all'])
}

function ready(): void {
  if (setupError !== undefined) throw setupError
}

afterAll(async () => {
  await gateway?.stop()
  await reference?.stop()
  await cleanup?.()
})

const result = (run: SuiteRun, scenario: string): Check[] | undefined => run.results.get(`server-${scenario}`)
const succeeded = (checks: readonly Check[] | undefined) =>
  (checks ?? []).filter((check) => check.status === 'SUCCESS').map((check) => check.id)

describe('conformance server scenarios: the reference server directly', () => {
  it('the suite ran every scenario it lists against it', () => {
    ready()
    const missing = scenarios.filter((scenario) => result(direct, scenario) === undefined)
    expect(missing, direct.log).toEqual([])
  })
})

describe('conformance server scenarios: through toolgate serve --config (prefix "")', () => {
  for (const scenario of scenarios) {
    it(scenario, () => {
      ready()
      const baseline = result(direct, scenario)
      const proxied = result(through, scenario)
      expect(baseline, `no direct result for ${scenario}:\n${direct.log}`).toBeDefined()
      if (passed(baseline)) expect(failures(proxied), `${scenario} fails through toolgate`).toEqual([])
      // The same checks succeed: a failure must not hide as a check that no longer runs.
      const lost = succeeded(baseline).filter((id) => !succeeded(proxied).includes(id))
      expect(lost, `checks that succeed directly but not through toolgate`).toEqual([])
    })
  }
})
