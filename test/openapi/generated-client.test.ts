import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createClient as generateClient } from '@hey-api/openapi-ts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { saveRates } from '../../src/ledger/rates.js'
import { VERSION } from '../../src/version.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { type Receiver, startReceiver } from '../receiver.js'

/**
 * A TypeScript client is generated from the document the server serves (@hey-api/openapi-ts, its
 * fetch client, dates parsed into Date objects), then every operation is driven through it against
 * the real server. Its function names are the document's operationIds, so a name that drifts from
 * the published client's fails here. One `it` per operation: a new route is one more block, and the
 * last test fails until every operation in the document has one.
 */

/** What the tests pass to a generated SDK function (hey-api's per-call options). */
interface CallOptions {
  client?: GeneratedClient
  path?: Record<string, string>
  query?: Record<string, string | number | boolean>
  body?: unknown
  /** null removes a header the SDK would send (a multipart body's Content-Type is fetch's, with its boundary) */
  headers?: Record<string, string | null>
  /** how the body is encoded, when not as the SDK's first media type (the products' forms) */
  bodySerializer?: (body: unknown) => unknown
}

/** What a generated SDK function resolves to (hey-api's default "fields" response style). */
interface CallResult {
  /** the parsed success body (after the response transformer: date-times are Dates) */
  data?: unknown
  /** the parsed error body */
  error?: unknown
  response: Response
}

type SdkFunction = (options: CallOptions) => Promise<CallResult>

interface GeneratedClient {
  setConfig(config: { baseUrl: string; headers?: Record<string, string> }): unknown
}

interface GeneratedClientModule {
  createClient(config: unknown): GeneratedClient
  createConfig(config: { baseUrl: string; headers?: Record<string, string> }): unknown
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { operationId?: string }>>
}

interface Fixture {
  id: string
}

const TSCONFIG = fileURLToPath(new URL('../../tsconfig.json', import.meta.url))
/** where this server stores product images */
const PRODUCT_IMAGES = join(tmpdir(), `devplatform-client-images-${process.pid}`)
const A_VALID_DATE = expect.toSatisfy((value: unknown) => value instanceof Date && !Number.isNaN(value.getTime()), 'a valid Date')
const A_UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)

let server: TestServer
let key: TestKey
/** where every webhook here points, so the dispatcher's deliveries end (and can be retried) */
let receiver: Receiver
let directory: string
let sdk: Record<string, unknown>
/** a second client of the same generated code, configured with no key */
let anonymous: GeneratedClient
let documentOperationIds: string[]
const driven = new Set<string>()

/** Calls the generated SDK function named operationId (through the client configured with the key, unless options.client). */
async function call(operationId: string, options: CallOptions = {}): Promise<CallResult> {
  const operation = sdk[operationId]
  if (typeof operation !== 'function') throw new Error(`the generated client has no function ${operationId}`)
  driven.add(operationId)
  return (operation as SdkFunction)(options)
}

/** Fixtures are made with plain HTTP, so each block drives only its own operation through the client. */
async function created(path: string, body: Record<string, unknown>): Promise<Fixture> {
  const res = await server.request<Fixture>('POST', path, { key, body })
  expect(res.status).toBe(201)
  return res.body
}

const newWebhook = (body: Record<string, unknown> = {}) => created('/api/v0/webhooks', { name: 'orders', url: receiver.url('/hooks'), ...body })
const newCustomer = () =>
  created('/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100', email: `${crypto.randomUUID()}@example.com` })
const newTax = () => created('/api/v0/taxes', { name: `VAT ${crypto.randomUUID()}`, percentage: 20 })
const newLiquidationAddress = (customerId: string) =>
  created(`/api/v0/customers/${customerId}/liquidation_addresses`, {
    chain: 'ethereum',
    currency: 'usdc',
    address: randomEvmAddress(),
    external_account_id: 'ext_acct_1',
  })

const WEBHOOK_SHAPE = {
  id: A_UUID,
  name: expect.any(String),
  url: expect.any(String),
  isActive: expect.any(Boolean),
  encrypted: expect.any(Boolean),
  created_at: A_VALID_DATE,
  updated_at: A_VALID_DATE,
  delivery_stats: expect.objectContaining({ total_events: expect.any(Number), successful_deliveries: expect.any(Number), failed_deliveries: expect.any(Number) }),
}
const CUSTOMER_SHAPE = { id: A_UUID, first_name: expect.any(String), status: expect.any(String), created_at: A_VALID_DATE, updated_at: A_VALID_DATE }
const TAX_SHAPE = { id: A_UUID, name: expect.any(String), percentage: expect.any(Number), active: expect.any(Boolean), created_at: A_VALID_DATE, updated_at: A_VALID_DATE }
const DELIVERY_SHAPE = {
  id: A_UUID,
  event: { id: A_UUID, type: 'webhook.test', created_at: A_VALID_DATE },
  status: expect.any(String),
  attempts: expect.any(Number),
  created_at: A_VALID_DATE,
  updated_at: A_VALID_DATE,
  attempt_log: expect.any(Array),
}
const LIQUIDATION_ADDRESS_SHAPE = { id: A_UUID, state: 'active', chain: 'ethereum', currency: 'usdc', created_at: A_VALID_DATE, updated_at: A_VALID_DATE }

