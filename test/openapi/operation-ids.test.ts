// vitest: sqlite project only — the served document is built from the schemas, whatever the backend.
import Fastify from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openapiPlugin } from '../../src/http/openapi.js'
import { healthManifest } from '../../src/resources/health/manifest.js'
import { OPERATIONS } from '../../src/resources/index.js'
import { operation } from '../../src/resources/manifest.js'
import { applyManifest } from '../../src/resources/register.js'
import { startTestServer, type TestServer } from '../helper.js'

/** platform-context.md, "Operation names in the published client", and platform-money.md part 4: copied, so a drift in the map fails here. */
const PUBLISHED_CLIENT_NAMES: Record<string, string> = {
  'GET /api/v0/health/public': 'healthControllerPublicHealthCheckV0',
  'GET /api/v0/health': 'healthControllerCheckV0',
  'POST /api/v0/webhooks': 'webhookControllerCreate',
  'GET /api/v0/webhooks': 'webhookControllerFindAll',
  'GET /api/v0/webhooks/{id}': 'webhookControllerFindOne',
  'PATCH /api/v0/webhooks/{id}': 'webhookControllerUpdate',
  'DELETE /api/v0/webhooks/{id}': 'webhookControllerRemove',
  'POST /api/v0/customers': 'customerControllerCreate',
  'GET /api/v0/customers': 'customerControllerFindAll',
  'GET /api/v0/customers/{id}': 'customerControllerFindOne',
  'PATCH /api/v0/customers/{id}': 'customerControllerUpdate',
  'POST /api/v0/customers/{customerId}/liquidation_addresses': 'liquidationAddressControllerCreateLiquidationAddress',
  'GET /api/v0/customers/{customerId}/liquidation_addresses': 'liquidationAddressControllerGetLiquidationAddresses',
  'GET /api/v0/customers/{customerId}/liquidation_addresses/{liquidationAddressId}': 'liquidationAddressControllerGetLiquidationAddress',
  'POST /api/v0/taxes': 'taxControllerCreate',
  'GET /api/v0/taxes': 'taxControllerFindAll',
  'GET /api/v0/taxes/{id}': 'taxControllerFindOne',
  'PUT /api/v0/taxes/{id}': 'taxControllerUpdate',
  'DELETE /api/v0/taxes/{id}': 'taxControllerRemove',
  'PUT /api/v0/taxes': 'taxControllerUpdateWithoutId',
  'DELETE /api/v0/taxes': 'taxControllerDeleteWithoutId',
  'POST /api/v0/products': 'productControllerCreate',
  'GET /api/v0/products': 'productControllerFindAll',
  'GET /api/v0/products/{id}': 'productControllerFindOne',
  'PUT /api/v0/products/{id}': 'productControllerUpdate',
  'DELETE /api/v0/products/{id}': 'productControllerRemove',
  'POST /api/v0/products/{id}/images': 'productControllerUploadImage',
  'POST /api/v0/invoices': 'invoiceControllerCreate',
  'GET /api/v0/invoices': 'invoiceControllerFindAll',
  'GET /api/v0/invoices/{id}': 'invoiceControllerFindOne',
  'PUT /api/v0/invoices/{id}': 'invoiceControllerUpdate',
  'GET /api/v0/wallets': 'walletControllerGetWallets',
  'GET /api/v0/balance': 'balanceControllerGetAllBalances',
  'GET /api/v0/balance/usdc': 'balanceControllerGetUSDCBalance',
  'GET /api/v0/balance/eurc': 'balanceControllerGetEURCBalance',
  'GET /api/v0/exchange-rate': 'exchangeRateControllerGetExchangeRate',
  'GET /api/v0/exchange-rate/eur-to-usd': 'exchangeRateControllerGetEURToUSDRate',
  'GET /api/v0/exchange-rate/usd-to-eur': 'exchangeRateControllerGetUSDToEURRate',
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { operationId?: string }>>
}

/** "METHOD /path" → operationId (undefined when missing), for every operation in the document. */
function operationsOf(document: OpenApiDocument): Map<string, string | undefined> {
  const operations = new Map<string, string | undefined>()
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) operations.set(`${method.toUpperCase()} ${path}`, operation.operationId)
  }
  return operations
}

describe('operationIds in the served document', () => {
  let server: TestServer
  let operations: Map<string, string | undefined>
  beforeAll(async () => {
    server = await startTestServer()
    const res = await server.request<OpenApiDocument>('GET', '/api/v0/openapi.json')
    expect(res.status).toBe(200)
    operations = operationsOf(res.body)
  })
  afterAll(async () => server.close())

  it('names each operation of the published client exactly as it does', () => {
    for (const [operation, operationId] of Object.entries(PUBLISHED_CLIENT_NAMES)) {
      expect({ operation, operationId: operations.get(operation) }).toEqual({ operation, operationId })
    }
  })

  it('names every operation, each with its own name', () => {
    const unnamed = [...operations].filter(([, operationId]) => operationId === undefined).map(([operation]) => operation)
    expect(unnamed).toEqual([])
    const names = [...operations.values()]
    expect(new Set(names).size).toBe(names.length)
  })

  it('the manifests give no two operations the same name', () => {
    const names = [...OPERATIONS.values()].map((operation) => operation.operationId)
    expect(new Set(names).size).toBe(names.length)
  })
})

describe('a route the document shows must be an operation of a manifest', () => {
  it('stops the app from building, naming the route and where to name it', async () => {
    const app = Fastify({ logger: false })
    app.addHook('onRoute', applyManifest)
    await app.register(openapiPlugin)
    const build = async () => {
      await app.register(
        async (api) => {
          api.get('/unnamed', { schema: { tags: ['webhooks'] } }, async () => ({}))
        },
        { prefix: '/api/v0' },
      )
      await app.ready()
    }
    await expect(build()).rejects.toThrow(
      'route "GET /api/v0/unnamed" is not an operation of any resource: add it to its resource\'s manifest.ts (src/resources/<name>/)',
    )
    await app.close()
  })

  it('refuses an operationId set on the route instead of in the manifest', async () => {
    const app = Fastify({ logger: false })
    app.addHook('onRoute', applyManifest)
    await app.register(openapiPlugin)
    const build = async () => {
      await app.register(
        async (api) => {
          api.route({ ...operation(healthManifest, 'healthControllerPublicHealthCheckV0'), schema: { operationId: 'publicHealth' }, handler: async () => ({}) })
        },
        { prefix: '/api/v0' },
      )
      await app.ready()
    }
    await expect(build()).rejects.toThrow('sets its own operationId "publicHealth"')
    await app.close()
  })

  it('hidden routes need no name, and the document leaves them out', async () => {
    const app = Fastify({ logger: false })
    app.addHook('onRoute', applyManifest)
    await app.register(openapiPlugin)
    app.get('/api/v0/internal', { schema: { hide: true } }, async () => ({}))
    await app.register(async (api) => void api.route({ ...operation(healthManifest, 'healthControllerPublicHealthCheckV0'), handler: async () => ({ status: 'ok' }) }), { prefix: '/api/v0' })
    await app.ready()
    const document = app.swagger() as unknown as OpenApiDocument
    expect(Object.fromEntries(operationsOf(document))).toEqual({ 'GET /api/v0/health/public': 'healthControllerPublicHealthCheckV0' })
    await app.close()
  })
})
