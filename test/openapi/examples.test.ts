import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatAmount, parseAmount } from '../../src/ledger/amount.js'
import type { LedgerEnvironment } from '../../src/ledger/ledger.js'
import { WALLET_CURRENCIES } from '../../src/resources/wallets/repository.js'
import { MISSING_UUID, randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'
import { deposit, storedWallet, withdraw } from '../resources/wallets/money.js'

/**
 * The examples the docs page shows are real: every field of the resources' schemas has one
 * (no "string" placeholders), the request bodies built from them the way Swagger UI builds its
 * "Example Value" are accepted by the server, each documented error example is what the server
 * answers for that status, and the money examples (a drain, wallets, balances, a rate) are what
 * the server answers for that money.
 */

/** The tags whose schemas carry examples everywhere. */
const EXAMPLED_TAGS = [
  'health',
  'customers',
  'liquidation addresses',
  'webhooks',
  'taxes',
  'wallets',
  'balances',
  'exchange rates',
  'drains',
  'transfers',
  'payment intents',
  'products',
  'test payments',
]

interface Schema {
  type?: string | string[]
  $ref?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  allOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  default?: unknown
  examples?: unknown[]
  format?: string
  contentMediaType?: string
}

interface Media {
  schema?: Schema
  example?: Record<string, unknown>
}

interface Operation {
  operationId: string
  tags?: string[]
  parameters?: { in: string; name: string; schema?: Schema }[]
  requestBody?: { content: Record<string, Media> }
  responses: Record<string, { content?: Record<string, Media> }>
}

interface Drain {
  id: string
  state: string
  deposit_tx_hash: string
  destination: Record<string, string>
  created_at: string
  updated_at: string
}

/** A transfer or payment intent, with the fields its example check reads. */
interface Transfer {
  id: string
  state: string
  destination: Record<string, string>
  source_deposit_instructions: Record<string, string>
  destination_tx_hash?: string
  created_at: string
  updated_at: string
}

interface Document {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
  webhooks: Record<string, { post: Operation }>
}

let server: TestServer
let key: TestKey
/** The same application's development key: simulate_deposit answers 403 to a production key. */
let sandboxKey: TestKey
let document: Document
/** The address made from the docs page's example bodies, and the drain its example deposit made. */
let exampleAddress: { customerId: string; id: string } | undefined
let exampleDrain: Drain | undefined
/** The direct-bank transfer and bank payment intent made from the example bodies, in the sandbox wallet on base; the product and test payment likewise. */
let exampleTransfer: Transfer | undefined
let exampleIntent: Transfer | undefined
let exampleWallet: { id: string; address: string } | undefined
let exampleProduct: Record<string, unknown> | undefined
let examplePayment: { payment: Record<string, unknown>; refund: Record<string, unknown> } | undefined
beforeAll(async () => {
  // Drains move on in milliseconds, so the example drain is paid out within the test.
  server = await startTestServer({ config: { drains: { scheduler: true, fastDelayMs: 40, achDelayMs: 120, pollIntervalMs: 20, concurrency: 4 } } })
  key = await server.createKey()
  sandboxKey = await server.createKey({ appId: key.appId, environment: 'development' })
  document = (await server.request<Document>('GET', '/api/v0/openapi.json')).body
})
afterAll(async () => server.close())

/** Every operation of the exampled tags: [method, path, operation]. */
function coreOperations(): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([, operation]) => operation.tags?.some((tag) => EXAMPLED_TAGS.includes(tag)) === true)
      .map(([method, operation]): [string, string, Operation] => [method.toUpperCase(), path, operation]),
  )
}

function resolve(schema: Schema): Schema {
  if (schema.$ref === undefined) return schema
  const target = document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
  if (target === undefined) throw new Error(`unresolved ${schema.$ref}`)
  return target
}

const ERROR_REF = '#/components/schemas/Error'

/**
 * Where a schema would show a placeholder ("string", 0.0) instead of a real value: the JSON
 * pointers of its fields without an example. An object with an example of its own still needs
 * one on each field, which the schema view shows; except the error body, the same on every
 * operation, whose example each error response gives.
 */
