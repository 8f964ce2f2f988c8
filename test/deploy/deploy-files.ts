// The deploy files as data: the Dockerfile's runtime stage and the kustomization's manifests.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { parseAllDocuments } from 'yaml'

export const REPO = path.resolve(import.meta.dirname, '../..')
export const KUSTOMIZE_DIR = path.join(REPO, 'deploy/kubernetes')

/** What a container of the image runs: the final stage's WORKDIR, USER, ENTRYPOINT and CMD. */
export interface ImageRuntime {
  workdir: string
  user: string
  entrypoint: string[]
  cmd: string[]
}

/** The last stage of the Dockerfile (exec-form ENTRYPOINT/CMD only: a shell form would hide signals from node). */
export function imageRuntime(file = path.join(REPO, 'Dockerfile')): ImageRuntime {
  const lines = readFileSync(file, 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
  const stages: string[][] = []
  for (const line of lines) {
    if (/^FROM\s/i.test(line)) stages.push([])
    stages.at(-1)?.push(line)
  }
  const last = stages.at(-1) ?? []
  const value = (instruction: string): string | undefined =>
    last
      .filter((line) => line.toUpperCase().startsWith(`${instruction} `))
      .map((line) => line.slice(instruction.length).trim())
      .at(-1)
  const execForm = (instruction: string): string[] => {
    const raw = value(instruction)
    if (raw === undefined) throw new Error(`Dockerfile: the runtime stage has no ${instruction}`)
    const parsed: unknown = JSON.parse(raw)
    if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string'))
      throw new Error(`Dockerfile: ${instruction} is not in exec form (a JSON array of strings): ${raw}`)
    return parsed
  }
  return {
    workdir: value('WORKDIR') ?? '/',
    user: value('USER') ?? 'root',
    entrypoint: execForm('ENTRYPOINT'),
    cmd: execForm('CMD'),
  }
}

export interface Manifest {
  file: string
  apiVersion: string
  kind: string
  metadata: { name: string; labels?: Record<string, string> }
  [key: string]: unknown
}

/** Every document of every resource the kustomization lists, in order. */
export function kustomizedManifests(dir = KUSTOMIZE_DIR): Manifest[] {
  const kustomization = parseOne(path.join(dir, 'kustomization.yaml')) as { resources?: unknown }
  if (!Array.isArray(kustomization.resources)) throw new Error('kustomization.yaml: expected a resources list')
  const manifests: Manifest[] = []
  for (const resource of kustomization.resources) {
    if (typeof resource !== 'string') throw new Error(`kustomization.yaml: resource ${String(resource)} is not a path`)
    const file = path.join(dir, resource)
    for (const document of parseAllDocuments(readFileSync(file, 'utf8'))) {
      if (document.errors.length > 0) throw new Error(`${resource}: ${document.errors[0]?.message}`)
      const value = document.toJS() as Manifest | null
      if (value !== null) manifests.push({ ...value, file: resource })
    }
  }
  return manifests
}

function parseOne(file: string): unknown {
  const [document] = parseAllDocuments(readFileSync(file, 'utf8'))
  if (document === undefined || document.errors.length > 0) throw new Error(`${file}: not one YAML document`)
  return document.toJS()
}

/** The one manifest of `kind` (and `name`, when several). */
export function find(manifests: Manifest[], kind: string, name?: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind && (name === undefined || m.metadata.name === name))
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`)
  return found[0] as Manifest
}
