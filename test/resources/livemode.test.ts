import { confirmDeposit } from '../../src/chains/deposits.js'
import { insertDeposit } from './deposits/fixtures.js'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LedgerEnvironment } from '../../src/ledger/ledger.js'
import { ExchangeRates } from '../../src/ledger/rates.js'
import { receiveDeposit } from '../../src/resources/drains/lifecycle.js'
import { EVENT_TYPES } from '../../src/resources/index.js'
import { receiveFunds } from '../../src/resources/transfers/lifecycle.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { testChainsConfig } from '../helpers/chains.js'

/**
 * Every money event says which money it is: `livemode` in its `data` (false for the sandbox, made
 * with a development key; true for live money, a production key), the same name on every type,
 * declared in the document's webhooks section. One row per event type: how to make one in each
 * environment where it exists, over real HTTP where the API can (live funds and deposits arrive
 * through the same intake a provider's notification will call: receiveFunds, receiveDeposit).
 */

interface World {
  environment: LedgerEnvironment
  key: TestKey
  customer: string
  product: string
  address: string
  wallet: string
}

interface Made {
  /** the id of the object the event is about */
  id: string
}

interface SchemaObject {
  $ref?: string
  allOf?: SchemaObject[]
  properties?: Record<string, SchemaObject>
  required?: string[]
  [keyword: string]: unknown
}

interface Document {
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: SchemaObject }> } } }>
  components: { schemas: Record<string, SchemaObject> }
}

let server: TestServer
const worlds = new Map<LedgerEnvironment, World>()
let document: Document

const idempotencyKey = () => ({ 'idempotency-key': crypto.randomUUID() })

