// Child process: resume a stored Code Mode turn. argv: statePath decisionsJson marker outPath
import { readFileSync, writeFileSync } from 'node:fs'
import { resumeModelLoop } from '../../src/providers/index.js'
import { programModel, STATE_KEY, setupProgramTurn } from './durable-fixture.js'

const [statePath, decisionsJson, marker, outPath] = process.argv.slice(2)
const state = JSON.parse(readFileSync(statePath, 'utf8'))
const code = String(state.pending.calls[0].arguments.code)
const { tools, agent } = await setupProgramTurn(marker)
const result = await resumeModelLoop({
  state,
  decisions: JSON.parse(decisionsJson),
  tools,
  agent,
  model: programModel(code),
  stateKey: STATE_KEY,
})
writeFileSync(outPath, JSON.stringify(result))
process.exit(0)