/** A webhook.test delivery to a new webhook, once it has ended (the receiver answers 200). */
async function deliveredTest(): Promise<{ webhookId: string; deliveryId: string }> {
  const webhook = await newWebhook()
  const sent = await server.request<Fixture>('POST', `/api/v0/webhooks/${webhook.id}/test`, { key })
  expect(sent.status).toBe(202)
  const deadline = Date.now() + 10_000
  for (;;) {
    const res = await server.request<{ status: string }>('GET', `/api/v0/webhooks/${webhook.id}/deliveries/${sent.body.id}`, { key })
    if (res.body.status === 'succeeded') return { webhookId: webhook.id, deliveryId: sent.body.id }
    if (Date.now() > deadline) throw new Error(`delivery ${sent.body.id} still ${res.body.status} after 10 s`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

beforeAll(async () => {
  receiver = await startReceiver()
  // The dispatcher on, so deliveries end and the delivery routes have something to show and retry.
  server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 1000, pollIntervalMs: 20 }, config: { productImagesDir: PRODUCT_IMAGES } })
  key = await server.createKey()
  directory = await mkdtemp(join(tmpdir(), 'devplatform-client-'))
  await generateClient({
    input: `${server.baseUrl}/api/v0/openapi.json`,
    output: { path: directory, tsConfigPath: TSCONFIG },
    logs: { level: 'silent', file: false },
    // Method names exactly as the operationIds (its default camelCases balanceControllerGetUSDCBalance to …Usdc…).
    plugins: ['@hey-api/client-fetch', { name: '@hey-api/sdk', transformer: true, operations: { methodName: { casing: 'preserve' } } }, { name: '@hey-api/transformers', dates: true }],
  })
  sdk = (await import(join(directory, 'sdk.gen.ts'))) as Record<string, unknown>
  // As a user would: the generated client's own configuration carries the base URL and the key headers.
  const { client } = (await import(join(directory, 'client.gen.ts'))) as { client: GeneratedClient }
  client.setConfig({ baseUrl: server.baseUrl, headers: key.headers })
  const clientModule = (await import(join(directory, 'client', 'index.ts'))) as GeneratedClientModule
  anonymous = clientModule.createClient(clientModule.createConfig({ baseUrl: server.baseUrl }))

  const document = (await server.request<OpenApiDocument>('GET', '/api/v0/openapi.json')).body
  documentOperationIds = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId ?? '(unnamed)'))
})

afterAll(async () => {
  await server.close()
  await receiver.close()
  await rm(directory, { recursive: true, force: true })
  await rm(PRODUCT_IMAGES, { recursive: true, force: true })
})

describe('health', () => {
  it('healthControllerPublicHealthCheckV0: GET /health/public, without a key', async () => {
    const { data, response } = await call('healthControllerPublicHealthCheckV0', { client: anonymous })
    expect(response.status).toBe(200)
    expect(data).toEqual({ status: 'ok', timestamp: A_VALID_DATE, version: VERSION })
  })

  it('healthControllerCheckV0: GET /health', async () => {
    const { data, response } = await call('healthControllerCheckV0')
    expect(response.status).toBe(200)
    expect(data).toEqual({
      status: 'ok',
      timestamp: A_VALID_DATE,
      version: VERSION,
      database: 'connected',
      message: 'Service is up and running',
      authenticated: true,
    })
  })
})

