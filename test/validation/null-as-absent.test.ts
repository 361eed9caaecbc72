import { Type } from 'typebox'
import type { ValidateFunction } from 'ajv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRules } from '../../src/validation/rules.js'
import { createValidatorCompiler } from '../../src/validation/validator.js'
import { randomEvmAddress, startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * The platform's published client sends every field it knows, unset ones as null: on every
 * request body, null for an optional field means "absent" (a default applies, an update leaves
 * the field as it is), and null for a required field is still a 400 naming it.
 */
let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())

function badRequest(message: string) {
  return { statusCode: 400, error: 'Bad Request', message }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

async function count(table: string, key: TestKey): Promise<number> {
  return server.database.count(`select count(*) as n from ${table} where app_id = ?`, key.appId)
}

async function events(key: TestKey, type: string): Promise<number> {
  return server.database.count('select count(*) as n from events where app_id = ? and type = ?', key.appId, type)
}

describe('customers', () => {
  const required = { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }

  it('POST: null email, customer_type and status are absent (status defaults to ACTIVE)', async () => {
    const key = await server.createKey()
    const res = await server.request<Record<string, unknown>>('POST', '/api/v0/customers', {
      key,
      body: { ...required, email: null, customer_type: null, status: null },
    })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ ...required, email: null, customer_type: null, status: 'ACTIVE' })
  })

  it.each([
    ['first_name', 'first_name must be a string'],
    ['last_name', 'last_name must be a string'],
    ['phone_number', 'phone_number must be a string'],
  ])('POST: a null %s (required) is a 400 naming it, and nothing is stored', async (field, message) => {
    const key = await server.createKey()
    const res = await server.request('POST', '/api/v0/customers', { key, body: { ...required, [field]: null } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(badRequest(message))
    expect(await count('customers', key)).toBe(0)
  })

  it('PATCH: a body of only nulls changes nothing (not updated_at) and emits no event', async () => {
    const key = await server.createKey()
    const created = await server.request<{ id: string }>('POST', '/api/v0/customers', {
      key,
      body: { ...required, email: 'ada@example.com', customer_type: 'Startup', status: 'BLACKLISTED' },
    })
    await sleep(5)
    const everyField = { first_name: null, last_name: null, phone_number: null, email: null, customer_type: null, status: null }
    const res = await server.request('PATCH', `/api/v0/customers/${created.body.id}`, { key, body: everyField })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual(created.body)
    expect((await server.request('GET', `/api/v0/customers/${created.body.id}`, { key })).body).toEqual(created.body)
    expect(await events(key, 'customer.updated')).toBe(0)
  })

  it('PATCH: a null beside a value leaves that field as it is', async () => {
    const key = await server.createKey()
    const created = await server.request<{ id: string }>('POST', '/api/v0/customers', {
      key,
      body: { ...required, email: 'kept@example.com', customer_type: 'Enterprise' },
    })
    const res = await server.request('PATCH', `/api/v0/customers/${created.body.id}`, { key, body: { first_name: 'Augusta', email: null, customer_type: null } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ first_name: 'Augusta', email: 'kept@example.com', customer_type: 'Enterprise' })
    expect(await events(key, 'customer.updated')).toBe(1)
  })
})

describe('taxes', () => {
  it('POST: null description, active and appIds are absent (description null, active true)', async () => {
    const key = await server.createKey()
    const res = await server.request('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20, description: null, active: null, appIds: null } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ name: 'VAT', percentage: 20, description: null, active: true })
  })

  it.each([
    ['name', 'name must be a string'],
    ['percentage', 'percentage must be a number'],
  ])('POST: a null %s (required) is a 400 naming it, and nothing is stored', async (field, message) => {
    const key = await server.createKey()
    const res = await server.request('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20, [field]: null } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(badRequest(message))
    expect(await count('taxes', key)).toBe(0)
  })

  it('PUT: a body of only nulls changes nothing (not updated_at) and emits no event', async () => {
    const key = await server.createKey()
    const created = await server.request<{ id: string }>('POST', '/api/v0/taxes', { key, body: { name: 'Kept', percentage: 7, description: 'stays', active: false } })
    await sleep(5)
    const res = await server.request('PUT', `/api/v0/taxes/${created.body.id}`, {
      key,
      body: { name: null, percentage: null, description: null, active: null, appIds: null },
    })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual(created.body)
    expect(await events(key, 'tax.updated')).toBe(0)
  })

  it('PUT: a null description beside a value does not clear it', async () => {
    const key = await server.createKey()
    const created = await server.request<{ id: string }>('POST', '/api/v0/taxes', { key, body: { name: 'Kept', percentage: 7, description: 'stays' } })
    const res = await server.request('PUT', `/api/v0/taxes/${created.body.id}`, { key, body: { percentage: 8, description: null } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ name: 'Kept', percentage: 8, description: 'stays' })
  })
})

describe('liquidation addresses', () => {
  let key: TestKey
  let customerId: string
  beforeAll(async () => {
    // A development key: a live liquidation address takes a receiving address of the platform (docs/chains.md).
    key = await server.createKey({ environment: 'development' })
    const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'A', last_name: 'B', phone_number: '1' } })
    customerId = customer.body.id
  })
  const path = () => `/api/v0/customers/${customerId}/liquidation_addresses`
  const everyOptionalNull = {
    prefunded_account_id: null,
    bridge_wallet_id: null,
    destination_payment_rail: null,
    destination_currency: null,
    destination_wire_message: null,
    destination_sepa_reference: null,
    destination_ach_reference: null,
    destination_address: null,
    destination_blockchain_memo: null,
    return_address: null,
    custom_developer_fee_percent: null,
  }

  it('POST: every optional field null is absent (rail ach and currency usd by default)', async () => {
    const address = randomEvmAddress()
    const res = await server.request('POST', path(), {
      key,
      body: { chain: 'ethereum', currency: 'usdc', address, external_account_id: 'ext_1', ...everyOptionalNull },
    })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ address, destination_payment_rail: 'ach', destination_currency: 'usd', external_account_id: 'ext_1' })
    expect(res.body).not.toHaveProperty('custom_developer_fee_percent')
    expect(res.body).not.toHaveProperty('prefunded_account_id')
  })

  it('POST: a null external_account_id is absent, so the default rail still needs one', async () => {
    const before = await count('liquidation_addresses', key)
    const res = await server.request('POST', path(), { key, body: { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: null } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(badRequest('external_account_id is required when destination_payment_rail is ach'))
    expect(await count('liquidation_addresses', key)).toBe(before)
  })

  it.each([
    ['chain', 'chain must be one of the following values'],
    ['currency', 'currency must be one of the following values'],
    ['address', 'address must be a string'],
  ])('POST: a null %s (required) is a 400 naming it, and nothing is stored', async (field, message) => {
    const before = await count('liquidation_addresses', key)
    const res = await server.request<{ message: string }>('POST', path(), {
      key,
      body: { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_1', [field]: null },
    })
    expect(res.status).toBe(400)
    expect(res.body.message).toContain(message)
    expect(await count('liquidation_addresses', key)).toBe(before)
  })
})

describe('webhooks', () => {
  const required = { name: 'hook', url: 'https://example.com/hook' }

  it('POST: null isActive, encrypted and signing_secret are absent (active, not encrypted, a generated secret)', async () => {
    const key = await server.createKey()
    const res = await server.request('POST', '/api/v0/webhooks', { key, body: { ...required, isActive: null, encrypted: null, signing_secret: null } })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ ...required, isActive: true, encrypted: false, signing_secret: expect.stringMatching(/^whsec_/) })
  })

  it.each([
    ['name', 'name must be a string'],
    ['url', 'url must be a string'],
  ])('POST: a null %s (required) is a 400 naming it, and nothing is stored', async (field, message) => {
    const key = await server.createKey()
    const res = await server.request('POST', '/api/v0/webhooks', { key, body: { ...required, [field]: null } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(badRequest(message))
    expect(await count('webhooks', key)).toBe(0)
  })

  it('PATCH: a body of only nulls changes nothing (not updated_at, not the secret) and emits no event', async () => {
    const key = await server.createKey()
    const created = await server.request<{ id: string; signing_secret: string }>('POST', '/api/v0/webhooks', { key, body: { ...required, isActive: false, encrypted: true } })
    const { signing_secret: secret, ...webhook } = created.body
    await sleep(5)
    const res = await server.request('PATCH', `/api/v0/webhooks/${webhook.id}`, {
      key,
      body: { name: null, url: null, isActive: null, signing_secret: null, encrypted: null },
    })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual(webhook)
    const stored = await server.database.query<{ signing_secret: string }>('select signing_secret from webhooks where id = ?', webhook.id)
    expect(stored.map((row) => row.signing_secret)).toEqual([secret])
    expect(await events(key, 'webhook.updated')).toBe(0)
  })

  it('PATCH: a null beside a value leaves that field as it is', async () => {
    const key = await server.createKey()
    const created = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { ...required, isActive: false } })
    const res = await server.request('PATCH', `/api/v0/webhooks/${created.body.id}`, { key, body: { name: 'renamed', isActive: null, url: null } })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ name: 'renamed', url: required.url, isActive: false })
  })
})

