// Issue 24: what authenticating a request of `serve --http` adds, with the issuer's JWKS already
// cached: a static bearer token (SHA-256 + constant-time compare), a JWT seen for the first time
// (signature check with jose), and the same JWT again (the verified-token cache).
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { format, isMain, printTable, type Row } from './util.js'

type HttpAuth = typeof import('../src/gateway/http-auth.js')
const { createAuthenticator } = (await import(
  new URL('../dist/gateway/http-auth.js', import.meta.url).href
)) as HttpAuth

/**
 * Median over `rounds` rounds of the mean time of `n` sequential awaited calls of each case, the
 * cases interleaved (mitata's timer does not await one promise before starting the next).
 */
async function sequentialMedians(cases: Array<() => Promise<unknown>>, n: number, rounds = 7): Promise<number[]> {
  const samples = cases.map(() => [] as number[])
  for (let round = 0; round < rounds; round++)
    for (let k = 0; k < cases.length; k++) {
      const c = (k + round) % cases.length
      const started = process.hrtime.bigint()
      for (let i = 0; i < n; i++) await cases[c]()
      samples[c].push(Number(process.hrtime.bigint() - started) / n)
    }
  return samples.map((values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)])
}

const AUDIENCE = 'https://gateway.example/mcp'
/** More distinct tokens than the verified-token cache holds, cycled in order, so every check misses it. */
const FRESH_TOKENS = 2500

export async function run(): Promise<Row[]> {
  const rows: Row[] = []
  for (const alg of ['ES256', 'RS256', 'EdDSA'] as const) {
    const { publicKey, privateKey } = await generateKeyPair(alg)
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg }] }
    const server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks)),
    )
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const mint = (sub: string) =>
      new SignJWT({ scope: 'mcp:tools', groups: ['dev'] })
        .setProtectedHeader({ alg, kid: 'k1' })
        .setIssuer(issuer)
        .setAudience(AUDIENCE)
        .setSubject(sub)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey)
    const authenticator = createAuthenticator({
      oauth: { issuer, audience: AUDIENCE, jwksUri: `${issuer}/jwks`, requiredScopes: ['mcp:tools'] },
    })
    const tokens = await Promise.all(Array.from({ length: FRESH_TOKENS }, (_, i) => mint(`user-${i}`)))
    const repeated = `Bearer ${tokens[0]}`
    // Warm the JWKS cache (and check that the tokens are accepted at all).
    const first = await authenticator.authenticate(repeated)
    if (!first.ok) throw new Error(`the benchmark token was refused: ${first.description}`)
    let i = 0
    const [fresh, again] = await sequentialMedians(
      [
        () => authenticator.authenticate(`Bearer ${tokens[i++ % FRESH_TOKENS]}`),
        () => authenticator.authenticate(repeated),
      ],
      300,
    )
    rows.push({ name: `JWT ${alg}, first sight (signature checked)`, avgNs: fresh })
    rows.push({ name: `JWT ${alg}, seen before (verified-token cache)`, avgNs: again })
    server.close()
  }
  for (const count of [1, 100]) {
    const entries = Array.from({ length: count }, (_, k) => ({
      sha256: createHash('sha256').update(`token-${k}`).digest('hex'),
      subject: `svc-${k}`,
    }))
    const authenticator = createAuthenticator({ tokens: entries })
    const [median] = await sequentialMedians([() => authenticator.authenticate(`Bearer token-${count - 1}`)], 3000)
    rows.push({ name: `static token, ${count} configured`, avgNs: median })
  }
  printTable('Authenticating a request of serve --http (warm JWKS cache; median of 7 rounds)', rows)
  return rows
}

if (isMain(import.meta.url)) {
  const rows = await run()
  console.log(`\nworst: ${format(Math.max(...rows.map((r) => r.avgNs)))}`)
}