describe('webhooks', () => {
  it('webhookControllerCreate: POST /webhooks', async () => {
    const { data, response } = await call('webhookControllerCreate', { body: { name: 'orders', url: receiver.url('/created'), isActive: true, encrypted: false } })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...WEBHOOK_SHAPE, name: 'orders', url: receiver.url('/created'), isActive: true, encrypted: false })
  })

  it('webhookControllerFindAll: GET /webhooks', async () => {
    const webhook = await newWebhook()
    const { data, response } = await call('webhookControllerFindAll', { query: { skip: 0, take: 100 } })
    expect(response.status).toBe(200)
    expect(data).toEqual(expect.arrayContaining([expect.objectContaining({ ...WEBHOOK_SHAPE, id: webhook.id })]))
  })

  it('webhookControllerFindOne: GET /webhooks/{id}', async () => {
    const webhook = await newWebhook()
    const { data, response } = await call('webhookControllerFindOne', { path: { id: webhook.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...WEBHOOK_SHAPE, id: webhook.id })
  })

  it('webhookControllerUpdate: PATCH /webhooks/{id}', async () => {
    const webhook = await newWebhook()
    const { data, response } = await call('webhookControllerUpdate', { path: { id: webhook.id }, body: { name: 'renamed', isActive: false } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...WEBHOOK_SHAPE, id: webhook.id, name: 'renamed', isActive: false })
  })

  it('webhookControllerRemove: DELETE /webhooks/{id}, then it is gone (the error body as the client parses it)', async () => {
    const webhook = await newWebhook()
    const removed = await call('webhookControllerRemove', { path: { id: webhook.id } })
    expect(removed.response.status).toBe(200)
    expect(removed.data).toMatchObject({ ...WEBHOOK_SHAPE, id: webhook.id })
    const { data, error, response } = await call('webhookControllerFindOne', { path: { id: webhook.id } })
    expect(response.status).toBe(404)
    expect(data).toBeUndefined()
    expect(error).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
  })

  it('webhookControllerGetSecret: GET /webhooks/{id}/secret', async () => {
    const signingSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
    const webhook = await newWebhook({ signing_secret: signingSecret })
    const { data, response } = await call('webhookControllerGetSecret', { path: { id: webhook.id } })
    expect(response.status).toBe(200)
    expect(data).toEqual({ signing_secret: signingSecret })
  })

  it('webhookControllerRotateSecret: POST /webhooks/{id}/secret/rotate, without a body (a new secret is generated)', async () => {
    const webhook = await newWebhook()
    const { data, response } = await call('webhookControllerRotateSecret', { path: { id: webhook.id } })
    expect(response.status).toBe(200)
    expect(data).toEqual({ signing_secret: expect.stringMatching(/^whsec_/) })
    const current = await server.request<{ signing_secret: string }>('GET', `/api/v0/webhooks/${webhook.id}/secret`, { key })
    expect(current.body).toEqual(data)
  })

  it('webhookControllerSendTest: POST /webhooks/{id}/test', async () => {
    const webhook = await newWebhook()
    const { data, response } = await call('webhookControllerSendTest', { path: { id: webhook.id } })
    expect(response.status).toBe(202)
    expect(data).toMatchObject({ ...DELIVERY_SHAPE, webhook_id: webhook.id })
  })

  it('webhookControllerFindDeliveries: GET /webhooks/{id}/deliveries', async () => {
    const { webhookId, deliveryId } = await deliveredTest()
    const { data, response } = await call('webhookControllerFindDeliveries', { path: { id: webhookId }, query: { status: 'succeeded', skip: 0, take: 100 } })
    expect(response.status).toBe(200)
    expect(data).toEqual(expect.arrayContaining([expect.objectContaining({ ...DELIVERY_SHAPE, id: deliveryId, status: 'succeeded' })]))
  })

  it('webhookControllerFindDelivery: GET /webhooks/{id}/deliveries/{deliveryId}', async () => {
    const { webhookId, deliveryId } = await deliveredTest()
    const { data, response } = await call('webhookControllerFindDelivery', { path: { id: webhookId, deliveryId } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({
      ...DELIVERY_SHAPE,
      id: deliveryId,
      webhook_id: webhookId,
      status: 'succeeded',
      attempts: 1,
      next_attempt_at: null,
      attempt_log: [{ attempt: 1, started_at: A_VALID_DATE, outcome: 'succeeded', status_code: 200 }],
    })
  })

  it('webhookControllerRetryDelivery: POST /webhooks/{id}/deliveries/{deliveryId}/retry', async () => {
    const { webhookId, deliveryId } = await deliveredTest()
    const { data, response } = await call('webhookControllerRetryDelivery', { path: { id: webhookId, deliveryId } })
    expect(response.status).toBe(202)
    expect(data).toMatchObject({ ...DELIVERY_SHAPE, id: deliveryId, webhook_id: webhookId })
  })

  it('without the key headers in the configuration: 401', async () => {
    const { error, response } = await call('webhookControllerFindAll', { client: anonymous })
    expect(response.status).toBe(401)
    expect(error).toMatchObject({ statusCode: 401, error: 'Unauthorized' })
  })
})

describe('customers', () => {
  it('customerControllerCreate: POST /customers (null for an optional field, as the published client sends it)', async () => {
    const email = `${crypto.randomUUID()}@example.com`
    const { data, response } = await call('customerControllerCreate', {
      body: { first_name: 'Grace', last_name: 'Hopper', phone_number: '+15550101', email, customer_type: null },
    })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...CUSTOMER_SHAPE, first_name: 'Grace', email, customer_type: null, status: 'ACTIVE' })
  })

  it('customerControllerFindAll: GET /customers', async () => {
    const customer = await newCustomer()
    const email = (await server.request<{ email: string }>('GET', `/api/v0/customers/${customer.id}`, { key })).body.email
    const { data, response } = await call('customerControllerFindAll', { query: { email } })
    expect(response.status).toBe(200)
    expect(data).toEqual({ data: [expect.objectContaining({ ...CUSTOMER_SHAPE, id: customer.id })], total: 1, skip: 0, take: 10 })
  })

  it('customerControllerFindOne: GET /customers/{id}', async () => {
    const customer = await newCustomer()
    const { data, response } = await call('customerControllerFindOne', { path: { id: customer.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...CUSTOMER_SHAPE, id: customer.id })
  })

  it('customerControllerUpdate: PATCH /customers/{id}', async () => {
    const customer = await newCustomer()
    const { data, response } = await call('customerControllerUpdate', { path: { id: customer.id }, body: { last_name: 'Byron', status: 'DEACTIVATED' } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...CUSTOMER_SHAPE, id: customer.id, last_name: 'Byron', status: 'DEACTIVATED' })
  })
})

describe('liquidation addresses', () => {
  it('liquidationAddressControllerCreateLiquidationAddress: POST /customers/{customerId}/liquidation_addresses', async () => {
    const customer = await newCustomer()
    const address = randomEvmAddress()
    const { data, response } = await call('liquidationAddressControllerCreateLiquidationAddress', {
      path: { customerId: customer.id },
      body: { chain: 'ethereum', currency: 'usdc', address, external_account_id: 'ext_acct_1', destination_payment_rail: 'ach' },
    })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...LIQUIDATION_ADDRESS_SHAPE, customer_id: customer.id, address, external_account_id: 'ext_acct_1' })
  })

  it('liquidationAddressControllerGetLiquidationAddresses: GET /customers/{customerId}/liquidation_addresses', async () => {
    const customer = await newCustomer()
    const address = await newLiquidationAddress(customer.id)
    const { data, response } = await call('liquidationAddressControllerGetLiquidationAddresses', { path: { customerId: customer.id } })
    expect(response.status).toBe(200)
    expect(data).toEqual([expect.objectContaining({ ...LIQUIDATION_ADDRESS_SHAPE, id: address.id, customer_id: customer.id })])
  })

  it('liquidationAddressControllerGetLiquidationAddress: GET /customers/{customerId}/liquidation_addresses/{liquidationAddressId}', async () => {
    const customer = await newCustomer()
    const address = await newLiquidationAddress(customer.id)
    const { data, response } = await call('liquidationAddressControllerGetLiquidationAddress', {
      path: { customerId: customer.id, liquidationAddressId: address.id },
    })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...LIQUIDATION_ADDRESS_SHAPE, id: address.id, customer_id: customer.id })
  })
})