function placeholders(schema: Schema, at: string): string[] {
  const resolved = resolve(schema)
  // A file (an image's bytes, an upload's part): no text to show.
  if (resolved.contentMediaType !== undefined) return []
  if (resolved.properties !== undefined && schema.$ref !== ERROR_REF) return Object.entries(resolved.properties).flatMap(([name, property]) => placeholders(property, `${at}/${name}`))
  if (resolved.examples !== undefined || resolved.enum !== undefined || resolved.const !== undefined) return []
  if (resolved.anyOf !== undefined) return resolved.anyOf.flatMap((branch, i) => placeholders(branch, `${at}/anyOf/${i}`))
  if (resolved.allOf !== undefined) return resolved.allOf.flatMap((branch, i) => placeholders(branch, `${at}/allOf/${i}`))
  const types = Array.isArray(resolved.type) ? resolved.type : [resolved.type]
  if (types.includes('string') || types.includes('number')) return [at]
  if (types.includes('array') && resolved.items !== undefined) return placeholders(resolved.items, `${at}/items`)
  return []
}

/** The value Swagger UI's "Example Value" shows for a schema: its example, else its default or first enum value, else built from its parts. */
function sample(schema: Schema): unknown {
  const resolved = resolve(schema)
  if (resolved.examples !== undefined) return resolved.examples[0]
  if (resolved.const !== undefined) return resolved.const
  if (resolved.default !== undefined) return resolved.default
  if (resolved.enum !== undefined) return resolved.enum[0]
  if (resolved.anyOf?.[0] !== undefined) return sample(resolved.anyOf[0])
  const type = Array.isArray(resolved.type) ? resolved.type[0] : resolved.type
  if (type === 'boolean') return true
  if (type === 'array') return resolved.items === undefined ? [] : [sample(resolved.items)]
  if (type === 'object' || resolved.properties !== undefined) {
    return Object.fromEntries(Object.entries(resolved.properties ?? {}).map(([name, property]) => [name, sample(property)]))
  }
  throw new Error(`no sample for ${JSON.stringify(resolved)}`)
}

/** A body's "Example Value": the body's own example (a schema's `examples` is given as its media type's `example`), else built from its fields. */
function bodySample(method: string, path: string): unknown {
  const media = document.paths[path]?.[method.toLowerCase()]?.requestBody?.content['application/json']
  if (media?.schema === undefined) throw new Error(`${method} ${path} has no JSON body`)
  return media.example ?? sample(media.schema)
}

describe('every field of the schemas has an example', () => {
  it('request bodies and responses of every operation of the exampled tags', () => {
    const missing = coreOperations().flatMap(([method, path, operation]) => [
      ...Object.entries(operation.requestBody?.content ?? {}).flatMap(([type, media]) =>
        media.schema === undefined ? [] : placeholders(media.schema, `${method} ${path} body ${type}`),
      ),
      ...Object.entries(operation.responses).flatMap(([code, response]) =>
        Object.values(response.content ?? {}).flatMap((media) => (media.schema === undefined ? [] : placeholders(media.schema, `${method} ${path} ${code}`))),
      ),
    ])
    expect(missing).toEqual([])
    expect(coreOperations().length).toBeGreaterThanOrEqual(35)
  })

  it('the error body, and each event of the webhooks section with its envelope and data', () => {
    expect(placeholders({ $ref: ERROR_REF }, 'Error')).toEqual([])
    const events = Object.entries(document.webhooks)
      .filter(([type]) => ['webhook.', 'customer.', 'liquidation_address.', 'tax.'].some((prefix) => type.startsWith(prefix)))
      .flatMap(([type, entry]) => placeholders(entry.post.requestBody?.content['application/json']?.schema ?? {}, type))
    expect(events).toEqual([])
  })
})

