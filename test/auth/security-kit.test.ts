import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OPERATIONS, RESOURCES, SCOPES } from '../../src/resources/index.js'
import { PUBLIC } from '../../src/resources/manifest.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Fixtures, type KitCase, kitCases, type Tenancy, loadSecurityKits, makeFixtures } from './security-kit.js'

/**
 * One security kit, run against every authenticated operation of the manifests: no headers, wrong
 * secret, unknown key, inactive key, missing scope, and another application's resource answering
 * exactly like a missing one (404). The cases are derived from RESOURCES (./security-kit.ts); what
 * a manifest cannot say, each resource declares in test/resources/<name>/security-kit.ts.
 */
const KITS = await loadSecurityKits(RESOURCES)
const CASES = kitCases(RESOURCES, KITS)

let server: TestServer
let owner: TestKey
let other: TestKey
let inactive: TestKey
let fixtures: Fixtures

const createResources = (key: TestKey) => makeFixtures(server, KITS, key)

beforeAll(async () => {
  // No drain scheduler: a fixture drain moving on would emit events that change a webhook read back between its two reads.
  server = await startTestServer({ config: { drains: { scheduler: false, fastDelayMs: 1_000, achDelayMs: 3_000, pollIntervalMs: 250, concurrency: 4 } } })
  owner = await server.createKey()
  other = await server.createKey()
  inactive = await server.createKey({ appId: owner.appId })
  await server.deactivate(inactive)
  fixtures = await createResources(owner)
})
afterAll(async () => server.close())

const SCOPED_CASES = CASES.filter((kitCase) => kitCase.scope !== undefined)
const TENANT_CASES = CASES.filter((kitCase): kitCase is KitCase & { tenancy: Tenancy } => kitCase.tenancy !== undefined)

function send(kitCase: KitCase, resources: Fixtures, key: TestKey | null, headers?: Record<string, string>) {
  return server.request(kitCase.operation.method, kitCase.path(resources), {
    key,
    ...(kitCase.body ? { body: kitCase.body(resources) } : {}),
    ...(headers || kitCase.headers ? { headers: { ...kitCase.headers?.(), ...headers } } : {}),
  })
}

describe.each(CASES)('$name', (kitCase) => {
  it('401 without credentials', async () => {
    const partial: Record<string, string>[] = [{}, { 'x-client-key': owner.clientKey }, { 'x-client-secret': owner.clientSecret }]
    for (const headers of partial) {
      const res = await send(kitCase, fixtures, null, headers)
      expect(res.status).toBe(401)
      expect(res.body).toEqual({
        statusCode: 401,
        error: 'Unauthorized',
        message: 'Client key or secret missing',
        details: expect.stringContaining('x-client-key and x-client-secret'),
      })
      expect(res.headers.get('ratelimit')).toBeNull()
    }
  })

  it('401 with a wrong secret or an unknown key, one body for both', async () => {
    const wrongSecret = await send(kitCase, fixtures, null, { 'x-client-key': owner.clientKey, 'x-client-secret': `${owner.clientSecret}x` })
    const unknownKey = await send(kitCase, fixtures, null, { 'x-client-key': 'pk_live_unknown', 'x-client-secret': owner.clientSecret })
    const otherAppsSecret = await send(kitCase, fixtures, null, { 'x-client-key': owner.clientKey, 'x-client-secret': other.clientSecret })
    for (const res of [wrongSecret, unknownKey, otherAppsSecret]) {
      expect(res.status).toBe(401)
      expect(res.body).toEqual({
        statusCode: 401,
        error: 'Unauthorized',
        message: 'Invalid client app credentials',
        details: 'The client key or client secret is invalid',
      })
    }
  })

  it('403 for a deactivated key', async () => {
    const res = await send(kitCase, fixtures, inactive)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'API key is inactive', details: 'This API key has been deactivated' })
  })
})

describe.each(SCOPED_CASES)('$name scope', (kitCase) => {
  it('403 naming the scope when the key lacks it; the scope alone is enough', async () => {
    const scope = kitCase.scope ?? ''
    const without = await server.createKey({ appId: owner.appId, scopes: SCOPES.filter((s) => s !== scope), environment: kitCase.environment })
    const res = await send(kitCase, fixtures, without)
    expect(res.status).toBe(403)
    expect(res.body).toEqual({ statusCode: 403, error: 'Forbidden', message: 'Missing required scope', details: `This API key lacks the required scope: ${scope}` })
    // Fresh resources, so a write here never disturbs the other cases.
    const only = await server.createKey({ appId: owner.appId, scopes: [scope], environment: kitCase.environment })
    const allowed = await send(kitCase, await createResources(owner), only)
    expect(allowed.status).toBeGreaterThanOrEqual(200)
    expect(allowed.status).toBeLessThan(300)
  })
})

describe.each(TENANT_CASES)('$name tenancy', (kitCase) => {
  it("answers another application's resource exactly like a missing one, and changes nothing", async () => {
    const resources = await createResources(owner)
    const { notFound, readBack } = kitCase.tenancy
    const reader = readBack.environment === 'development' ? await server.createKey({ appId: owner.appId, environment: 'development' }) : owner
    const before = await send(readBack, resources, reader)
    expect(before.status).toBe(200)
    // Another application's key of the environment the operation serves: only the application differs.
    const stranger = kitCase.environment === 'development' ? await server.createKey({ appId: other.appId, environment: 'development' }) : other
    const res = await send(kitCase, resources, stranger)
    expect(res.status).toBe(404)
    expect(res.body).toEqual({ statusCode: 404, error: 'Not Found', message: notFound })
    const after = await send(readBack, resources, reader)
    expect(after.body).toEqual(before.body)
  })
})

describe('the kit covers every authenticated operation', () => {
  const authenticated = [...OPERATIONS.values()].filter((operation) => operation.scope !== PUBLIC).map((operation) => operation.operationId)

  it('each operation of the manifests that is not public has a case, and each case an operation', () => {
    expect(CASES.map((kitCase) => kitCase.operation.operationId).sort()).toEqual([...authenticated].sort())
    const declared = KITS.flatMap((kit) => Object.keys(kit.operations ?? {}))
    expect(declared.filter((operationId) => !authenticated.includes(operationId))).toEqual([])
  })

  it("each operation with a path parameter has another application's case", () => {
    const withParameter = CASES.filter((kitCase) => kitCase.operation.path.includes(':'))
    expect(withParameter.filter((kitCase) => kitCase.tenancy === undefined).map((kitCase) => kitCase.operation.operationId)).toEqual([])
  })

  it('each operation of the served document that asks for credentials is in the kit', async () => {
    const res = await server.request<{ paths: Record<string, Record<string, { operationId: string; security?: unknown[] }>> }>('GET', '/api/v0/openapi.json')
    const inDocument = Object.values(res.body.paths)
      .flatMap((methods) => Object.values(methods))
      .filter((operation) => operation.security === undefined || operation.security.length > 0)
      .map((operation) => operation.operationId)
    expect(inDocument.sort()).toEqual(CASES.map((kitCase) => kitCase.operation.operationId).sort())
  })
})