describe('taxes', () => {
  it('taxControllerCreate: POST /taxes', async () => {
    const { data, response } = await call('taxControllerCreate', { body: { name: 'Sales tax', description: 'state', percentage: 7.25, active: true, appIds: [] } })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...TAX_SHAPE, name: 'Sales tax', description: 'state', percentage: 7.25, active: true })
  })

  it('taxControllerFindAll: GET /taxes', async () => {
    const tax = await newTax()
    const { data, response } = await call('taxControllerFindAll', { query: { skip: 0, take: 100 } })
    expect(response.status).toBe(200)
    expect(data).toEqual(expect.arrayContaining([expect.objectContaining({ ...TAX_SHAPE, id: tax.id })]))
  })

  it('taxControllerFindOne: GET /taxes/{id}', async () => {
    const tax = await newTax()
    const { data, response } = await call('taxControllerFindOne', { path: { id: tax.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...TAX_SHAPE, id: tax.id, percentage: 20 })
  })

  it('taxControllerUpdate: PUT /taxes/{id}', async () => {
    const tax = await newTax()
    const { data, response } = await call('taxControllerUpdate', { path: { id: tax.id }, body: { percentage: 21.5, active: false } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...TAX_SHAPE, id: tax.id, percentage: 21.5, active: false })
  })

  it('taxControllerRemove: DELETE /taxes/{id}', async () => {
    const tax = await newTax()
    const { data, response } = await call('taxControllerRemove', { path: { id: tax.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...TAX_SHAPE, id: tax.id })
    expect((await server.request('GET', `/api/v0/taxes/${tax.id}`, { key })).status).toBe(404)
  })

  it('taxControllerUpdateWithoutId: PUT /taxes is always 400', async () => {
    const { error, response } = await call('taxControllerUpdateWithoutId')
    expect(response.status).toBe(400)
    expect(error).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'Tax ID is required in the URL path. Use PUT /api/v0/taxes/{id} to update a specific tax.',
    })
  })

  it('taxControllerDeleteWithoutId: DELETE /taxes is always 400', async () => {
    const { error, response } = await call('taxControllerDeleteWithoutId')
    expect(response.status).toBe(400)
    expect(error).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'Tax ID is required in the URL path. Use DELETE /api/v0/taxes/{id} to delete a specific tax.',
    })
  })
})

describe('drains', () => {
  /** sandbox money: a client of the same generated code with a development key of the same application */
  let sandbox: GeneratedClient
  beforeAll(async () => {
    const sandboxKey = await server.createKey({ appId: key.appId, environment: 'development' })
    const clientModule = (await import(join(directory, 'client', 'index.ts'))) as GeneratedClientModule
    sandbox = clientModule.createClient(clientModule.createConfig({ baseUrl: server.baseUrl, headers: sandboxKey.headers }))
  })
  const DRAIN_SHAPE = { id: A_UUID, state: expect.any(String), amount: '12.500000', currency: 'usdc', source_payment_rail: 'ethereum', created_at: A_VALID_DATE, updated_at: A_VALID_DATE }

  async function newDrain(): Promise<{ customerId: string; liquidationAddressId: string; id: string }> {
    const customer = await newCustomer()
    const address = await newLiquidationAddress(customer.id)
    const { data, response } = await call('drainControllerSimulateDeposit', { client: sandbox, path: { customerId: customer.id, liquidationAddressId: address.id }, body: { amount: '12.5' } })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...DRAIN_SHAPE, state: 'funds_received', liquidation_address_id: address.id })
    return { customerId: customer.id, liquidationAddressId: address.id, id: (data as Fixture).id }
  }

  it('drainControllerSimulateDeposit: POST /customers/{customerId}/liquidation_addresses/{liquidationAddressId}/simulate_deposit', async () => {
    await newDrain()
  })

  it('drainControllerFindAll: GET /customers/{customerId}/liquidation_addresses/{liquidationAddressId}/drains', async () => {
    const drain = await newDrain()
    const { data, response } = await call('drainControllerFindAll', { client: sandbox, path: { customerId: drain.customerId, liquidationAddressId: drain.liquidationAddressId } })
    expect(response.status).toBe(200)
    expect(data).toEqual({ data: [expect.objectContaining({ ...DRAIN_SHAPE, id: drain.id })], total: 1, skip: 0, take: 10 })
  })

  it('drainControllerFindOne: GET /customers/{customerId}/liquidation_addresses/{liquidationAddressId}/drains/{drainId}', async () => {
    const drain = await newDrain()
    const { data, response } = await call('drainControllerFindOne', { client: sandbox, path: { customerId: drain.customerId, liquidationAddressId: drain.liquidationAddressId, drainId: drain.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...DRAIN_SHAPE, id: drain.id })
  })
})

describe('wallets', () => {
  it('walletControllerGetWallets: GET /wallets', async () => {
    const { data, response } = await call('walletControllerGetWallets')
    expect(response.status).toBe(200)
    const wallet = { id: A_UUID, bridge_id: A_UUID, address: expect.any(String), created_at: A_VALID_DATE, updated_at: A_VALID_DATE, app: { id: key.appId, name: 'test app' } }
    expect(data).toEqual({
      data: ['base', 'ethereum', 'solana'].map((chain) =>
        expect.objectContaining({ ...wallet, chain, balances: [expect.objectContaining({ balance: '0.000000', currency: 'usdc', chain }), expect.objectContaining({ balance: '0.000000', currency: 'eurc', chain })] }),
      ),
    })
  })
})

describe('balances', () => {
  const aggregated = (currency: string) => ({
    currency,
    total_balance: '0.000000',
    balances: ['base', 'ethereum', 'solana'].map((chain) =>
      expect.objectContaining({ wallet_id: A_UUID, chain, currency, balance: '0.000000', pending_incoming: '0.000000', pending_outgoing: '0.000000' }),
    ),
  })

  it('balanceControllerGetAllBalances: GET /balance', async () => {
    const { data, response } = await call('balanceControllerGetAllBalances')
    expect(response.status).toBe(200)
    expect(data).toEqual({ usdc: aggregated('usdc'), eurc: aggregated('eurc'), total_usd_value: '0.00' })
  })

  it('balanceControllerGetUSDCBalance: GET /balance/usdc', async () => {
    const { data, response } = await call('balanceControllerGetUSDCBalance')
    expect(response.status).toBe(200)
    expect(data).toEqual(aggregated('usdc'))
  })

  it('balanceControllerGetEURCBalance: GET /balance/eurc', async () => {
    const { data, response } = await call('balanceControllerGetEURCBalance')
    expect(response.status).toBe(200)
    expect(data).toEqual(aggregated('eurc'))
  })
})

