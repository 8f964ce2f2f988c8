// Child process: resume a stored turn. argv: statePath decisionsJson marker outPath [journal] [kill] [rendezvous]
import { readFileSync, writeFileSync } from 'node:fs'
import { resumeModelLoop } from '../../src/providers/index.js'
import { scriptedModel, setupTurn } from './loop-fixture.js'

const [statePath, decisionsJson, marker, outPath, journal, kill, rendezvous] = process.argv.slice(2)
const { tools, agent } = await setupTurn({
  marker,
  journal: journal || undefined,
  kill: (kill || undefined) as 'in-body' | 'after-journal' | undefined,
  rendezvous: rendezvous || undefined,
})
const result = await resumeModelLoop({
  state: JSON.parse(readFileSync(statePath, 'utf8')),
  decisions: JSON.parse(decisionsJson),
  tools,
  agent,
  model: scriptedModel(),
  journal: journal || undefined,
})
writeFileSync(outPath, JSON.stringify(result))