async function created<T extends { id: string }>(world: World, path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<T> {
  const res = await server.request<T>('POST', path, { key: world.key, body, headers })
  expect(res.status, `${path}: ${res.text}`).toBe(201)
  return res.body
}

async function ok(world: World, method: string, path: string, body?: Record<string, unknown>): Promise<void> {
  const res = await server.request(method, path, { key: world.key, ...(body === undefined ? {} : { body }) })
  expect(res.status, `${method} ${path}: ${res.text}`).toBe(200)
}

function world(environment: LedgerEnvironment): World {
  const found = worlds.get(environment)
  if (found === undefined) throw new Error(`no ${environment} world`)
  return found
}

const invoiceBody = (w: World) => ({
  name: 'March services',
  email: 'billing@example.com',
  customer_id: w.customer,
  currency: 'usdc',
  items: [{ product_id: w.product, quantity: 1 }],
  due_date: '2099-01-31T00:00:00.000Z',
  delivery: 'EMAIL',
  payment_link: false,
  payment_methods: ['CRYPTO'],
  status: 'OPEN',
  partial_payment: false,
})

const linkBody = () => ({ title: 'Support us', url: `pay-${crypto.randomUUID().slice(0, 8)}`, linkType: 'DONATION', allowQuantityAdjustment: false, collectTax: false, collectAddress: false, allowMobilePayment: false, currency: 'usdc', amount: '5' })

/** "Pay" on a hosted page: the payment intent it made. */
async function payOnPage(path: string): Promise<string> {
  const res = await fetch(`${server.baseUrl}${path}`, { method: 'POST', redirect: 'manual', body: new URLSearchParams({ email: 'payer@example.com' }).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
  expect(res.status, await res.text()).toBe(303)
  return (res.headers.get('location') ?? '').split('/').at(-1) ?? ''
}

/** The funds of a checkout's intent arrive: the sandbox's button, or live funds through the intake a deposit watcher will call. */
async function fundsArrive(w: World, intentId: string): Promise<void> {
  if (w.environment === 'sandbox') {
    const res = await fetch(`${server.baseUrl}/checkout/${intentId}/complete`, { method: 'POST', redirect: 'manual' })
    expect(res.status, await res.text()).toBe(303)
    return
  }
  const context = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 20, achDelayMs: 20 }, now: Date.now }
  await server.app.transact((tx) => receiveFunds(tx, context, 'payment_intent', 'live', w.key.appId, intentId, undefined))
}

async function newDirectWallet(w: World): Promise<Made> {
  return created(w, '/api/v0/transfers/direct-wallet', { walletId: w.wallet, network: 'base', stableCoinCurrency: 'usdc', amount: 1 })
}

async function newIntent(w: World): Promise<Made> {
  return created(w, '/api/v0/payment-intents/stablecoin', { sourceCurrency: 'usdc', sourceNetwork: 'base', destinationNetwork: 'base', amount: '1' }, idempotencyKey())
}

async function newDrain(w: World): Promise<Made> {
  if (w.environment === 'sandbox') return created(w, `/api/v0/customers/${w.customer}/liquidation_addresses/${w.address}/simulate_deposit`, { amount: '2' })
  const context = { rates: new ExchangeRates({ maxAgeMs: 0 }), timings: { fastDelayMs: 20, achDelayMs: 20 }, now: Date.now }
  return server.app.transact((tx) => receiveDeposit(tx, context, { environment: 'live', appId: w.key.appId, customerId: w.customer, liquidationAddressId: w.address, amount: '2' }))
}

/**
 * A deposit seen on chain to an address no liquidation address has taken yet, confirmed: the
 * watcher's crediting holds it (deposit.held). Live only; the watcher itself is tested on a real
 * chain in test/chains/.
 */
async function newHeldDeposit(w: World): Promise<Made> {
  const row = await insertDeposit(server, w.key.appId, { owner_type: 'unassigned', owner_id: null, block_number: 1 })
  const config = testChainsConfig().chains.find((chain) => chain.chain === 'base')
  if (config === undefined) throw new Error('no base in the test chains')
  await confirmDeposit(server.app.transact, config, row.id, Date.now)
  return { id: row.id }
}

/** The deposit.* types the watcher emits with deposit.held's schema (the deposit), made on a real chain in test/chains/. */
const WATCHER_EVENTS = ['deposit.pending', 'deposit.confirmed', 'deposit.removed', 'deposit.reversed']

/** Test payments are made with development keys only: sandbox money. */
async function newTestPayment(w: World): Promise<Made> {
  return created(w, '/api/v0/test-payment', { amount: 2, currency: 'USD', description: 'Order #1' }, idempotencyKey())
}

/** One row per money event type: the environments it exists in, and how to make one (the id of its object). */
const MONEY_EVENTS: [type: string, environments: LedgerEnvironment[], make: (w: World) => Promise<Made>][] = [
  ['transfer.created', ['sandbox', 'live'], newDirectWallet],
  [
    'transfer.updated',
    ['sandbox', 'live'],
    async (w) => {
      const transfer = await newDirectWallet(w)
      await ok(w, 'DELETE', `/api/v0/transfers/${transfer.id}`)
      return transfer
    },
  ],
  ['payment_intent.created', ['sandbox', 'live'], newIntent],
  [
    'payment_intent.updated',
    ['sandbox', 'live'],
    async (w) => {
      const intent = await newIntent(w)
      await ok(w, 'DELETE', `/api/v0/payment-intents/${intent.id}`)
      return intent
    },
  ],
  ['liquidation_address.drain.created', ['sandbox', 'live'], newDrain],
  [
    'liquidation_address.drain.updated',
    ['sandbox', 'live'],
    async (w) => {
      const drain = await newDrain(w)
      // The scheduler moves it on within milliseconds (fastDelayMs below).
      const deadline = Date.now() + 10_000
      while ((await eventsAbout(w, 'liquidation_address.drain.updated', drain.id)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25))
      return drain
    },
  ],
  ['deposit.held', ['live'], newHeldDeposit],
  ['test_payment.created', ['sandbox'], newTestPayment],
  [
    'test_payment.refunded',
    ['sandbox'],
    async (w) => {
      const payment = await newTestPayment(w)
      const refund = await server.request<{ id: string }>('POST', `/api/v0/test-payment/${payment.id}/refund`, { key: w.key, body: {}, headers: idempotencyKey() })
      expect(refund.status, refund.text).toBe(200)
      return refund.body
    },
  ],
  ['invoice.created', ['sandbox', 'live'], (w) => created(w, '/api/v0/invoices', invoiceBody(w))],
  [
    'invoice.updated',
    ['sandbox', 'live'],
    async (w) => {
      const invoice = await created<Made>(w, '/api/v0/invoices', invoiceBody(w))
      await ok(w, 'PUT', `/api/v0/invoices/${invoice.id}`, { ...invoiceBody(w), name: 'March services, revised' })
      return invoice
    },
  ],
  [
    'invoice.paid',
    ['sandbox', 'live'],
    async (w) => {
      const invoice = await created<Made>(w, '/api/v0/invoices', invoiceBody(w))
      await fundsArrive(w, await payOnPage(`/invoices/${invoice.id}/pay`))
      return invoice
    },
  ],
  ['payment_link.created', ['sandbox', 'live'], (w) => created(w, '/api/v0/payment-links', linkBody())],
  [
    'payment_link.updated',
    ['sandbox', 'live'],
    async (w) => {
      const link = await created<Made>(w, '/api/v0/payment-links', linkBody())
      await ok(w, 'PUT', `/api/v0/payment-links/${link.id}`, { title: 'Support us more' })
      return link
    },
  ],
  [
    'payment_link.paid',
    ['sandbox', 'live'],
    async (w) => {
      const link = await created<Made & { url: string }>(w, '/api/v0/payment-links', linkBody())
      await fundsArrive(w, await payOnPage(`/pay/${w.key.appId}/${link.url}`))
      return link
    },
  ],
]

async function eventsAbout(w: World, type: string, id: string): Promise<{ payload: string }[]> {
  const rows = await server.database.query<{ payload: string }>('select payload from events where app_id = ? and type = ?', w.key.appId, type)
  return rows.filter((row) => (JSON.parse(row.payload) as { data: { id?: string } }).data.id === id)
}

/** The schema of an event type's data, as the document's webhooks section declares it. */
function dataSchema(type: string): SchemaObject {
  const body = document.webhooks[type]?.post.requestBody.content['application/json']?.schema
  const ref = body?.allOf?.[1]?.properties?.data?.$ref ?? ''
  const schema = document.components.schemas[ref.replace('#/components/schemas/', '')]
  if (schema === undefined) throw new Error(`no data schema for ${type}`)
  return schema
}

beforeAll(async () => {
  server = await startTestServer({ config: { chains: testChainsConfig(), drains: { scheduler: true, fastDelayMs: 20, achDelayMs: 20, pollIntervalMs: 20, concurrency: 4 } } })
  document = (await server.request<Document>('GET', '/api/v0/openapi.json')).body
  for (const [environment, keyEnvironment] of [
    ['sandbox', 'development'],
    ['live', 'production'],
  ] as const) {
    const key = await server.createKey({ environment: keyEnvironment })
    const partial = { environment, key, customer: '', product: '', address: '', wallet: '' }
    partial.customer = (await created<Made>(partial, '/api/v0/customers', { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' })).id
    partial.product = (await created<Made>(partial, '/api/v0/products', { name: 'Widget', price: '10.00' })).id
    // A live liquidation address takes a receiving address of the platform (docs/chains.md); the sandbox takes any.
    const address = environment === 'live' ? (await created<Made & { address: string }>(partial, '/api/v0/receiving-addresses', { chain: 'ethereum', currency: 'usdc' })).address : randomEvmAddress()
    const wallets = await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key })
    partial.wallet = wallets.body.data.find((wallet) => wallet.chain === 'base')?.id ?? ''
    // Into the application's own wallet: live payouts out of the platform wait for a sender (docs/chains.md), a wallet's drain moves on.
    partial.address = (
      await created<Made>(partial, `/api/v0/customers/${partial.customer}/liquidation_addresses`, { chain: 'ethereum', currency: 'usdc', address, destination_payment_rail: 'bridge_wallet', bridge_wallet_id: partial.wallet, destination_currency: 'usdc' })
    ).id
    worlds.set(environment, partial)
  }
})
afterAll(async () => server?.close())

describe('livemode on every money event', () => {
  const rows = MONEY_EVENTS.flatMap(([type, environments, make]) => environments.map((environment) => [type, environment, make] as const))

  it.each(rows)('%s in %s money: data.livemode says which, and the event validates against its webhooks entry', async (type, environment, make) => {
    const w = world(environment)
    const made = await make(w)
    const events = await eventsAbout(w, type, made.id)
    expect(events.length, `${type} about ${made.id}`).toBeGreaterThan(0)
    const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true })
    const body = document.webhooks[type]?.post.requestBody.content['application/json']?.schema ?? {}
    const validate = ajv.compile({ ...body, components: document.components })
    for (const event of events) {
      const payload = JSON.parse(event.payload) as { data: { livemode?: unknown } }
      expect(payload.data.livemode, event.payload).toBe(environment === 'live')
      expect(validate(payload) ? [] : validate.errors, event.payload).toEqual([])
    }
  })

  it('a production key cannot make sandbox-only events (test payments): their livemode is always false', async () => {
    const refused = await server.request('POST', '/api/v0/test-payment', { key: world('live').key, body: { amount: 2, currency: 'USD', description: 'Order #1' }, headers: idempotencyKey() })
    expect(refused.status).toBe(403)
  })

  it("the document declares livemode, a required boolean of data, on exactly the money event types (every type whose object belongs to an environment)", () => {
    const declaring = EVENT_TYPES.filter((type) => {
      const schema = dataSchema(type)
      return schema.properties?.livemode?.type === 'boolean' && schema.required?.includes('livemode') === true
    })
    expect([...new Set(declaring)].sort()).toEqual([...MONEY_EVENTS.map(([type]) => type), ...WATCHER_EVENTS].sort())
  })
})
