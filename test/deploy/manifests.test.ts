// Issue 37 item 7: the Kubernetes manifests validate against the API schemas (kubernetes-models
// 5.1.0: Kubernetes 1.34), and they agree with each other, with the image and with the gateway:
// selectors select the pods, probes hit the gateway's health endpoints on the served port, the
// config in the ConfigMap is one `toolgate serve --check` accepts, and secrets are referenced by
// the keys the Secret has.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { BIN } from '../cli/helpers.js'
import { find, imageRuntime, KUSTOMIZE_DIR, kustomizedManifests, type Manifest, REPO } from './deploy-files.js'
import { unknownFieldErrors } from './strict-fields.js'

interface Validating {
  validate(): void
}
type ModelClass = new (data: object) => Validating

/** The kubernetes-models module of each apiVersion the manifests use (core `v1` has no group). */
const SCHEMAS: Record<string, () => Promise<Record<string, unknown>>> = {
  v1: () => import('kubernetes-models/v1'),
  'apps/v1': () => import('kubernetes-models/apps/v1'),
  'policy/v1': () => import('kubernetes-models/policy/v1'),
  'autoscaling/v2': () => import('kubernetes-models/autoscaling/v2'),
  'networking.k8s.io/v1': () => import('kubernetes-models/networking.k8s.io/v1'),
}

async function modelOf(manifest: Manifest): Promise<ModelClass> {
  const load = SCHEMAS[manifest.apiVersion]
  if (load === undefined) throw new Error(`${manifest.file}: no schema loaded for apiVersion ${manifest.apiVersion}`)
  const model = (await load())[manifest.kind]
  if (typeof model !== 'function')
    throw new Error(`${manifest.file}: no schema for ${manifest.apiVersion} ${manifest.kind}`)
  return model as ModelClass
}

async function validate(manifest: Manifest): Promise<void> {
  const { file: _file, ...data } = manifest
  const Model = await modelOf(manifest)
  new Model(data).validate()
}

const manifests = kustomizedManifests()
const runtime = imageRuntime()

// biome-ignore lint/suspicious/noExplicitAny: manifests are plain YAML data; each test narrows what it reads
type Loose = any
const deployment: Loose = find(manifests, 'Deployment', 'toolgate')
const podSpec: Loose = deployment.spec.template.spec
const container: Loose = podSpec.containers.find((c: Loose) => c.name === 'toolgate')
const podLabels: Record<string, string> = deployment.spec.template.metadata.labels
const selects = (selector: Record<string, string>) =>
  Object.entries(selector).every(([key, value]) => podLabels[key] === value)
const argAfter = (flag: string): string | undefined => {
  const args: string[] = container.args
  const at = args.indexOf(flag)
  return at === -1 ? undefined : args[at + 1]
}