describe('exchange rates', () => {
  // A production key reads live rates: only what an operator loaded (the sandbox has its defaults).
  const asOf = new Date(Date.now() - 1000).toISOString()
  beforeAll(async () => {
    await saveRates(server.app.db, [
      { environment: 'live', from: 'usd', to: 'eur', midmarket: '0.86000', buy: '0.85500', sell: '0.86500', asOf },
      { environment: 'live', from: 'eur', to: 'usd', midmarket: '1.16279', buy: '1.15700', sell: '1.16900', asOf },
    ])
  })
  const USD_TO_EUR = { from: 'usd', to: 'eur', midmarket_rate: '0.86000', buy_rate: '0.85500', sell_rate: '0.86500', timestamp: new Date(asOf) }

  it('exchangeRateControllerGetExchangeRate: GET /exchange-rate?from&to, and its 400 as the client parses it', async () => {
    const { data, response } = await call('exchangeRateControllerGetExchangeRate', { query: { from: 'usd', to: 'eur' } })
    expect(response.status).toBe(200)
    expect(data).toEqual(USD_TO_EUR)
    const refused = await call('exchangeRateControllerGetExchangeRate', { query: { from: 'eur', to: 'eur' } })
    expect(refused.response.status).toBe(400)
    expect(refused.error).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Unsupported currency pair: from and to are both eur; an exchange rate is between usd and eur' })
  })

  it('exchangeRateControllerGetEURToUSDRate: GET /exchange-rate/eur-to-usd', async () => {
    const { data, response } = await call('exchangeRateControllerGetEURToUSDRate')
    expect(response.status).toBe(200)
    expect(data).toEqual({ from: 'eur', to: 'usd', midmarket_rate: '1.16279', buy_rate: '1.15700', sell_rate: '1.16900', timestamp: new Date(asOf) })
  })

  it('exchangeRateControllerGetUSDToEURRate: GET /exchange-rate/usd-to-eur', async () => {
    const { data, response } = await call('exchangeRateControllerGetUSDToEURRate')
    expect(response.status).toBe(200)
    expect(data).toEqual(USD_TO_EUR)
  })
})

describe('products', () => {
  const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)])
  const PRODUCT_SHAPE = {
    id: A_UUID,
    name: expect.any(String),
    price: expect.any(String),
    currency: expect.any(String),
    status: 'ACTIVE',
    images: expect.any(Array),
    created_at: A_VALID_DATE,
    updated_at: A_VALID_DATE,
  }
  const newProduct = () => created('/api/v0/products', { name: `Widget ${crypto.randomUUID()}`, price: '9.99' })

  interface BodySerializers {
    urlSearchParamsBodySerializer: { bodySerializer: (body: unknown) => unknown }
    formDataBodySerializer: { bodySerializer: (body: unknown) => unknown }
  }
  const serializers = async () => (await import(join(directory, 'client', 'index.ts'))) as BodySerializers
  /** As the published client sends create and update: url-encoded, numbers as text, `images` one comma-joined value. */
  const urlEncoded = async (): Promise<CallOptions> => ({
    bodySerializer: (await serializers()).urlSearchParamsBodySerializer.bodySerializer,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  })
  const multipart = async (): Promise<CallOptions> => ({ bodySerializer: (await serializers()).formDataBodySerializer.bodySerializer, headers: { 'Content-Type': null } })

  it('productControllerCreate: POST /products, url-encoded as the published client sends it', async () => {
    const images = ['https://example.com/a.png', 'https://example.com/b.png']
    const { data, response } = await call('productControllerCreate', {
      ...(await urlEncoded()),
      body: { name: 'Widget', description: 'A widget', price: 19.99, currency: 'EUR', stockCount: 3, images: images.join(',') },
    })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...PRODUCT_SHAPE, name: 'Widget', description: 'A widget', price: '19.99', currency: 'EUR', stockCount: 3, images })
  })

  it('productControllerFindAll: GET /products', async () => {
    const product = await newProduct()
    const name = (await server.request<{ name: string }>('GET', `/api/v0/products/${product.id}`, { key })).body.name
    const { data, response } = await call('productControllerFindAll', { query: { name, skip: 0, take: 10 } })
    expect(response.status).toBe(200)
    expect(data).toEqual({ data: [expect.objectContaining({ ...PRODUCT_SHAPE, id: product.id })], total: 1, skip: 0, take: 10 })
  })

  it('productControllerFindOne: GET /products/{id}', async () => {
    const product = await newProduct()
    const { data, response } = await call('productControllerFindOne', { path: { id: product.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...PRODUCT_SHAPE, id: product.id, price: '9.99', currency: 'USD' })
  })

  it('productControllerUpdate: PUT /products/{id}, url-encoded (an empty images value clears the images)', async () => {
    const product = await created('/api/v0/products', { name: 'Old', price: '1.00', images: ['https://example.com/old.png'] })
    const { data, response } = await call('productControllerUpdate', { ...(await urlEncoded()), path: { id: product.id }, body: { name: 'New', price: 1500, currency: 'JPY', images: '' } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...PRODUCT_SHAPE, id: product.id, name: 'New', price: '1500', currency: 'JPY', images: [] })
  })

  it('productControllerRemove: DELETE /products/{id}', async () => {
    const product = await newProduct()
    const { data, response } = await call('productControllerRemove', { path: { id: product.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...PRODUCT_SHAPE, id: product.id })
    expect((await server.request('GET', `/api/v0/products/${product.id}`, { key })).status).toBe(404)
  })

  it('productControllerUploadImage: POST /products/{id}/images, an image file in a multipart body', async () => {
    const product = await newProduct()
    const { data, response } = await call('productControllerUploadImage', {
      ...(await multipart()),
      path: { id: product.id },
      body: { images: [new Blob([PNG], { type: 'image/png' })] },
    })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...PRODUCT_SHAPE, id: product.id, images: [expect.stringMatching(new RegExp(`^${server.baseUrl}/api/v0/products/${product.id}/images/`))] })
  })

  it('productControllerGetImage: GET /products/{id}/images/{imageId}, without a key', async () => {
    const form = new FormData()
    form.append('images', new Blob([PNG]), 'a.png')
    const product = await newProduct()
    const uploaded = await fetch(`${server.baseUrl}/api/v0/products/${product.id}/images`, { method: 'POST', headers: key.headers, body: form })
    const url = ((await uploaded.json()) as { images: string[] }).images[0] ?? ''
    const imageId = url.split('/').at(-1) ?? ''
    const { data, response } = await call('productControllerGetImage', { client: anonymous, path: { id: product.id, imageId } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('image/png')
    expect(data).toBeInstanceOf(Blob)
    expect(Buffer.from(await (data as Blob).arrayBuffer())).toEqual(PNG)
  })
})

