import { expect } from 'vitest'
import type { Environment } from '../../src/keys/credentials.js'
import { ANY_VALID_KEY, type Manifest, type Operation, PUBLIC } from '../../src/resources/manifest.js'
import type { Resource } from '../../src/resources/resource.js'
import type { TestKey, TestServer } from '../helper.js'
import { resourceFile } from '../helpers/resource-files.js'

/**
 * The security kit's cases (test/auth/security-kit.test.ts), derived from the manifests: every
 * operation that is not PUBLIC is called, its method, path and scope taken from its manifest. What
 * a manifest cannot say (the resources to call, a valid body, another application's 404) a
 * resource declares in `test/resources/<name>/security-kit.ts`, exporting `securityKit` made by
 * `defineSecurityKit`; a resource whose operations need none of that has no such file.
 */

/** The ids of one application's resources, by name ('customer', 'liquidationAddress'): each resource's kit adds its own. */
export class Fixtures {
  constructor(private readonly ids: ReadonlyMap<string, string>) {}

  id(name: string): string {
    const id = this.ids.get(name)
    if (id === undefined) throw new Error(`no fixture "${name}": a resource's test/resources/<name>/security-kit.ts makes it in its fixtures`)
    return id
  }
}

/** What a resource's fixtures are made with. */
export interface FixtureContext {
  server: TestServer
  /** the application's production key, every scope */
  key: TestKey
  /** a development key of the same application, for sandbox money */
  sandboxKey: TestKey
  /** what the resources before this one in RESOURCES made */
  made: Fixtures
}

/** What an operation's manifest does not say about calling it successfully. */
export interface OperationCase {
  /** the query string it needs */
  query?: Readonly<Record<string, string>>
  body?: (fixtures: Fixtures) => unknown
  /** headers it needs (a body that is not JSON says its Content-Type) */
  headers?: () => Record<string, string>
  /** the environment of the keys that may call it; the resource's otherwise */
  environment?: Environment
  /**
   * Called by another application: 404 with `notFound`, as for a missing resource, and the
   * resource read back unchanged by the owner through the operation `readBack` (an operationId of
   * any resource, called as its own case would call it). Required of an operation with a path parameter.
   */
  tenancy?: { notFound: string; readBack: string }
}

/** What a resource declares for the security kit. */
export interface SecurityKit<OperationId extends string = string> {
  manifest: Manifest<string, OperationId>
  /** makes one application's resources of this kind, returning their ids by fixture name (one set per call) */
  fixtures?: (context: FixtureContext) => Promise<Readonly<Record<string, string>>>
  /** each path parameter of its operations (`:id`), by the fixture whose id it takes */
  params?: Readonly<Record<string, string>>
  /** the environment of the keys that may call its operations; production otherwise */
  environment?: Environment
  operations?: { readonly [Id in OperationId]?: OperationCase }
}

/** A resource's kit, its operations' cases checked against its manifest's operationIds. */
export function defineSecurityKit<OperationId extends string>(manifest: Manifest<string, OperationId>, kit: Omit<SecurityKit<NoInfer<OperationId>>, 'manifest'>): SecurityKit<OperationId> {
  return { manifest, ...kit }
}

/** One authenticated operation as the kit calls it. */
export interface KitCase {
  /** "GET /webhooks/:id", the test's name */
  name: string
  operation: Operation
  /** the scope the key needs; undefined for an operation any valid key may call */
  scope: string | undefined
  environment: Environment
  path: (fixtures: Fixtures) => string
  body?: (fixtures: Fixtures) => unknown
  /** headers the operation needs besides the key's (a fresh Idempotency-Key where its manifest requires one) */
  headers?: () => Record<string, string>
  tenancy?: Tenancy
}

/** Another application's call: 404 with `notFound`, and `readBack` by the owner unchanged. */
export interface Tenancy {
  notFound: string
  readBack: KitCase
}

/** `test/resources/<name>/security-kit.ts` of each resource that has one, in RESOURCES' order. */
export async function loadSecurityKits(resources: readonly Resource[]): Promise<SecurityKit[]> {
  const kits: SecurityKit[] = []
  for (const resource of resources) {
    const file = resourceFile(resource, 'security-kit.ts')
    if (file === undefined) continue
    const module: { securityKit?: SecurityKit } = await import(file)
    if (module.securityKit?.manifest !== resource.manifest) throw new Error(`${file} must export securityKit, defined with ${resource.manifest.name}'s manifest`)
    kits.push(module.securityKit)
  }
  return kits
}