describe("the docs page's example bodies are accepted as they are", () => {
  it('create a customer, a liquidation address for it, a webhook and a tax; update each; rotate the secret; a deposit to the address', async () => {
    const customer = await server.request<{ id: string; first_name: string }>('POST', '/api/v0/customers', { key, body: bodySample('POST', '/api/v0/customers') })
    expect(customer.status, JSON.stringify(customer.body)).toBe(201)
    expect(customer.body.first_name).toBe('Ada')
    const addressBody = bodySample('POST', '/api/v0/customers/{customerId}/liquidation_addresses')
    // The example's address is any valid one: the sandbox's rule (a live one takes a receiving address, docs/chains.md).
    const address = await server.request<{ id: string; address: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, { key: sandboxKey, body: addressBody })
    expect(address.status, JSON.stringify(address.body)).toBe(201)
    expect(address.body.address).toBe((addressBody as { address: string }).address)
    const customerUpdate = await server.request('PATCH', `/api/v0/customers/${customer.body.id}`, { key, body: bodySample('PATCH', '/api/v0/customers/{id}') })
    expect(customerUpdate.status, JSON.stringify(customerUpdate.body)).toBe(200)
    // simulate_deposit takes a development key; the drain is checked against the Drain example below.
    exampleAddress = { customerId: customer.body.id, id: address.body.id }
    const drain = await server.request<Drain>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses/${address.body.id}/simulate_deposit`, {
      key: sandboxKey,
      body: bodySample('POST', '/api/v0/customers/{customerId}/liquidation_addresses/{liquidationAddressId}/simulate_deposit'),
    })
    expect(drain.status, JSON.stringify(drain.body)).toBe(201)
    exampleDrain = drain.body

    const webhook = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: bodySample('POST', '/api/v0/webhooks') })
    expect(webhook.status, JSON.stringify(webhook.body)).toBe(201)
    const webhookUpdate = await server.request('PATCH', `/api/v0/webhooks/${webhook.body.id}`, { key, body: bodySample('PATCH', '/api/v0/webhooks/{id}') })
    expect(webhookUpdate.status, JSON.stringify(webhookUpdate.body)).toBe(200)
    const rotate = await server.request('POST', `/api/v0/webhooks/${webhook.body.id}/secret/rotate`, { key, body: bodySample('POST', '/api/v0/webhooks/{id}/secret/rotate') })
    expect(rotate.status, JSON.stringify(rotate.body)).toBe(200)

    const tax = await server.request<{ id: string }>('POST', '/api/v0/taxes', { key, body: bodySample('POST', '/api/v0/taxes') })
    expect(tax.status, JSON.stringify(tax.body)).toBe(201)
    const taxUpdate = await server.request('PUT', `/api/v0/taxes/${tax.body.id}`, { key, body: bodySample('PUT', '/api/v0/taxes/{id}') })
    expect(taxUpdate.status, JSON.stringify(taxUpdate.body)).toBe(200)
  })

  it("a transfer of each kind (the application's own sandbox wallet on base, funded, in the example wallet's place), the funds the direct-bank one awaits; a payment intent of each kind and the funds of the bank one", async () => {
    // simulate_funds and a conversion's sandbox rate take a development key.
    const wallets = (await server.request<{ data: { id: string; chain: string; address: string }[] }>('GET', '/api/v0/wallets', { key: sandboxKey })).body.data
    const wallet = wallets.find((candidate) => candidate.chain === 'base')
    if (wallet === undefined) throw new Error('no wallet on base')
    exampleWallet = wallet
    // Enough for the three bodies that spend from the wallet: 100 + 1.50 out by ACH, 25 to a beneficiary, 100 converted.
    await deposit(server.app.db, await storedWallet(server.app.db, 'sandbox', sandboxKey.appId, wallet.id), 'usdc', '226.500000')
    const inWallet = (body: unknown): Record<string, unknown> => {
      const fields = { ...(body as Record<string, unknown>) }
      for (const name of ['walletId', 'sourceWalletId']) if (name in fields) fields[name] = wallet.id
      return fields
    }
    const made: Record<string, Transfer> = {}
    for (const kind of ['direct-bank', 'direct-wallet', 'external-bank-transfer', 'external-stablecoin-transfer', 'stablecoin-conversion']) {
      const res = await server.request<Transfer>('POST', `/api/v0/transfers/${kind}`, { key: sandboxKey, body: inWallet(bodySample('POST', `/api/v0/transfers/${kind}`)) })
      expect(res.status, `${kind}: ${JSON.stringify(res.body)}`).toBe(201)
      made[kind] = res.body
    }
    const transfer = made['direct-bank']
    if (transfer === undefined) throw new Error('no direct-bank transfer')
    const funds = await server.request<Transfer>('POST', `/api/v0/transfers/${transfer.id}/simulate_funds`, { key: sandboxKey, body: bodySample('POST', '/api/v0/transfers/{id}/simulate_funds') })
    expect(funds.status, JSON.stringify(funds.body)).toBe(200)
    exampleTransfer = funds.body

    const intents: Record<string, Transfer> = {}
    for (const kind of ['bank', 'stablecoin']) {
      const res = await server.request<Transfer>('POST', `/api/v0/payment-intents/${kind}`, { key: sandboxKey, headers: { 'idempotency-key': randomUUID() }, body: bodySample('POST', `/api/v0/payment-intents/${kind}`) })
      expect(res.status, `${kind}: ${JSON.stringify(res.body)}`).toBe(201)
      intents[kind] = res.body
    }
    const intent = intents.bank
    if (intent === undefined) throw new Error('no bank payment intent')
    const paid = await server.request<Transfer>('POST', `/api/v0/payment-intents/${intent.id}/simulate_funds`, { key: sandboxKey, body: bodySample('POST', '/api/v0/payment-intents/{id}/simulate_funds') })
    expect(paid.status, JSON.stringify(paid.body)).toBe(200)
    exampleIntent = paid.body
  })

  it('a product: create it, update it, add an image; a test payment and its refund', async () => {
    const product = await server.request<{ id: string }>('POST', '/api/v0/products', { key, body: bodySample('POST', '/api/v0/products') })
    expect(product.status, JSON.stringify(product.body)).toBe(201)
    exampleProduct = product.body
    const update = await server.request('PUT', `/api/v0/products/${product.body.id}`, { key, body: bodySample('PUT', '/api/v0/products/{id}') })
    expect(update.status, JSON.stringify(update.body)).toBe(200)
    const images = await server.request('POST', `/api/v0/products/${product.body.id}/images`, { key, body: bodySample('POST', '/api/v0/products/{id}/images') })
    expect(images.status, JSON.stringify(images.body)).toBe(201)

    // Test payments take a development key and an idempotency key.
    const payment = await server.request<{ id: string }>('POST', '/api/v0/test-payment', { key: sandboxKey, headers: { 'idempotency-key': randomUUID() }, body: bodySample('POST', '/api/v0/test-payment') })
    expect(payment.status, JSON.stringify(payment.body)).toBe(201)
    const refund = await server.request<Record<string, unknown>>('POST', `/api/v0/test-payment/${payment.body.id}/refund`, { key: sandboxKey, headers: { 'idempotency-key': randomUUID() } })
    expect(refund.status, JSON.stringify(refund.body)).toBe(200)
    examplePayment = { payment: payment.body, refund: refund.body }
  })
})

describe('each documented error example is what the server answers', () => {
  /** The operation's path with `id` for its last path parameter and, for the others, the id in `parents` by name, else MISSING_UUID. */
  function pathWith(path: string, id: string, parents: Record<string, string> = {}): string {
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '')
    return names.reduce<string>((built, name, i) => built.replace(`{${name}}`, i === names.length - 1 ? id : (parents[name] ?? MISSING_UUID)), path)
  }

  function example(operation: Operation, status: number): Record<string, unknown> | undefined {
    return operation.responses[String(status)]?.content?.['application/json']?.example
  }

  it('401 for a wrong secret, 403 for a key without the scope (an inactive key where any valid key will do)', async () => {
    const wrong: TestKey = { ...key, clientSecret: 'sk_wrong', headers: { ...key.headers, 'x-client-secret': 'sk_wrong' } }
    const scopeless = await server.createKey({ scopes: [] })
    const inactive = await server.createKey()
    await server.deactivate(inactive)
    let checked = 0
    for (const [method, path, operation] of coreOperations()) {
      const url = pathWith(path, MISSING_UUID)
      for (const [status, as] of [
        [401, wrong],
        [403, scopeless],
        [403, inactive],
      ] as const) {
        const expected = example(operation, status)
        if (expected === undefined) continue
        const isInactiveExample = expected.message === 'API key is inactive'
        if ((as === inactive) !== isInactiveExample) continue
        const res = await server.request(method, url, { key: as, ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }) })
        expect(res.body, `${method} ${path} ${status}`).toEqual(expected)
        checked++
      }
    }
    expect(checked).toBeGreaterThanOrEqual(40)
  })

  it('400 for a malformed id or a body without its first required field; 404 for a missing resource (under existing parents)', async () => {
    // An application of its own (the example customer exists in the first), with the parents of the paths with
    // several ids: /webhooks/{id}/deliveries/…, /customers/{customerId}/liquidation_addresses/{liquidationAddressId}/….
    const key = await server.createKey()
    const webhook = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: bodySample('POST', '/api/v0/webhooks') })
    const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: bodySample('POST', '/api/v0/customers') })
    // Another address than the example's: an address is taken once.
    const address = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, {
      key: await server.createKey({ appId: key.appId, environment: 'development' }),
      body: { ...(bodySample('POST', '/api/v0/customers/{customerId}/liquidation_addresses') as object), address: randomEvmAddress() },
    })
    expect([webhook.status, customer.status, address.status]).toEqual([201, 201, 201])
    const parents = { id: webhook.body.id, customerId: customer.body.id, liquidationAddressId: address.body.id }
    let checked = 0
    for (const [method, path, operation] of coreOperations()) {
      const badRequest = example(operation, 400)
      if (badRequest !== undefined) {
        const hasId = path.includes('{')
        // An id in the query (a list's filter, e.g. wallet_id) is the one the example names when the path has none.
        const queryId = hasId ? undefined : operation.parameters?.filter((parameter) => parameter.in === 'query' && parameter.schema?.format === 'uuid').at(-1)?.name
        // A malformed id with the example body; without an id, the example body without its first required field.
        const firstRequired = operation.requestBody?.content['application/json']?.schema?.required?.[0]
        const body = operation.requestBody === undefined ? undefined : { ...(bodySample(method, path) as Record<string, unknown>) }
        if (!hasId && body !== undefined && firstRequired !== undefined) delete body[firstRequired]
        const url = hasId ? pathWith(path, 'not-a-uuid') : queryId !== undefined ? `${path}?${queryId}=not-a-uuid` : path
        const res = await server.request(method, url, { key, ...(body === undefined ? {} : { body }) })
        expect(res.body, `${method} ${path} 400`).toEqual(badRequest)
        checked++
      }
      const notFound = example(operation, 404)
      if (notFound !== undefined) {
        const body = operation.requestBody === undefined ? {} : { body: bodySample(method, path) }
        const res = await server.request(method, pathWith(path, MISSING_UUID, parents), { key, ...body })
        expect(res.body, `${method} ${path} 404`).toEqual(notFound)
        checked++
      }
    }
    expect(checked).toBeGreaterThanOrEqual(35)
  })
})

describe('the money examples are what the server answers for that money', () => {
  /** What "Example Value" shows for an operation's answer: the response's own example, else built from its fields. */
  function exampleOf<T>(method: string, path: string, status = '200'): T {
    const media = document.paths[path]?.[method.toLowerCase()]?.responses[status]?.content?.['application/json']
    if (media?.schema === undefined) throw new Error(`${method} ${path} has no JSON answer ${status}`)
    return (media.example ?? sample(media.schema)) as T
  }

  /** `value` with each example id or address (a key of `actual`) written as the server's. */
  function withActual<T>(value: T, actual: ReadonlyMap<string, string>): T {
    let text = JSON.stringify(value)
    for (const [example, served] of actual) text = text.replaceAll(example, served)
    return JSON.parse(text) as T
  }

  it("the example deposit at the example liquidation address: its drain, paid out by ACH, is the Drain example (a list of one, the DrainList's)", async () => {
    if (exampleAddress === undefined || exampleDrain === undefined) throw new Error('the example deposit was not made')
    const drainsPath = '/api/v0/customers/{customerId}/liquidation_addresses/{liquidationAddressId}/drains'
    const expected = exampleOf<Drain & Record<string, unknown>>('GET', `${drainsPath}/{drainId}`)
    expect(exampleOf('POST', '/api/v0/customers/{customerId}/liquidation_addresses/{liquidationAddressId}/simulate_deposit', '201')).toEqual(expected)
    // The example's parents are the customer and liquidation address examples.
    expect(expected.customer_id).toBe(exampleOf<{ id: string }>('GET', '/api/v0/customers/{id}').id)
    expect(expected.liquidation_address_id).toBe(exampleOf<{ id: string }>('GET', '/api/v0/customers/{customerId}/liquidation_addresses/{liquidationAddressId}').id)
    const path = `/api/v0/customers/${exampleAddress.customerId}/liquidation_addresses/${exampleAddress.id}/drains`
    let paid = exampleDrain
    const deadline = Date.now() + 10_000
    while (paid.state !== expected.state && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      paid = (await server.request<Drain>('GET', `${path}/${exampleDrain.id}`, { key: sandboxKey })).body
    }
    // What differs is the server's own: ids, times, the generated hash and trace number (of the example's form).
    expect(paid.deposit_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(expected.deposit_tx_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(paid.destination.trace_number).toMatch(/^[0-9]{15}$/)
    expect(expected.destination.trace_number).toMatch(/^[0-9]{15}$/)
    expect(paid).toEqual({
      ...expected,
      id: exampleDrain.id,
      customer_id: exampleAddress.customerId,
      liquidation_address_id: exampleAddress.id,
      deposit_tx_hash: paid.deposit_tx_hash,
      destination: { ...expected.destination, trace_number: paid.destination.trace_number },
      created_at: paid.created_at,
      updated_at: paid.updated_at,
    })
    const list = await server.request('GET', path, { key: sandboxKey })
    expect(list.body).toEqual({ ...exampleOf<object>('GET', drainsPath), data: [paid] })
  })

  it('wallets holding the example money: GET /wallets, /balance, /balance/usdc and /balance/eurc answer the examples', async () => {
    const examples = exampleOf<{ data: { id: string; address: string; created_at: string; updated_at: string; app: { id: string; name: string } }[] }>('GET', '/api/v0/wallets')
    const application = await server.app.repos.apps.createApp(examples.data[0]?.app.name ?? '')
    const owner = await server.createKey({ appId: application.id, environment: 'development' })
    const wallets = (await server.request<typeof examples>('GET', '/api/v0/wallets', { key: owner })).body.data
    const allBalances = exampleOf<Record<'usdc' | 'eurc', { balances: { balance: string; pending_incoming: string; pending_outgoing: string }[] }>>('GET', '/api/v0/balance')
    const environment: LedgerEnvironment = 'sandbox'
    for (const [i, wallet] of wallets.entries()) {
      const stored = await storedWallet(server.app.db, environment, owner.appId, wallet.id)
      for (const currency of WALLET_CURRENCIES) {
        const holding = allBalances[currency].balances[i]
        if (holding === undefined) throw new Error(`no example holding of ${currency} for wallet ${i}`)
        // Reserved money left the balance: it arrived with it.
        const arrived = parseAmount(holding.balance, currency) + parseAmount(holding.pending_outgoing, currency)
        if (arrived > 0n) await deposit(server.app.db, stored, currency, formatAmount(arrived, currency))
        if (holding.pending_outgoing !== '0.000000') await withdraw(server.app.db, stored, currency, holding.pending_outgoing, 'pending')
        if (holding.pending_incoming !== '0.000000') await deposit(server.app.db, stored, currency, holding.pending_incoming, 'pending')
      }
    }
    const actual = new Map<string, string>([[examples.data[0]?.app.id ?? '', application.id]])
    for (const [i, wallet] of wallets.entries()) {
      actual.set(examples.data[i]?.id ?? '', wallet.id)
      actual.set(examples.data[i]?.address ?? '', wallet.address)
    }
    const listed = await server.request<typeof examples>('GET', '/api/v0/wallets', { key: owner })
    const times = (index: number) => ({ created_at: listed.body.data[index]?.created_at, updated_at: listed.body.data[index]?.updated_at })
    expect(listed.body).toEqual({ data: withActual(examples, actual).data.map((wallet, i) => ({ ...wallet, ...times(i) })) })
    expect((await server.request('GET', '/api/v0/balance', { key: owner })).body).toEqual(withActual(allBalances, actual))
    expect((await server.request('GET', '/api/v0/balance/usdc', { key: owner })).body).toEqual(withActual(exampleOf<object>('GET', '/api/v0/balance/usdc'), actual))
    expect((await server.request('GET', '/api/v0/balance/eurc', { key: owner })).body).toEqual(withActual(allBalances.eurc, actual))
  })

  it("the sandbox's rate from usd to eur is the ExchangeRate example: buy < mid < sell", async () => {
    const expected = exampleOf<{ midmarket_rate: string; buy_rate: string; sell_rate: string }>('GET', '/api/v0/exchange-rate')
    expect(Number(expected.buy_rate)).toBeLessThan(Number(expected.midmarket_rate))
    expect(Number(expected.midmarket_rate)).toBeLessThan(Number(expected.sell_rate))
    for (const path of ['/api/v0/exchange-rate?from=usd&to=eur', '/api/v0/exchange-rate/usd-to-eur']) {
      const res = await server.request<{ timestamp: string }>('GET', path, { key: sandboxKey })
      expect(res.body, path).toEqual({ ...expected, timestamp: res.body.timestamp })
    }
  })

  it('the example direct-bank transfer and bank payment intent, paid out into the wallet on base, are the Transfer and PaymentIntent examples (each the first of its list example)', async () => {
    if (exampleTransfer === undefined || exampleIntent === undefined || exampleWallet === undefined) throw new Error('the example transfer and intent were not made')
    for (const [made, path] of [
      [exampleTransfer, '/api/v0/transfers'],
      [exampleIntent, '/api/v0/payment-intents'],
    ] as const) {
      const expected = exampleOf<Transfer>('GET', `${path}/{id}`)
      expect(exampleOf<{ data: Transfer[] }>('GET', path).data).toEqual([expected])
      // The example's wallet is the base wallet of the wallets' example.
      expect(expected.destination.bridge_wallet_id).toBe(exampleOf<{ data: { id: string }[] }>('GET', '/api/v0/wallets').data[0]?.id)
      let paid = made
      const deadline = Date.now() + 10_000
      while (paid.state !== expected.state && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        paid = (await server.request<Transfer>('GET', `${path}/${made.id}`, { key: sandboxKey })).body
      }
      // What differs is the server's own: ids, times, the reference, the account number and the hash (of the example's form).
      const instructions = paid.source_deposit_instructions
      for (const value of [paid, expected]) {
        expect(value.source_deposit_instructions.deposit_message, path).toMatch(/^DP[A-Z2-7]{12}$/)
        expect(value.source_deposit_instructions.bank_account_number, path).toMatch(/^[0-9]{12}$/)
        expect(value.destination_tx_hash, path).toMatch(/^0x[0-9a-f]{64}$/)
      }
      const actual = new Map([
        [expected.destination.bridge_wallet_id ?? '', exampleWallet.id],
        [expected.destination.to_address ?? '', exampleWallet.address],
      ])
      expect(paid, path).toEqual(
        withActual(
          {
            ...expected,
            id: made.id,
            source_deposit_instructions: { ...expected.source_deposit_instructions, deposit_message: instructions.deposit_message, bank_account_number: instructions.bank_account_number },
            destination_tx_hash: paid.destination_tx_hash,
            created_at: paid.created_at,
            updated_at: paid.updated_at,
          },
          actual,
        ),
      )
    }
  })

  it('the example product is the Product example with its linked image (the example has an uploaded one too); the example test payment and its refund are the examples', async () => {
    if (exampleProduct === undefined || examplePayment === undefined) throw new Error('the example product and payment were not made')
    const product = exampleOf<{ images: string[] } & Record<string, unknown>>('POST', '/api/v0/products', '201')
    expect(exampleOf('GET', '/api/v0/products/{id}')).toEqual(product)
    expect(exampleProduct).toEqual({ ...product, id: exampleProduct.id, images: product.images.slice(1), created_at: exampleProduct.created_at, updated_at: exampleProduct.updated_at })
    const { payment, refund } = examplePayment
    expect(payment).toEqual({ ...exampleOf<object>('POST', '/api/v0/test-payment', '201'), id: payment.id, timestamp: payment.timestamp })
    expect(refund).toEqual({ ...exampleOf<object>('POST', '/api/v0/test-payment/{id}/refund'), id: refund.id, paymentId: payment.id, timestamp: refund.timestamp })
  })
})
