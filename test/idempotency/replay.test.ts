import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'
import {
  type AppTable,
  countRows,
  errorBody,
  expectReplay,
  freshKey,
  INVALID_KEY,
  KEY_REUSED,
  postWithKey,
} from './helpers.js'

let server: TestServer
let key: TestKey
let customerId: string

beforeAll(async () => {
  server = await startTestServer()
  // A development key: a live liquidation address takes a receiving address of the platform, which this server has none of.
  key = await server.createKey({ environment: 'development' })
  const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', {
    key,
    body: { first_name: 'Grace', last_name: 'Hopper', phone_number: '+15550101' },
  })
  expect(customer.status).toBe(201)
  customerId = customer.body.id
})
afterAll(async () => server.close())

interface PostRoute {
  name: string
  path: () => string
  /** a valid body, different on each call where the route needs it (unique addresses) */
  body: () => Record<string, unknown>
  /** a valid body that differs from body() */
  otherBody: () => Record<string, unknown>
  /** the table the resource lands in */
  table: AppTable
  /** a field the replay must hold as the first response did (a secret shown once) */
  shownOnce?: string
}

const ROUTES: PostRoute[] = [
  {
    name: 'POST /customers',
    path: () => '/api/v0/customers',
    body: () => ({ first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }),
    otherBody: () => ({ first_name: 'Ada', last_name: 'Byron', phone_number: '+15550100' }),
    table: 'customers',
  },
  {
    name: 'POST /taxes',
    path: () => '/api/v0/taxes',
    body: () => ({ name: 'VAT', percentage: 20 }),
    otherBody: () => ({ name: 'VAT', percentage: 21 }),
    table: 'taxes',
  },
  {
    name: 'POST /webhooks (generated signing secret)',
    path: () => '/api/v0/webhooks',
    body: () => ({ name: 'orders', url: 'https://example.com/hooks' }),
    otherBody: () => ({ name: 'orders', url: 'https://example.com/other' }),
    table: 'webhooks',
    shownOnce: 'signing_secret',
  },
  {
    name: 'POST /customers/{customerId}/liquidation_addresses',
    path: () => `/api/v0/customers/${customerId}/liquidation_addresses`,
    body: () => ({ chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_acct_1' }),
    otherBody: () => ({ chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_acct_1' }),
    table: 'liquidation_addresses',
  },
]

async function snapshot(appId: string, table: AppTable) {
  return {
    resources: await countRows(server, table, appId),
    events: await countRows(server, 'events', appId),
    keys: await countRows(server, 'idempotency_keys', appId),
  }
}

describe.each(ROUTES)('$name with an Idempotency-Key', (route) => {
  it('the same request again replays the first response byte for byte and changes nothing', async () => {
    const idempotencyKey = freshKey()
    const body = route.body()
    const before = await snapshot(key.appId, route.table)
    const first = await postWithKey(server, key, route.path(), idempotencyKey, body)
    expect(first.status, first.text).toBe(201)
    const afterFirst = await snapshot(key.appId, route.table)
    expect(afterFirst).toEqual({ resources: before.resources + 1, events: before.events + 1, keys: before.keys + 1 })

    const second = await postWithKey<Record<string, unknown>>(server, key, route.path(), idempotencyKey, body)
    expectReplay(first, second)
    if (route.shownOnce !== undefined) {
      expect(second.body[route.shownOnce]).toEqual(expect.stringMatching(/^whsec_/))
      expect(second.body[route.shownOnce]).toBe((first.body as Record<string, unknown>)[route.shownOnce])
    }
    const third = await postWithKey(server, key, route.path(), idempotencyKey, body)
    expectReplay(first, third)
    expect(await snapshot(key.appId, route.table)).toEqual(afterFirst)
  })

  it('the same key with another body is 422 and changes nothing', async () => {
    const idempotencyKey = freshKey()
    const original = route.body()
    const first = await postWithKey(server, key, route.path(), idempotencyKey, original)
    expect(first.status, first.text).toBe(201)
    const before = await snapshot(key.appId, route.table)
    const refused = await postWithKey(server, key, route.path(), idempotencyKey, route.otherBody())
    expect(refused.status).toBe(422)
    expect(refused.body).toEqual(errorBody(422, 'Unprocessable Entity', KEY_REUSED))
    expect(refused.headers.get('idempotent-replayed')).toBeNull()
    expect(await snapshot(key.appId, route.table)).toEqual(before)
    // The key still replays its own request.
    expectReplay(first, await postWithKey(server, key, route.path(), idempotencyKey, original))
  })
})

describe('POST routes on one webhook', () => {
  async function createWebhook(): Promise<string> {
    const res = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'rotating', url: 'https://example.com/hooks' } })
    expect(res.status).toBe(201)
    return res.body.id
  }

  it('a secret rotation replayed answers the same new secret, and the secret was rotated once', async () => {
    const webhookId = await createWebhook()
    const path = `/api/v0/webhooks/${webhookId}/secret/rotate`
    const idempotencyKey = freshKey()
    const events = await countRows(server, 'events', key.appId)
    // No body: the route treats it as {}, so an explicit {} is the same request.
    const first = await postWithKey<{ signing_secret: string }>(server, key, path, idempotencyKey, undefined)
    expect(first.status, first.text).toBe(200)
    expect(first.body.signing_secret).toMatch(/^whsec_/)
    expectReplay(first, await postWithKey(server, key, path, idempotencyKey, undefined))
    expectReplay(first, await postWithKey(server, key, path, idempotencyKey, {}))
    const current = await server.request<{ signing_secret: string }>('GET', `/api/v0/webhooks/${webhookId}/secret`, { key })
    expect(current.body.signing_secret).toBe(first.body.signing_secret)
    expect(await countRows(server, 'events', key.appId)).toBe(events + 1)
  })

  it('a test event replayed answers the same delivery, sent once', async () => {
    const webhookId = await createWebhook()
    const path = `/api/v0/webhooks/${webhookId}/test`
    const idempotencyKey = freshKey()
    const deliveries = await countRows(server, 'deliveries', key.appId)
    const first = await postWithKey(server, key, path, idempotencyKey, undefined)
    expect(first.status, first.text).toBe(202)
    expectReplay(first, await postWithKey(server, key, path, idempotencyKey, undefined))
    expect(await countRows(server, 'deliveries', key.appId)).toBe(deliveries + 1)
  })
})

describe('what counts as the same request', () => {
  const path = '/api/v0/taxes'

  it('a body with its fields in another order, or other white space, is the same request', async () => {
    const idempotencyKey = freshKey()
    const first = await server.request('POST', path, { key, body: '{"name":"GST","percentage":10}', headers: { 'Idempotency-Key': idempotencyKey } })
    expect(first.status).toBe(201)
    const reordered = await server.request('POST', path, { key, body: '{ "percentage": 10,\n "name": "GST" }', headers: { 'Idempotency-Key': idempotencyKey } })
    expectReplay(first, reordered)
  })

  it('the same key and body on another path is 422', async () => {
    const idempotencyKey = freshKey()
    const first = await postWithKey(server, key, path, idempotencyKey, { name: 'GST', percentage: 10 })
    expect(first.status).toBe(201)
    const customers = await countRows(server, 'customers', key.appId)
    const elsewhere = await postWithKey(server, key, '/api/v0/customers', idempotencyKey, { name: 'GST', percentage: 10 })
    // Validation runs first: a body the route refuses is 400 whatever the key holds.
    expect(elsewhere.status).toBe(400)
    const customer = await postWithKey(server, key, '/api/v0/customers', idempotencyKey, { first_name: 'A', last_name: 'B', phone_number: '+15550100' })
    expect(customer.status).toBe(422)
    expect(customer.body).toEqual(errorBody(422, 'Unprocessable Entity', KEY_REUSED))
    expect(await countRows(server, 'customers', key.appId)).toBe(customers)
  })

  it('the query string is not part of the request (no POST route reads one)', async () => {
    const idempotencyKey = freshKey()
    const first = await postWithKey(server, key, `${path}?a=1`, idempotencyKey, { name: 'GST', percentage: 10 })
    expect(first.status).toBe(201)
    expectReplay(first, await postWithKey(server, key, `${path}?b=2`, idempotencyKey, { name: 'GST', percentage: 10 }))
  })

  it('a response the handler answered with a 4xx is stored and replayed too (409 duplicate email)', async () => {
    const email = `dup.${freshKey()}@example.com`
    const customer = { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100', email }
    expect((await server.request('POST', '/api/v0/customers', { key, body: customer })).status).toBe(201)
    const idempotencyKey = freshKey()
    const first = await postWithKey(server, key, '/api/v0/customers', idempotencyKey, customer)
    expect(first.status).toBe(409)
    const keys = await countRows(server, 'idempotency_keys', key.appId)
    expectReplay(first, await postWithKey(server, key, '/api/v0/customers', idempotencyKey, customer))
    expect(await countRows(server, 'idempotency_keys', key.appId)).toBe(keys)
  })

  it('a request that fails validation (400) is not stored: the key is still free', async () => {
    const idempotencyKey = freshKey()
    const invalid = await postWithKey(server, key, path, idempotencyKey, { name: 'GST', percentage: 'ten' })
    expect(invalid.status).toBe(400)
    expect(await server.app.db.selectFrom('idempotency_keys').select('key').where('key', '=', idempotencyKey).execute()).toEqual([])
    const valid = await postWithKey(server, key, path, idempotencyKey, { name: 'GST', percentage: 10 })
    expect(valid.status).toBe(201)
    expect(valid.headers.get('idempotent-replayed')).toBeNull()
  })

  it('a request refused by authentication is not stored', async () => {
    const idempotencyKey = freshKey()
    const refused = await server.request('POST', path, {
      key: { ...key, headers: { ...key.headers, 'x-client-secret': 'sk_test_wrong' } },
      body: { name: 'GST', percentage: 10 },
      headers: { 'Idempotency-Key': idempotencyKey },
    })
    expect(refused.status).toBe(401)
    const valid = await postWithKey(server, key, path, idempotencyKey, { name: 'GST', percentage: 10 })
    expect(valid.status).toBe(201)
    expect(valid.headers.get('idempotent-replayed')).toBeNull()
  })
})

describe('two applications', () => {
  it('using the same key are independent, whichever key pair of an application sends it', async () => {
    const first = await server.createKey()
    const secondKeyOfFirst = await server.createKey({ appId: first.appId })
    const other = await server.createKey()
    const idempotencyKey = freshKey('shared')
    const body = { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }

    const mine = await postWithKey<{ id: string }>(server, first, '/api/v0/customers', idempotencyKey, body)
    const theirs = await postWithKey<{ id: string }>(server, other, '/api/v0/customers', idempotencyKey, body)
    expect(mine.status).toBe(201)
    expect(theirs.status).toBe(201)
    expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    expect(theirs.body.id).not.toBe(mine.body.id)
    // Another application may even use it for another request.
    const theirTax = await postWithKey(server, other, '/api/v0/taxes', freshKey('x'), { name: 'VAT', percentage: 1 })
    expect(theirTax.status).toBe(201)

    expectReplay(mine, await postWithKey(server, secondKeyOfFirst, '/api/v0/customers', idempotencyKey, body))
    expect(await countRows(server, 'customers', first.appId)).toBe(1)
    expect(await countRows(server, 'customers', other.appId)).toBe(1)
  })
})

describe('the Idempotency-Key header', () => {
  const path = '/api/v0/taxes'
  const invalid = errorBody(400, 'Bad Request', INVALID_KEY)

  async function taxWith(idempotencyKey: string) {
    return server.request('POST', path, { key, body: { name: 'VAT', percentage: 5 }, headers: { 'Idempotency-Key': idempotencyKey } })
  }

  it.each([
    ['empty (0 characters)', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a non-ASCII character', `caf\u00e9-${Date.now()}`],
    // The only control character HTTP lets through in a header value (the parser refuses the rest).
    ['a tab (a control character)', `a\tb-${Date.now()}`],
  ])('%s → 400 naming the header, nothing created', async (_label, value) => {
    const taxes = await countRows(server, 'taxes', key.appId)
    const res = await taxWith(value)
    expect(res.status).toBe(400)
    expect(res.body).toEqual(invalid)
    expect(await countRows(server, 'taxes', key.appId)).toBe(taxes)
  })

  it.each([
    ['1 character', () => String.fromCharCode(33 + Math.floor(Math.random() * 94))],
    ['255 characters', () => freshKey().padEnd(255, 'z')],
    ['every printable ASCII character, space included', () => `${freshKey()} !"#$%&'()*+,-./:;<=>?@[\\]^_\`{|}~`],
  ])('%s is accepted and replays', async (_label, makeKey) => {
    const idempotencyKey = makeKey()
    const first = await taxWith(idempotencyKey)
    expect(first.status).toBe(201)
    expectReplay(first, await taxWith(idempotencyKey))
  })

  it('without the header, the same POST twice creates twice', async () => {
    const taxes = await countRows(server, 'taxes', key.appId)
    expect((await server.request('POST', path, { key, body: { name: 'VAT', percentage: 5 } })).status).toBe(201)
    expect((await server.request('POST', path, { key, body: { name: 'VAT', percentage: 5 } })).status).toBe(201)
    expect(await countRows(server, 'taxes', key.appId)).toBe(taxes + 2)
  })

  it('is ignored by GET, PUT, PATCH and DELETE (even when malformed)', async () => {
    const tax = await postWithKey<{ id: string }>(server, key, path, freshKey(), { name: 'VAT', percentage: 5 })
    const malformed = { 'Idempotency-Key': 'k'.repeat(300) }
    expect((await server.request('GET', `${path}/${tax.body.id}`, { key, headers: malformed })).status).toBe(200)
    const reused = { 'Idempotency-Key': freshKey() }
    const put1 = await server.request('PUT', `${path}/${tax.body.id}`, { key, body: { percentage: 6 }, headers: reused })
    const put2 = await server.request('PUT', `${path}/${tax.body.id}`, { key, body: { percentage: 7 }, headers: reused })
    expect([put1.status, put2.status]).toEqual([200, 200])
    expect(put2.headers.get('idempotent-replayed')).toBeNull()
    expect((await server.request('PATCH', `/api/v0/customers/${customerId}`, { key, body: { last_name: 'H' }, headers: malformed })).status).toBe(200)
    expect((await server.request('DELETE', `${path}/${tax.body.id}`, { key, headers: malformed })).status).toBe(200)
    expect(await server.app.db.selectFrom('idempotency_keys').select('key').where('key', 'in', [reused['Idempotency-Key'], malformed['Idempotency-Key']]).execute()).toEqual([])
  })
})
