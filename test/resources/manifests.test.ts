// vitest: sqlite project only — the resources' declarations, on an in-memory SQLite whatever the run.
import { tmpdir } from 'node:os'
import Fastify from 'fastify'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { EVENT_TYPES, OPERATIONS, RESOURCES, SCOPES } from '../../src/resources/index.js'
import { defineManifest, type Operation, operation, PUBLIC } from '../../src/resources/manifest.js'
import { applyManifest, registerResources } from '../../src/resources/register.js'
import { defineResource, type Resource } from '../../src/resources/resource.js'
import { taxesManifest } from '../../src/resources/taxes/manifest.js'
import { loadConfig } from '../../src/config.js'
import { ExchangeRates } from '../../src/ledger/rates.js'
import { LivePayoutQueue } from '../../src/chains/payouts.js'
import { Receiving } from '../../src/chains/receiving.js'
import { MIGRATIONS, openDatabase } from '../../src/modules/database.js'
import { MODULES, TABLES } from '../../src/modules/index.js'
import type { TableDeclaration } from '../../src/modules/module.js'

describe('the resource manifests', () => {
  it('an operation without a scope is not an operation (the compiler refuses it)', () => {
    expectTypeOf<{ method: 'GET'; path: string; operationId: string }>().not.toMatchTypeOf<Operation>()
    expectTypeOf<{ method: 'GET'; path: string; operationId: string; scope: 'any valid key' }>().toMatchTypeOf<Operation>()
  })

  it('derive every scope, event type and operation from RESOURCES', () => {
    expect(SCOPES).toEqual(RESOURCES.flatMap((resource) => resource.manifest.scopes))
    expect(EVENT_TYPES).toEqual(RESOURCES.flatMap((resource) => resource.manifest.eventTypes))
    expect(OPERATIONS.size).toBe(RESOURCES.reduce((sum, resource) => sum + resource.manifest.operations.length, 0))
    expect(new Set(EVENT_TYPES).size).toBe(EVENT_TYPES.length)
    for (const type of EVENT_TYPES) expect(type).toMatch(/^[a-z_]+\.[a-z_.]+$/)
  })

  it('every scope is `<resource>:<action>` and belongs to one resource; every operation names a scope of its own resource', () => {
    expect(new Set(SCOPES).size).toBe(SCOPES.length)
    for (const resource of RESOURCES) {
      for (const scope of resource.manifest.scopes) expect(scope).toMatch(/^[a-z_]+:[a-z]+$/)
      for (const operation of resource.manifest.operations) {
        if (operation.scope.includes(':')) expect(resource.manifest.scopes).toContain(operation.scope)
      }
    }
  })
})

describe('the modules\' tables', () => {
  it('every table of the migrated database is declared by exactly one module, and every declared table is in it', async () => {
    const db = await openDatabase({ kind: 'sqlite', filename: ':memory:' })
    try {
      const migrated = (await db.introspection.getTables()).map((table) => table.name).sort()
      expect(TABLES.map((table) => table.name).sort()).toEqual(migrated)
      expect(new Set(TABLES.map((table) => table.name)).size).toBe(TABLES.length)
      for (const resource of RESOURCES) expect(MODULES).toContain(resource)
    } finally {
      await db.destroy()
    }
  })

  it('every declared table has a fate in an application\'s deletion, with a reason for what it does not remove', () => {
    for (const table of TABLES) {
      expect(['removed', 'kept', 'untouched'], table.name).toContain(table.appDeletion)
      if (table.appDeletion !== 'removed') expect(table.reason, table.name).not.toBe('')
    }
  })

  it('every released migration is still there, by its name (a database that applied it goes on)', () => {
    const released = ['0001_initial', '0002_webhook_deliveries', '0003_owner_tools', '0004_fair_delivery', '0005_deferred_fanout', '0006_webhook_event_counts', '0007_claim_without_statistics', '0008_webhook_event_types', '0009_ledger', '0010_money', '0011_products', '0012_key_management', '0013_transfers', '0014_test_payments', '0015_invoices', '0016_payment_links', '0017_checkout', '0018_idempotency_per_environment', '0019_hosted_payment_environment']
    expect(Object.keys(MIGRATIONS).sort().slice(0, released.length)).toEqual(released)
  })

  it('a table without app_id holds no application\'s rows to remove (the compiler refuses the declaration)', () => {
    expectTypeOf<{ name: 'exchange_rates'; appDeletion: 'removed' }>().not.toMatchTypeOf<TableDeclaration>()
    expectTypeOf<{ name: 'products'; appDeletion: 'untouched'; reason: string }>().not.toMatchTypeOf<TableDeclaration>()
    expectTypeOf<{ name: 'products'; appDeletion: 'removed' }>().toMatchTypeOf<TableDeclaration>()
  })
})