describe('the Kubernetes manifests (deploy/kubernetes)', () => {
  it('hold every kind the deploy guide names', () => {
    expect(manifests.map((m) => m.kind).sort()).toEqual(
      [
        'ConfigMap',
        'Deployment',
        'HorizontalPodAutoscaler',
        'Namespace',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Secret',
        'Service',
      ].sort(),
    )
  })

  for (const manifest of manifests)
    it(`${manifest.file}: ${manifest.apiVersion} ${manifest.kind} validates against the API schema`, async () => {
      await validate(manifest)
    })

  it('no manifest has a field its kind does not know (a typo would be dropped by the API server)', () => {
    const typed = manifests.map(({ file, ...data }) => ({
      file,
      module: `kubernetes-models/${data.apiVersion}`,
      type: `I${data.kind}`,
      data,
    }))
    expect(unknownFieldErrors(typed)).toEqual([])
    // The check is live: a misspelled probe is named.
    const { file: _file, ...misspelled } = structuredClone(deployment) as Manifest
    const spec: Loose = misspelled
    spec.spec.template.spec.containers[0].readinesProbe = spec.spec.template.spec.containers[0].readinessProbe
    const errors = unknownFieldErrors([
      { file: 'deployment.yaml', module: 'kubernetes-models/apps/v1', type: 'IDeployment', data: misspelled },
    ])
    expect(errors.join('\n')).toMatch(/deployment\.yaml: .*\W*readinesProbe\W* does not exist in type 'IContainer'/)
  }, 120_000)

  it('the validator refuses what the API refuses (a port as a word, a Deployment without selector)', async () => {
    const badPort: Loose = structuredClone(deployment)
    badPort.spec.template.spec.containers[0].ports[0].containerPort = 'eighty'
    await expect(validate(badPort)).rejects.toThrow(/containerPort must be integer/)
    const noSelector: Loose = structuredClone(deployment)
    delete noSelector.spec.selector
    await expect(validate(noSelector)).rejects.toThrow(/selector/)
  })

  it('the Service, the PodDisruptionBudget and the NetworkPolicy select the Deployment’s pods', () => {
    const service: Loose = find(manifests, 'Service')
    expect(selects(deployment.spec.selector.matchLabels)).toBe(true)
    expect(selects(service.spec.selector)).toBe(true)
    expect(selects((find(manifests, 'PodDisruptionBudget') as Loose).spec.selector.matchLabels)).toBe(true)
    expect(selects((find(manifests, 'NetworkPolicy') as Loose).spec.podSelector.matchLabels)).toBe(true)
    const hpa: Loose = find(manifests, 'HorizontalPodAutoscaler')
    expect(hpa.spec.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'toolgate' })
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2)
    expect((find(manifests, 'PodDisruptionBudget') as Loose).spec.minAvailable).toBeLessThan(hpa.spec.minReplicas)
  })

  it('the probes ask the gateway’s health endpoints on the port it serves, which the Service and NetworkPolicy open', () => {
    const port = container.ports.find((p: Loose) => p.name === 'http')
    expect(String(port.containerPort)).toBe(argAfter('--http'))
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' })
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' })
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' })
    expect((find(manifests, 'Service') as Loose).spec.ports[0].targetPort).toBe('http')
    const ingress: Loose[] = (find(manifests, 'NetworkPolicy') as Loose).spec.ingress
    expect(ingress.flatMap((rule) => rule.ports.map((p: Loose) => p.port))).toContain(port.containerPort)
  })

  it('the container runs the image as its own non-root user and only replaces its CMD', () => {
    expect(container.command).toBeUndefined()
    expect(runtime.entrypoint.slice(-1)).toEqual(['serve'])
    expect(runtime.user).toBe('node')
    // The node images' `node` user is uid 1000: the pod runs as that user and never as root.
    expect(podSpec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 })
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true })
    // With a read-only root, whatever the gateway writes has a volume: the workspace and /tmp.
    const mounts: string[] = container.volumeMounts.map((m: Loose) => m.mountPath)
    expect(mounts).toEqual(expect.arrayContaining([argAfter('--root'), '/tmp']))
    // The same flags as the image's CMD, plus what only a cluster needs.
    for (const flag of runtime.cmd.filter((arg) => arg.startsWith('--'))) expect(container.args).toContain(flag)
  })

  it('a rolling update drains within the pod’s grace period and never has fewer replicas than asked', () => {
    // The gateway drains for 30 s by default (--drain-timeout) before it cancels what is left.
    expect(podSpec.terminationGracePeriodSeconds).toBeGreaterThan(30)
    expect(deployment.spec.strategy.rollingUpdate).toMatchObject({ maxUnavailable: 0 })
    expect(deployment.spec.replicas).toBe(2)
  })

  it('secrets come from the Secret’s own keys, the config from the ConfigMap mounted where --config reads', () => {
    const secret: Loose = find(manifests, 'Secret')
    for (const variable of container.env) {
      const ref = variable.valueFrom?.secretKeyRef
      if (ref === undefined) continue
      expect(ref.name).toBe(secret.metadata.name)
      expect(Object.keys(secret.stringData)).toContain(ref.key)
    }
    const configMap: Loose = find(manifests, 'ConfigMap')
    const volume = podSpec.volumes.find((v: Loose) => v.configMap?.name === configMap.metadata.name)
    const mount = container.volumeMounts.find((m: Loose) => m.name === volume.name)
    const configFile = argAfter('--config') ?? ''
    expect(path.posix.dirname(configFile)).toBe(mount.mountPath)
    expect(Object.keys(configMap.data)).toContain(path.posix.basename(configFile))
    // Neither the config nor the args carry a secret: the store URL and tokens are variables.
    expect(argAfter('--store')).toBe('$(TOOLGATE_STORE_URL)')
    expect(configMap.data[path.posix.basename(configFile)]).not.toMatch(/token"\s*:|postgres:\/\//)
  })

  it('the state key is mounted from an operator-created Secret, and TOOLGATE_STATE_KEY_FILE names it', () => {
    // Issue 35, item 4: every replica seals requestState with one key, so a retry may land anywhere.
    const variable = container.env.find((v: Loose) => v.name === 'TOOLGATE_STATE_KEY_FILE')
    expect(variable?.value).toBe('/etc/toolgate-state/state.key')
    const keyFile: string = variable.value
    const mount = container.volumeMounts.find((m: Loose) => m.mountPath === path.posix.dirname(keyFile))
    expect(mount).toMatchObject({ name: 'state-key', readOnly: true })
    const volume = podSpec.volumes.find((v: Loose) => v.name === mount.name)
    expect(volume.secret.secretName).toBe('toolgate-state-key')
    expect(volume.secret.items).toEqual([{ key: 'state.key', path: path.posix.basename(keyFile) }])
    // Readable by the pod's group only (the gateway runs as uid/gid 1000, fsGroup 1000).
    expect(volume.secret.defaultMode).toBe(0o440)
    expect(podSpec.securityContext.fsGroup).toBe(podSpec.securityContext.runAsGroup)
    // The store is configured: without it a shared key is not used for approvals.
    expect(argAfter('--store')).toBeDefined()
    // The operator's command is the same in the manifest's comment and in the guide.
    const command = 'kubectl -n toolgate create secret generic toolgate-state-key --from-file=state.key'
    expect(readFileSync(path.join(KUSTOMIZE_DIR, 'deployment.yaml'), 'utf8')).toContain(command)
    expect(readFileSync(path.join(REPO, 'docs/guide/deploy.md'), 'utf8')).toContain(command)
  })

  it('no key material is committed: the kustomization makes no state-key Secret and no file holds a key', () => {
    const secrets: Loose[] = manifests.filter((m) => m.kind === 'Secret')
    expect(secrets.map((secret) => secret.metadata.name)).not.toContain('toolgate-state-key')
    for (const secret of secrets) {
      const keys = [...Object.keys(secret.data ?? {}), ...Object.keys(secret.stringData ?? {})]
      expect(keys.filter((key) => /state/i.test(key))).toEqual([])
    }
    // No blob that could be a key (32 bytes as base64 or hex, or longer) in any deploy file.
    for (const name of readdirSync(KUSTOMIZE_DIR)) {
      const text = readFileSync(path.join(KUSTOMIZE_DIR, name), 'utf8')
      expect(text.match(/[A-Za-z0-9+/_-]{43,}={0,2}|\b[0-9a-fA-F]{64}\b/g) ?? [], name).toEqual([])
    }
  })

  it('the ConfigMap’s config is one `toolgate serve --check` accepts, with the Secret’s tokens', () => {
    const configMap: Loose = find(manifests, 'ConfigMap')
    const secret: Loose = find(manifests, 'Secret')
    const dir = mkdtempSync(path.join(tmpdir(), 'toolgate-deploy-'))
    try {
      const file = path.join(dir, 'config.json')
      writeFileSync(file, configMap.data['config.json'])
      const tokensEnv = JSON.parse(configMap.data['config.json']).auth.tokensEnv as string
      const env = { ...process.env, [tokensEnv]: secret.stringData.tokens }
      const result = spawnSync(process.execPath, [BIN, 'serve', '--check', '--config', file, '--root', dir], {
        env,
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(result.stderr).toBe('')
      expect(result.status).toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