const idempotencyKey = () => ({ 'idempotency-key': crypto.randomUUID() })

/** Every operation of the manifests that is not PUBLIC, as the kit calls it. */
export function kitCases(resources: readonly Resource[], kits: readonly SecurityKit[]): KitCase[] {
  const kitOf = new Map(kits.map((kit) => [kit.manifest.name, kit]))
  const declared = new Map<string, { kit: SecurityKit | undefined; call: OperationCase }>()
  for (const resource of resources) {
    const kit = kitOf.get(resource.manifest.name)
    for (const operation of resource.manifest.operations) declared.set(operation.operationId, { kit, call: kit?.operations?.[operation.operationId] ?? {} })
  }
  const cases = new Map<string, KitCase>()
  const caseOf = (operation: Operation): KitCase => {
    const existing = cases.get(operation.operationId)
    if (existing !== undefined) return existing
    const { kit, call } = declared.get(operation.operationId) ?? { kit: undefined, call: {} }
    const query = call.query === undefined ? '' : `?${new URLSearchParams(call.query).toString()}`
    const made: KitCase = {
      name: `${operation.method} ${operation.path}`,
      operation,
      scope: operation.scope === ANY_VALID_KEY ? undefined : operation.scope,
      environment: call.environment ?? kit?.environment ?? 'production',
      path: (fixtures) => `/api/v0${pathWith(operation, kit?.params ?? {}, fixtures)}${query}`,
      ...(call.body ? { body: call.body } : {}),
      ...(operation.idempotencyKey === 'required' || call.headers !== undefined ? { headers: () => ({ ...(operation.idempotencyKey === 'required' ? idempotencyKey() : {}), ...call.headers?.() }) } : {}),
    }
    cases.set(operation.operationId, made)
    if (call.tenancy !== undefined) {
      const readBack = operationNamed(resources, call.tenancy.readBack)
      if (readBack === undefined) throw new Error(`${operation.operationId}'s tenancy reads back with ${call.tenancy.readBack}, which no manifest has`)
      made.tenancy = { notFound: call.tenancy.notFound, readBack: caseOf(readBack) }
    }
    return made
  }
  return resources.flatMap((resource) => resource.manifest.operations.filter((operation) => operation.scope !== PUBLIC).map(caseOf))
}

function operationNamed(resources: readonly Resource[], operationId: string): Operation | undefined {
  return resources.flatMap((resource) => resource.manifest.operations).find((operation) => operation.operationId === operationId)
}

/** The operation's path under /api/v0, each `:param` the id of the fixture `params` names for it. */
function pathWith(operation: Operation, params: Readonly<Record<string, string>>, fixtures: Fixtures): string {
  return operation.path.replace(/:(\w+)/g, (_, param: string) => {
    const fixture = params[param]
    if (fixture === undefined) throw new Error(`${operation.operationId}: no fixture for :${param}; its resource's security-kit.ts names one in params`)
    return fixtures.id(fixture)
  })
}

/** One application's resources, every kit's fixtures in RESOURCES' order, for the key's application. */
export async function makeFixtures(server: TestServer, kits: readonly SecurityKit[], key: TestKey): Promise<Fixtures> {
  const sandboxKey = await server.createKey({ appId: key.appId, environment: 'development' })
  const ids = new Map<string, string>()
  for (const kit of kits) {
    if (kit.fixtures === undefined) continue
    for (const [name, id] of Object.entries(await kit.fixtures({ server, key, sandboxKey, made: new Fixtures(ids) }))) ids.set(name, id)
  }
  return new Fixtures(ids)
}

/** Creates a resource with a plain request (201 expected), returning its id. */
export async function created(server: TestServer, key: TestKey, path: string, body: unknown, headers?: Record<string, string>): Promise<string> {
  const res = await server.request<{ id: string }>('POST', path, { key, body, ...(headers ? { headers } : {}) })
  expect(res.status).toBe(201)
  return res.body.id
}