describe('registering routes against the manifests', () => {
  async function appWith(register: (app: ReturnType<typeof Fastify>) => void): Promise<void> {
    const app = Fastify({ logger: false })
    app.addHook('onRoute', applyManifest)
    try {
      await app.register(
        async (api) => {
          register(api)
        },
        { prefix: '/api/v0' },
      )
      await app.ready()
    } finally {
      await app.close()
    }
  }

  it('a route that is in no manifest stops start-up', async () => {
    await expect(appWith((api) => api.get('/not-an-operation', async () => ({})))).rejects.toThrow('route "GET /api/v0/not-an-operation" is not an operation of any resource')
  })

  it('a route registered from an operation at another method or path than its manifest gives stops start-up', async () => {
    await expect(appWith((api) => api.route({ ...operation(taxesManifest, 'taxControllerCreate'), url: '/levies', handler: async () => ({}) }))).rejects.toThrow(
      'route "POST /api/v0/levies" is registered from taxControllerCreate, which its manifest serves at "POST /api/v0/taxes"',
    )
    await expect(appWith((api) => api.route({ ...operation(taxesManifest, 'taxControllerCreate'), method: 'PUT', handler: async () => ({}) }))).rejects.toThrow(
      'route "PUT /api/v0/taxes" is registered from taxControllerCreate, which its manifest serves at "POST /api/v0/taxes"',
    )
  })

  it('a route registered from the operation of a manifest outside RESOURCES stops start-up', async () => {
    const gadgets = defineManifest({ name: 'gadgets', scopes: ['gadget:read'], eventTypes: [], operations: [{ method: 'GET', path: '/gadgets', operationId: 'gadgetControllerFindAll', scope: 'gadget:read' }] })
    await expect(appWith((api) => api.route({ ...operation(gadgets, 'gadgetControllerFindAll'), handler: async () => ({}) }))).rejects.toThrow(
      'route "GET /api/v0/gadgets" is registered from gadgetControllerFindAll, which is not an operation of any resource of RESOURCES',
    )
  })

  it('a route is registered from an operationId of its manifest (the compiler refuses another)', () => {
    type TaxOperationId = Parameters<typeof operation<(typeof taxesManifest.operations)[number]['operationId']>>[1]
    expectTypeOf<'taxControllerCreate'>().toMatchTypeOf<TaxOperationId>()
    expectTypeOf<'taxControllerTypo'>().not.toMatchTypeOf<TaxOperationId>()
    expectTypeOf<'customerControllerCreate'>().not.toMatchTypeOf<TaxOperationId>()
  })

  async function register(resource: Resource): Promise<void> {
    const app = Fastify({ logger: false })
    app.addHook('onRoute', applyManifest)
    try {
      await app.register(async (api) => registerResources(api, async (inner) => api.register(inner), PLATFORM, [resource]), { prefix: '/api/v0' })
      await app.ready()
    } finally {
      await app.close()
    }
  }
  const handler = async () => ({})

  it('a scoped operation registered among the public routes stops start-up', async () => {
    const resource = defineResource({ manifest: taxesManifest, routes: async () => undefined, publicRoutes: async (app) => void app.route({ ...operation(taxesManifest, 'taxControllerCreate'), handler }) })
    await expect(register(resource)).rejects.toThrow('route "POST /api/v0/taxes" is registered without authentication, but its manifest says tax:create')
  })

  it('a public operation registered behind authentication stops start-up', async () => {
    const resource = defineResource({ manifest: taxesManifest, routes: async (app) => void app.route({ ...operation(taxesManifest, 'taxControllerUpdateWithoutId'), handler }) })
    await expect(register(resource)).rejects.toThrow('route "PUT /api/v0/taxes" is registered with authentication, but its manifest says public')
  })

  it("a resource's plugins are given the options its configure makes from the platform, made once", async () => {
    const given: unknown[] = []
    let made = 0
    const resource = defineResource({
      manifest: taxesManifest,
      configure: ({ publicUrl }) => {
        made += 1
        return { origin: publicUrl() }
      },
      routes: async (_app, options) => void given.push(options),
      publicRoutes: async (_app, options) => void given.push(options),
    })
    await register(resource)
    expect(made).toBe(1)
    expect(given).toEqual([{ origin: 'http://127.0.0.1:3000' }, { origin: 'http://127.0.0.1:3000' }])
  })

  it('each route takes its scope and operationId from its manifest', async () => {
    const seen: { url: string; scope: unknown; operationId: unknown }[] = []
    const resource = defineResource({
      manifest: taxesManifest,
      routes: async (app) => void app.route({ ...operation(taxesManifest, 'taxControllerCreate'), handler }),
      publicRoutes: async (app) => void app.route({ ...operation(taxesManifest, 'taxControllerUpdateWithoutId'), handler }),
    })
    const app = Fastify({ logger: false })
    app.addHook('onRoute', applyManifest)
    app.addHook('onRoute', (route) => void seen.push({ url: `${String(route.method)} ${route.url}`, scope: route.config?.scope, operationId: route.schema?.operationId }))
    await app.register(async (api) => registerResources(api, async (inner) => api.register(inner), PLATFORM, [resource]), { prefix: '/api/v0' })
    await app.ready()
    await app.close()
    expect(seen).toEqual([
      { url: 'PUT /api/v0/taxes', scope: PUBLIC, operationId: 'taxControllerUpdateWithoutId' },
      { url: 'POST /api/v0/taxes', scope: 'tax:create', operationId: 'taxControllerCreate' },
    ])
  })
})

const PLATFORM = {
  config: loadConfig({ NODE_ENV: 'test', PRODUCT_IMAGES_DIR: tmpdir() }),
  exchangeRates: new ExchangeRates({ maxAgeMs: 60_000 }),
  publicUrl: () => 'http://127.0.0.1:3000',
  redisState: async () => 'not configured' as const,
  urlAddressProblem: undefined,
  receiving: new Receiving(undefined),
  payouts: new LivePayoutQueue(undefined),
}