describe('the compiled validator', () => {
  const compile = createValidatorCompiler(createRules({ allowHttpLoopback: true }))
  const validator = (schema: object, httpPart: string) => compile({ schema, httpPart, method: 'POST', url: '/test' }) as ValidateFunction

  const schema = Type.Object({
    required: Type.String(),
    optional: Type.Optional(Type.String()),
    nullable: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    nested: Type.Optional(Type.Object({ inner: Type.Optional(Type.Integer()), must: Type.Integer() })),
    list: Type.Optional(Type.Array(Type.Object({ inner: Type.Optional(Type.Integer()) }), { maxItems: 10 })),
  })

  it('drops nulls of optional properties, nested objects and array items included, and keeps nullable ones', () => {
    const validate = validator(schema, 'body')
    const data = { required: 'r', optional: null, nullable: null, nested: { inner: null, must: 1 }, list: [{ inner: null }, { inner: 2 }] }
    expect(validate(data), JSON.stringify(validate.errors)).toBe(true)
    expect(data).toEqual({ required: 'r', nullable: null, nested: { must: 1 }, list: [{}, { inner: 2 }] })
  })

  it('keeps a null for a required property, nested too, and names it', () => {
    const validate = validator(schema, 'body')
    expect(validate({ required: null })).toBe(false)
    expect(validate.errors?.map((error) => error.instancePath)).toEqual(['/required'])
    expect(validate({ required: 'r', nested: { must: null } })).toBe(false)
    expect(validate.errors?.map((error) => error.instancePath)).toEqual(['/nested/must'])
  })

  it('leaves query strings as they are (a null there still meets the schema)', () => {
    const validate = validator(Type.Object({ optional: Type.Optional(Type.Enum(['a', 'b'])) }), 'querystring')
    const data = { optional: null }
    expect(validate(data)).toBe(false)
    expect(validate.errors?.map((error) => error.instancePath)).toEqual(['/optional'])
    expect(data).toEqual({ optional: null })
  })
})