describe('transfers and payment intents', () => {
  /** sandbox money: a client of the same generated code with a development key */
  let sandbox: GeneratedClient
  let sandboxKey: TestKey
  let walletId: string
  const TRANSFER_SHAPE = { id: A_UUID, type: expect.any(String), state: expect.any(String), currency: expect.any(String), source: expect.any(Object), destination: expect.any(Object), receipt: expect.any(Object), created_at: A_VALID_DATE, updated_at: A_VALID_DATE }
  beforeAll(async () => {
    sandboxKey = await server.createKey({ environment: 'development' })
    const clientModule = (await import(join(directory, 'client', 'index.ts'))) as GeneratedClientModule
    sandbox = clientModule.createClient(clientModule.createConfig({ baseUrl: server.baseUrl, headers: sandboxKey.headers }))
    const wallets = await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key: sandboxKey })
    walletId = wallets.body.data.find((wallet) => wallet.chain === 'base')?.id ?? ''
    // Money to move out: a test payment credits the base wallet's USDC.
    const paid = await server.request('POST', '/api/v0/test-payment', { key: sandboxKey, body: { amount: 100, currency: 'USD', description: 'funds' }, headers: { 'idempotency-key': crypto.randomUUID() } })
    expect(paid.status).toBe(201)
  })
  const awaiting = async (base: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Fixture> => {
    const res = await server.request<Fixture>('POST', base, { key: sandboxKey, body, headers })
    expect(res.status).toBe(201)
    return res.body
  }
  const newTransfer = () => awaiting('/api/v0/transfers/direct-wallet', { walletId, network: 'base', stableCoinCurrency: 'usdc', amount: 1 })
  const newIntent = () => awaiting('/api/v0/payment-intents/stablecoin', { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount: '1' }, { 'idempotency-key': crypto.randomUUID() })

  it('transferControllerCreateDirectBankTransfer: POST /transfers/direct-bank, the amount a JSON number', async () => {
    const { data, response } = await call('transferControllerCreateDirectBankTransfer', { client: sandbox, body: { walletId, paymentRail: 'wire', sourceCurrency: 'usd', destinationCurrency: 'usdc', amount: 100.25 } })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...TRANSFER_SHAPE, state: 'awaiting_funds', amount: '100.25', source_deposit_instructions: expect.objectContaining({ payment_rail: 'wire' }) })
  })

  it('transferControllerCreateDirectWalletTransfer: POST /transfers/direct-wallet', async () => {
    const { data, response } = await call('transferControllerCreateDirectWalletTransfer', { client: sandbox, body: { walletId, network: 'ethereum', stableCoinCurrency: 'usdc', amount: 5 } })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...TRANSFER_SHAPE, state: 'awaiting_funds', amount: '5.000000' })
  })

  it('transferControllerCreateExternalBankTransfer: POST /transfers/external-bank-transfer', async () => {
    const { data, response } = await call('transferControllerCreateExternalBankTransfer', {
      client: sandbox,
      body: { sourceWalletId: walletId, sourceCurrency: 'usdc', destinationCurrency: 'usd', destinationPaymentRail: 'ach', external_account_id: 'ext_acct_1', amount: 2 },
    })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...TRANSFER_SHAPE, state: 'funds_received', amount: '2.000000' })
  })

  it('transferControllerCreateExternalStablecoinTransfer: POST /transfers/external-stablecoin-transfer', async () => {
    const { data, response } = await call('transferControllerCreateExternalStablecoinTransfer', {
      client: sandbox,
      body: { sourceWalletId: walletId, sourceCurrency: 'usdc', destinationCurrency: 'usdc', beneficiaryId: 'beneficiary_12345', amount: 2 },
    })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...TRANSFER_SHAPE, state: 'funds_received' })
  })

  it('transferControllerCreateStablecoinConversion: POST /transfers/stablecoin-conversion', async () => {
    const { data, response } = await call('transferControllerCreateStablecoinConversion', { client: sandbox, body: { walletId, sourceNetwork: 'base', sourceCurrency: 'usdc', destinationCurrency: 'eurc', amount: 10 } })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...TRANSFER_SHAPE, receipt: expect.objectContaining({ exchange_rate: '0.84500', converted_amount: '8.450000' }) })
  })

  it('transferControllerFindAll: GET /transfers', async () => {
    await newTransfer()
    const { data, response } = await call('transferControllerFindAll', { client: sandbox, query: { state: 'awaiting_funds', take: 5 } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ data: expect.arrayContaining([expect.objectContaining(TRANSFER_SHAPE)]), skip: 0, take: 5 })
  })

  it('transferControllerFindOne: GET /transfers/{id}', async () => {
    const transfer = await newTransfer()
    const { data, response } = await call('transferControllerFindOne', { client: sandbox, path: { id: transfer.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...TRANSFER_SHAPE, id: transfer.id })
  })

  it('transferControllerCancel: DELETE /transfers/{id}', async () => {
    const transfer = await newTransfer()
    const { data, response } = await call('transferControllerCancel', { client: sandbox, path: { id: transfer.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ id: transfer.id, state: 'canceled' })
  })

  it('transferControllerSimulateFunds: POST /transfers/{id}/simulate_funds', async () => {
    const transfer = await newTransfer()
    const { data, response } = await call('transferControllerSimulateFunds', { client: sandbox, path: { id: transfer.id }, body: { amount: 1 } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ id: transfer.id, state: 'funds_received' })
  })

  it('paymentIntentControllerCreateBankPaymentIntent: POST /payment-intents/bank, the idempotency-key a generated header parameter', async () => {
    const { data, response } = await call('paymentIntentControllerCreateBankPaymentIntent', {
      client: sandbox,
      headers: { 'idempotency-key': crypto.randomUUID() },
      body: { sourcePaymentRail: 'ach_push', sourceCurrency: 'usd', destinationCurrency: 'usdc', destinationNetwork: 'base', amount: '10.00', customer_email: 'payer@example.com' },
    })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...TRANSFER_SHAPE, type: 'payment_intent_bank', state: 'awaiting_funds', customer: { email: 'payer@example.com' } })
  })

  it('paymentIntentControllerCreateStablePaymentIntent: POST /payment-intents/stablecoin, a flexible amount', async () => {
    const { data, response } = await call('paymentIntentControllerCreateStablePaymentIntent', {
      client: sandbox,
      headers: { 'idempotency-key': crypto.randomUUID() },
      body: { sourceCurrency: 'usdc', sourceNetwork: 'ethereum', destinationNetwork: 'base' },
    })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...TRANSFER_SHAPE, type: 'payment_intent_stablecoin', amount: null })
  })

  it('paymentIntentControllerFindAll: GET /payment-intents', async () => {
    await newIntent()
    const { data, response } = await call('paymentIntentControllerFindAll', { client: sandbox, query: { take: 5 } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ data: expect.arrayContaining([expect.objectContaining(TRANSFER_SHAPE)]), take: 5 })
  })

  it('paymentIntentControllerFindOne: GET /payment-intents/{id}', async () => {
    const intent = await newIntent()
    const { data, response } = await call('paymentIntentControllerFindOne', { client: sandbox, path: { id: intent.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...TRANSFER_SHAPE, id: intent.id })
  })

  it('paymentIntentControllerCancel: DELETE /payment-intents/{id}', async () => {
    const intent = await newIntent()
    const { data, response } = await call('paymentIntentControllerCancel', { client: sandbox, path: { id: intent.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ id: intent.id, state: 'canceled' })
  })

  it('paymentIntentControllerSimulateFunds: POST /payment-intents/{id}/simulate_funds, no body', async () => {
    const intent = await newIntent()
    const { data, response } = await call('paymentIntentControllerSimulateFunds', { client: sandbox, path: { id: intent.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ id: intent.id, state: 'funds_received' })
  })
})

describe('test payments', () => {
  /** sandbox money: a client of the same generated code with a development key */
  let sandbox: GeneratedClient
  let sandboxKey: TestKey
  beforeAll(async () => {
    sandboxKey = await server.createKey({ environment: 'development' })
    const clientModule = (await import(join(directory, 'client', 'index.ts'))) as GeneratedClientModule
    sandbox = clientModule.createClient(clientModule.createConfig({ baseUrl: server.baseUrl, headers: sandboxKey.headers }))
  })
  const PAYMENT_ID = expect.stringMatching(/^pay_[0-9a-f]{24}$/)
  const newPayment = async (): Promise<Fixture> => {
    const res = await server.request<Fixture>('POST', '/api/v0/test-payment', {
      key: sandboxKey,
      body: { amount: 20, currency: 'EUR', description: 'Tea' },
      headers: { 'idempotency-key': crypto.randomUUID() },
    })
    expect(res.status).toBe(201)
    return res.body
  }

  it('testPaymentControllerCreatePaymentV0: POST /test-payment, the idempotency-key a generated header parameter', async () => {
    const { data, response } = await call('testPaymentControllerCreatePaymentV0', {
      client: sandbox,
      headers: { 'idempotency-key': crypto.randomUUID() },
      body: { amount: 100.5, currency: 'USD', description: 'Order #1042' },
    })
    expect(response.status).toBe(201)
    expect(data).toEqual({ id: PAYMENT_ID, amount: 100.5, currency: 'USD', status: 'succeeded', timestamp: A_VALID_DATE, description: 'Order #1042', customerId: null, refunded: false, refundId: null, livemode: false })
  })

  it('testPaymentControllerGetPaymentV0: GET /test-payment/{id}', async () => {
    const payment = await newPayment()
    const { data, response } = await call('testPaymentControllerGetPaymentV0', { client: sandbox, path: { id: payment.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ id: payment.id, amount: 20, currency: 'EUR', status: 'succeeded', timestamp: A_VALID_DATE, refunded: false })
  })

  it('testPaymentControllerRefundPaymentV0: POST /test-payment/{id}/refund, no body', async () => {
    const payment = await newPayment()
    const { data, response } = await call('testPaymentControllerRefundPaymentV0', { client: sandbox, path: { id: payment.id }, headers: { 'idempotency-key': crypto.randomUUID() } })
    expect(response.status).toBe(200)
    expect(data).toEqual({ id: expect.stringMatching(/^ref_[0-9a-f]{24}$/), paymentId: payment.id, amount: 20, currency: 'EUR', status: 'succeeded', timestamp: A_VALID_DATE, livemode: false })
  })
})

describe('invoices', () => {
  const INVOICE_SHAPE = {
    id: A_UUID,
    customer_id: A_UUID,
    currency: 'usdc',
    lines: [{ product_id: A_UUID, name: 'Consulting', quantity: 2, unit_price: '100.00', amount: '200.00' }],
    subtotal: '200.00',
    tax: { id: A_UUID, name: expect.any(String), percentage: 20 },
    tax_amount: '40.00',
    total: '240.00',
    amount_paid: '0.00',
    amount_due: '240.00',
    due_date: A_VALID_DATE,
    created_at: A_VALID_DATE,
    updated_at: A_VALID_DATE,
  }
  /** CreateInvoiceDto as the published client sends it: dates as Date (sent toISOString()), items InvoiceProductDto's {product_id, quantity}. */
  async function invoiceBody(status = 'OPEN') {
    const customer = await newCustomer()
    const product = await created('/api/v0/products', { name: 'Consulting', price: '100.00' })
    const tax = await newTax()
    return {
      name: 'March services',
      email: 'billing@example.com',
      customer_id: customer.id,
      currency: 'usdc',
      items: [{ product_id: product.id, quantity: 2 }],
      due_date: new Date('2027-01-31T00:00:00.000Z'),
      delivery: 'EMAIL',
      payment_link: false,
      payment_methods: ['CRYPTO'],
      status,
      partial_payment: false,
      taxId: tax.id,
    }
  }
  const newInvoice = async () => created('/api/v0/invoices', await invoiceBody())

  it('invoiceControllerCreate: POST /invoices', async () => {
    const { data, response } = await call('invoiceControllerCreate', { body: await invoiceBody('DRAFT') })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...INVOICE_SHAPE, status: 'DRAFT' })
  })

  it('invoiceControllerFindAll: GET /invoices', async () => {
    const invoice = await newInvoice()
    const customerId = (await server.request<{ customer_id: string }>('GET', `/api/v0/invoices/${invoice.id}`, { key })).body.customer_id
    const { data, response } = await call('invoiceControllerFindAll', { query: { customer_id: customerId, skip: 0, take: 10 } })
    expect(response.status).toBe(200)
    expect(data).toEqual({ data: [expect.objectContaining({ ...INVOICE_SHAPE, id: invoice.id })], total: 1, skip: 0, take: 10 })
  })

  it('invoiceControllerFindOne: GET /invoices/{id}', async () => {
    const invoice = await newInvoice()
    const { data, response } = await call('invoiceControllerFindOne', { path: { id: invoice.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...INVOICE_SHAPE, id: invoice.id, status: 'OPEN' })
  })

  it('invoiceControllerUpdate: PUT /invoices/{id}, the whole body again', async () => {
    const body = await invoiceBody()
    const invoice = await created('/api/v0/invoices', body)
    const { data, response } = await call('invoiceControllerUpdate', { path: { id: invoice.id }, body: { ...body, status: 'PASTDUE' } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...INVOICE_SHAPE, id: invoice.id, status: 'PASTDUE' })
  })
})

describe('payment links', () => {
  const LINK_SHAPE = {
    id: A_UUID,
    title: expect.any(String),
    url: expect.any(String),
    checkout_url: expect.any(String),
    linkType: expect.any(String),
    currency: expect.any(String),
    payments_count: 0,
    status: 'active',
    created_at: A_VALID_DATE,
    updated_at: A_VALID_DATE,
  }
  const linkBody = (body: Record<string, unknown> = {}) => ({
    title: 'Support us',
    url: `client-${crypto.randomUUID()}`,
    linkType: 'DONATION',
    allowQuantityAdjustment: false,
    collectTax: false,
    collectAddress: false,
    allowMobilePayment: false,
    currency: 'usdc',
    ...body,
  })

  it('paymentLinksControllerCreate: POST /payment-links, a PRODUCT link, amounts as JSON numbers as the published client sends them', async () => {
    const product = await created('/api/v0/products', { name: `Widget ${crypto.randomUUID()}`, price: '9.99' })
    const url = `client-${crypto.randomUUID()}`
    const { data, response } = await call('paymentLinksControllerCreate', {
      body: linkBody({ url: `https://pay.example.com/pay/${url}`, linkType: 'PRODUCT', allowQuantityAdjustment: true, paymentLinkProducts: [{ productId: product.id, quantity: 2 }], limitPayments: true, maxPayments: 5 }),
    })
    expect(response.status).toBe(201)
    expect(data).toMatchObject({ ...LINK_SHAPE, url, checkout_url: `${server.baseUrl}/pay/${key.appId}/${url}`, linkType: 'PRODUCT', amount: null, paymentLinkProducts: [{ productId: product.id, quantity: 2 }], maxPayments: 5 })
  })

  it('paymentLinksControllerFindAll: GET /payment-links, skip and take as text as the published client sends them', async () => {
    const link = await created('/api/v0/payment-links', linkBody({ linkType: 'COLLECTION', currency: 'eurc' }))
    const { data, response } = await call('paymentLinksControllerFindAll', { query: { skip: '0', take: '1', linkType: 'COLLECTION', currency: 'eurc' } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ data: [{ ...LINK_SHAPE, id: link.id }], skip: 0, take: 1 })
  })

  it('paymentLinksControllerFindOne: GET /payment-links/{id}', async () => {
    const link = await created('/api/v0/payment-links', linkBody({ amount: 25.5, expiration_date: '2099-01-01T00:00:00.000Z' }))
    const { data, response } = await call('paymentLinksControllerFindOne', { path: { id: link.id } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...LINK_SHAPE, id: link.id, amount: '25.500000', expiration_date: A_VALID_DATE })
  })

  it('paymentLinksControllerUpdate: PUT /payment-links/{id}, a partial body', async () => {
    const link = await created('/api/v0/payment-links', linkBody({ amount: '5' }))
    const { data, response } = await call('paymentLinksControllerUpdate', { path: { id: link.id }, body: { title: 'Renamed', amount: 7.25 } })
    expect(response.status).toBe(200)
    expect(data).toMatchObject({ ...LINK_SHAPE, id: link.id, title: 'Renamed', amount: '7.250000', linkType: 'DONATION' })
  })
})

describe('coverage', () => {
  it('every operation in the served document was driven through the generated client above', () => {
    expect([...documentOperationIds].sort()).toEqual([...driven].sort())
  })
})
