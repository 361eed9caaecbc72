import type { Customer, CustomerList } from '../../../src/resources/customers/schemas.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_UUID, startTestServer, type ApiResponse, type TestKey, type TestServer } from '../../helper.js'



interface ErrorBody {
  statusCode: number
  error: string
  message: string
  details?: string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const CUSTOMER_TYPES = ['Individual', 'Startup', 'Small Business', 'Medium Business', 'Enterprise', 'Non-Profit', 'Government'] as const
const STATUSES = ['ACTIVE', 'BLACKLISTED', 'DEACTIVATED', 'DELETED'] as const

let server: TestServer
/** the main caller */
let key: TestKey
/** a second application */
let otherKey: TestKey

beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
  otherKey = await server.createKey()
})
afterAll(async () => server.close())

let counter = 0
function uniqueEmail(prefix = 'user'): string {
  counter += 1
  return `${prefix}.${counter}.${Math.random().toString(36).slice(2, 8)}@example.com`
}

function badRequest(message: string): ErrorBody {
  return { statusCode: 400, error: 'Bad Request', message }
}

const NOT_FOUND: ErrorBody = { statusCode: 404, error: 'Not Found', message: 'Customer not found' }
const CONFLICT: ErrorBody = { statusCode: 409, error: 'Conflict', message: 'Customer with this email already exists' }
const INVALID_ID: ErrorBody = badRequest('Invalid customer ID format')

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

async function create(caller: TestKey, body: Record<string, unknown> = {}): Promise<Customer> {
  const res = await server.request<Customer>('POST', '/api/v0/customers', {
    key: caller,
    body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100', ...body },
  })
  expect(res.status, res.text).toBe(201)
  return res.body
}

async function list(caller: TestKey, query = ''): Promise<ApiResponse<CustomerList>> {
  return server.request<CustomerList>('GET', `/api/v0/customers${query}`, { key: caller })
}

async function total(caller: TestKey): Promise<number> {
  const res = await list(caller)
  expect(res.status).toBe(200)
  return res.body.total
}

async function getOne(caller: TestKey, id: string): Promise<ApiResponse<Customer>> {
  return server.request<Customer>('GET', `/api/v0/customers/${id}`, { key: caller })
}

describe('POST /api/v0/customers', () => {
  it('creates a customer and answers 201 with the whole object', async () => {
    const email = uniqueEmail('ada')
    const res = await server.request<Customer>('POST', '/api/v0/customers', {
      key,
      body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100', email, customer_type: 'Startup', status: 'BLACKLISTED' },
    })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      first_name: 'Ada',
      last_name: 'Lovelace',
      phone_number: '+15550100',
      email,
      customer_type: 'Startup',
      status: 'BLACKLISTED',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    })
    expect(res.body.updated_at).toBe(res.body.created_at)
    expect(Math.abs(Date.parse(res.body.created_at) - Date.now())).toBeLessThan(60_000)

    const fetched = await getOne(key, res.body.id)
    expect(fetched.status).toBe(200)
    expect(fetched.body).toEqual(res.body)
  })

  it('returns email and customer_type as null when absent, and status ACTIVE by default', async () => {
    const res = await server.request<Customer>('POST', '/api/v0/customers', {
      key,
      body: { first_name: 'Grace', last_name: 'Hopper', phone_number: '555' },
    })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      first_name: 'Grace',
      last_name: 'Hopper',
      phone_number: '555',
      email: null,
      customer_type: null,
      status: 'ACTIVE',
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    })
  })

  it('gives every customer its own id', async () => {
    const a = await create(key)
    const b = await create(key)
    expect(a.id).not.toBe(b.id)
  })

  it('allows several customers without an email in one application', async () => {
    const caller = await server.createKey()
    await create(caller)
    await create(caller)
    expect(await total(caller)).toBe(2)
  })

  it.each(CUSTOMER_TYPES)('accepts customer_type %s', async (customerType) => {
    const customer = await create(key, { customer_type: customerType })
    expect(customer.customer_type).toBe(customerType)
  })

  it.each(STATUSES)('accepts status %s', async (status) => {
    const customer = await create(key, { status })
    expect(customer.status).toBe(status)
  })

  it.each([
    ['first_name', 1],
    ['first_name', 100],
    ['last_name', 1],
    ['last_name', 100],
    ['phone_number', 1],
    ['phone_number', 20],
  ] as const)('accepts %s of length %i', async (field, length) => {
    const value = 'x'.repeat(length)
    const customer = await create(key, { [field]: value })
    expect(customer[field]).toBe(value)
  })

  it('accepts an email of exactly 255 characters', async () => {
    const email = `${'a'.repeat(255 - '@example.com'.length)}@example.com`
    expect(email).toHaveLength(255)
    const customer = await create(key, { email })
    expect(customer.email).toBe(email)
  })

  describe('409 on a duplicate email in the same application', () => {
    it('rejects the same email twice, and creates nothing', async () => {
      const caller = await server.createKey()
      const email = uniqueEmail('dup')
      await create(caller, { email })
      const res = await server.request('POST', '/api/v0/customers', {
        key: caller,
        body: { first_name: 'Other', last_name: 'Person', phone_number: '1', email },
      })
      expect(res.status).toBe(409)
      expect(res.body).toEqual(CONFLICT)
      expect(await total(caller)).toBe(1)
    })

    it('compares emails case-insensitively', async () => {
      const caller = await server.createKey()
      const email = uniqueEmail('Case.Test')
      await create(caller, { email })
      const res = await server.request('POST', '/api/v0/customers', {
        key: caller,
        body: { first_name: 'Other', last_name: 'Person', phone_number: '1', email: email.toUpperCase() },
      })
      expect(res.status).toBe(409)
      expect(res.body).toEqual(CONFLICT)
      expect(await total(caller)).toBe(1)
    })

    it('allows the same email in another application', async () => {
      const email = uniqueEmail('shared')
      const mine = await create(key, { email })
      const theirs = await create(otherKey, { email: email.toUpperCase() })
      expect(theirs.id).not.toBe(mine.id)
      expect(theirs.email).toBe(email.toUpperCase())
    })

    it('PATCH to another customer’s email (any case) answers 409 and changes nothing', async () => {
      const first = await create(key, { email: uniqueEmail('first') })
      const second = await create(key, { email: uniqueEmail('second') })
      const firstEmail = first.email ?? ''
      for (const email of [firstEmail, firstEmail.toUpperCase()]) {
        const res = await server.request('PATCH', `/api/v0/customers/${second.id}`, { key, body: { email, first_name: 'Changed' } })
        expect(res.status).toBe(409)
        expect(res.body).toEqual(CONFLICT)
      }
      expect((await getOne(key, second.id)).body).toEqual(second)
    })

    it('PATCH to an email used only in another application is fine', async () => {
      const email = uniqueEmail('elsewhere')
      await create(otherKey, { email })
      const mine = await create(key)
      const res = await server.request<Customer>('PATCH', `/api/v0/customers/${mine.id}`, { key, body: { email } })
      expect(res.status).toBe(200)
      expect(res.body.email).toBe(email)
    })

    it('PATCH of a customer’s own email in another case is not a conflict', async () => {
      const email = uniqueEmail('self')
      const mine = await create(key, { email })
      const res = await server.request<Customer>('PATCH', `/api/v0/customers/${mine.id}`, { key, body: { email: email.toUpperCase() } })
      expect(res.status).toBe(200)
      expect(res.body.email).toBe(email.toUpperCase())
    })

    it('after an email is changed away, the old one is free again', async () => {
      const caller = await server.createKey()
      const email = uniqueEmail('moving')
      const customer = await create(caller, { email })
      const patched = await server.request('PATCH', `/api/v0/customers/${customer.id}`, { key: caller, body: { email: uniqueEmail('moved') } })
      expect(patched.status).toBe(200)
      await create(caller, { email })
    })
  })

  describe('validation (400, nothing created)', () => {
    const base = { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15550100' }
    const long = (n: number) => 'x'.repeat(n)
    const cases: Array<[string, unknown, string]> = [
      ['empty first_name', { ...base, first_name: '' }, 'first_name should not be empty'],
      ['first_name of 101', { ...base, first_name: long(101) }, 'first_name must be shorter than or equal to 100 characters'],
      ['empty last_name', { ...base, last_name: '' }, 'last_name should not be empty'],
      ['last_name of 101', { ...base, last_name: long(101) }, 'last_name must be shorter than or equal to 100 characters'],
      ['empty phone_number', { ...base, phone_number: '' }, 'phone_number should not be empty'],
      ['phone_number of 21', { ...base, phone_number: long(21) }, 'phone_number must be shorter than or equal to 20 characters'],
      [
        'email of 256',
        { ...base, email: `${'a'.repeat(256 - '@example.com'.length)}@example.com` },
        'email must be shorter than or equal to 255 characters',
      ],
      ['email without @', { ...base, email: 'not-an-email' }, 'email must be an email'],
      ['email without a domain dot', { ...base, email: 'someone@localhost' }, 'email must be an email'],
      ['email with a space', { ...base, email: 'some one@example.com' }, 'email must be an email'],
      [
        'unknown customer_type',
        { ...base, customer_type: 'Corporation' },
        'customer_type must be one of the following values: Individual, Startup, Small Business, Medium Business, Enterprise, Non-Profit, Government',
      ],
      [
        'customer_type in the wrong case',
        { ...base, customer_type: 'individual' },
        'customer_type must be one of the following values: Individual, Startup, Small Business, Medium Business, Enterprise, Non-Profit, Government',
      ],
      ['unknown status', { ...base, status: 'ARCHIVED' }, 'status must be one of the following values: ACTIVE, BLACKLISTED, DEACTIVATED, DELETED'],
      ['status in the wrong case', { ...base, status: 'active' }, 'status must be one of the following values: ACTIVE, BLACKLISTED, DEACTIVATED, DELETED'],
      ['an unknown field', { ...base, nickname: 'ada' }, 'property nickname should not exist'],
      ['a numeric phone_number (no coercion)', { ...base, phone_number: 123 }, 'phone_number must be a string'],
      ['a numeric first_name', { ...base, first_name: 5 }, 'first_name must be a string'],
      ['a boolean last_name', { ...base, last_name: true }, 'last_name must be a string'],
      ['a null first_name', { ...base, first_name: null }, 'first_name must be a string'],
      ['a numeric email', { ...base, email: 42 }, 'email must be a string'],
      ['missing first_name', { last_name: 'L', phone_number: '1' }, 'first_name is required'],
      ['missing last_name', { first_name: 'F', phone_number: '1' }, 'last_name is required'],
      ['missing phone_number', { first_name: 'F', last_name: 'L' }, 'phone_number is required'],
      ['an empty object', {}, 'first_name is required; last_name is required; phone_number is required'],
      ['an array body', [base], 'Request body must be a JSON object'],
    ]

    it.each(cases)('rejects %s', async (_name, body, message) => {
      const caller = await server.createKey()
      await create(caller)
      const res = await server.request('POST', '/api/v0/customers', { key: caller, body })
      expect(res.status).toBe(400)
      expect(res.body).toEqual(badRequest(message))
      expect(await total(caller)).toBe(1)
    })

    it('names every failing field in one message', async () => {
      const res = await server.request<ErrorBody>('POST', '/api/v0/customers', {
        key,
        body: { first_name: '', last_name: long(101), phone_number: 123, status: 'NOPE' },
      })
      expect(res.status).toBe(400)
      expect(res.body.message).toContain('first_name should not be empty')
      expect(res.body.message).toContain('last_name must be shorter than or equal to 100 characters')
      expect(res.body.message).toContain('phone_number must be a string')
      expect(res.body.message).toContain('status must be one of the following values')
    })

    it('rejects malformed JSON', async () => {
      const caller = await server.createKey()
      const res = await server.request('POST', '/api/v0/customers', { key: caller, body: '{"first_name": "Ada",' })
      expect(res.status).toBe(400)
      expect(res.body).toEqual(badRequest('Request body is not valid JSON'))
      expect(await total(caller)).toBe(0)
    })
  })
})

describe('GET /api/v0/customers', () => {
  let listKey: TestKey
  let all: Customer[]

  beforeAll(async () => {
    listKey = await server.createKey()
    all = []
    for (let i = 0; i < 12; i += 1) {
      all.push(await create(listKey, { first_name: `Person${i}`, last_name: 'Listed', email: uniqueEmail('list') }))
    }
  })

  it('answers {data, total, skip, take} with defaults skip 0 and take 10', async () => {
    const res = await list(listKey)
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['data', 'skip', 'take', 'total'])
    expect(res.body.skip).toBe(0)
    expect(res.body.take).toBe(10)
    expect(res.body.total).toBe(12)
    expect(res.body.data).toHaveLength(10)
    const byId = new Map(all.map((c) => [c.id, c]))
    for (const customer of res.body.data) expect(customer).toEqual(byId.get(customer.id))
  })

  it('accepts take=1', async () => {
    const res = await list(listKey, '?take=1')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ skip: 0, take: 1, total: 12 })
    expect(res.body.data).toHaveLength(1)
  })

  it('accepts take=100', async () => {
    const res = await list(listKey, '?take=100')
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ skip: 0, take: 100, total: 12 })
    expect(res.body.data.map((c) => c.id).sort()).toEqual(all.map((c) => c.id).sort())
  })

  it('accepts skip=0 and pages through every customer exactly once', async () => {
    const seen: string[] = []
    for (const skip of [0, 5, 10]) {
      const res = await list(listKey, `?skip=${skip}&take=5`)
      expect(res.status).toBe(200)
      expect(res.body).toMatchObject({ skip, take: 5, total: 12 })
      seen.push(...res.body.data.map((c) => c.id))
    }
    expect(seen).toHaveLength(12)
    expect([...seen].sort()).toEqual(all.map((c) => c.id).sort())
  })

  it('answers an empty page past the end, with the full total', async () => {
    const res = await list(listKey, '?skip=12')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ data: [], total: 12, skip: 12, take: 10 })
  })

  it.each([
    ['take=0', 'take must not be less than 1'],
    ['take=101', 'take must not be greater than 100'],
    ['skip=-1', 'skip must not be less than 0'],
    ['take=abc', 'take must be an integer number'],
    ['skip=abc', 'skip must be an integer number'],
    ['take=1.5', 'take must be an integer number'],
    [
      'status=GONE',
      'status must be one of the following values: ACTIVE, BLACKLISTED, DEACTIVATED, DELETED',
    ],
  ])('rejects %s', async (query, message) => {
    const res = await list(listKey, `?${query}`)
    expect(res.status).toBe(400)
    expect(res.body).toEqual(badRequest(message))
  })

  it('lists only the caller’s own customers', async () => {
    await create(otherKey, { first_name: 'Person0', last_name: 'Listed' })
    const res = await list(listKey, '?take=100')
    expect(res.body.total).toBe(12)
    const mine = new Set(all.map((c) => c.id))
    for (const customer of res.body.data) expect(mine.has(customer.id)).toBe(true)
  })

  describe('filters', () => {
    let filterKey: TestKey
    let ada: Customer
    let alan: Customer
    let grace: Customer
    let percent: Customer
    let plainPercent: Customer
    let underscore: Customer
    let plainUnderscore: Customer

    beforeAll(async () => {
      filterKey = await server.createKey()
      ada = await create(filterKey, { first_name: 'Ada', last_name: 'Lovelace', email: 'Ada.Lovelace@Example.com', status: 'ACTIVE' })
      alan = await create(filterKey, { first_name: 'Alan', last_name: 'Turing', email: 'alan@example.com', status: 'BLACKLISTED' })
      grace = await create(filterKey, { first_name: 'Grace', last_name: 'Hopper', status: 'BLACKLISTED' })
      percent = await create(filterKey, { first_name: 'Fifty%Off', last_name: 'Sale', status: 'DEACTIVATED' })
      plainPercent = await create(filterKey, { first_name: 'FiftyXOff', last_name: 'Sale', status: 'DEACTIVATED' })
      underscore = await create(filterKey, { first_name: 'Snake', last_name: 'Under_Score', status: 'DELETED' })
      plainUnderscore = await create(filterKey, { first_name: 'Snake', last_name: 'UnderXScore', status: 'DELETED' })
    })

    async function ids(query: string): Promise<string[]> {
      const res = await list(filterKey, query)
      expect(res.status, res.text).toBe(200)
      expect(res.body.total).toBe(res.body.data.length)
      return res.body.data.map((c) => c.id).sort()
    }

    it('status filters exactly', async () => {
      expect(await ids('?status=ACTIVE')).toEqual([ada.id])
      expect(await ids('?status=BLACKLISTED')).toEqual([alan.id, grace.id].sort())
      expect(await ids('?status=DEACTIVATED')).toEqual([percent.id, plainPercent.id].sort())
      expect(await ids('?status=DELETED')).toEqual([underscore.id, plainUnderscore.id].sort())
    })

    it('name matches part of the first name, case-insensitively', async () => {
      expect(await ids('?name=ada')).toEqual([ada.id])
      expect(await ids('?name=RAC')).toEqual([grace.id])
      expect(await ids('?name=a')).toEqual([ada.id, alan.id, grace.id, percent.id, plainPercent.id, underscore.id, plainUnderscore.id].sort())
    })

    it('name matches part of the last name, case-insensitively', async () => {
      expect(await ids('?name=LOVE')).toEqual([ada.id])
      expect(await ids('?name=uring')).toEqual([alan.id])
      expect(await ids('?name=hopper')).toEqual([grace.id])
    })

    it('name matching nothing answers an empty list', async () => {
      const res = await list(filterKey, '?name=zzzz')
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ data: [], total: 0, skip: 0, take: 10 })
    })

    it("a '%' in the name filter is literal", async () => {
      expect(await ids(`?name=${encodeURIComponent('y%o')}`)).toEqual([percent.id])
      expect(await ids(`?name=${encodeURIComponent('%')}`)).toEqual([percent.id])
    })

    it("a '_' in the name filter is literal", async () => {
      expect(await ids('?name=r_s')).toEqual([underscore.id])
      expect(await ids('?name=_')).toEqual([underscore.id])
    })

    it('email matches exactly, case-insensitively', async () => {
      expect(await ids(`?email=${encodeURIComponent('ada.lovelace@example.com')}`)).toEqual([ada.id])
      expect(await ids(`?email=${encodeURIComponent('ADA.LOVELACE@EXAMPLE.COM')}`)).toEqual([ada.id])
      expect(await ids(`?email=${encodeURIComponent('alan@example.com')}`)).toEqual([alan.id])
    })

    it('email does not match a part of an address', async () => {
      expect(await ids(`?email=${encodeURIComponent('ada')}`)).toEqual([])
      expect(await ids(`?email=${encodeURIComponent('lovelace@example.com')}`)).toEqual([])
      expect(await ids(`?email=${encodeURIComponent('%@example.com')}`)).toEqual([])
    })

    it('filters combine', async () => {
      expect(await ids('?status=BLACKLISTED&name=al')).toEqual([alan.id])
      expect(await ids('?status=ACTIVE&name=alan')).toEqual([])
      expect(await ids(`?status=ACTIVE&email=${encodeURIComponent('alan@example.com')}`)).toEqual([])
    })

    it('total counts every match, not just the page', async () => {
      const res = await list(filterKey, '?name=a&take=2')
      expect(res.status).toBe(200)
      expect(res.body.total).toBe(7)
      expect(res.body.data).toHaveLength(2)
      expect(res.body.take).toBe(2)
      const next = await list(filterKey, '?name=a&take=2&skip=6')
      expect(next.body.total).toBe(7)
      expect(next.body.data).toHaveLength(1)
      const blacklisted = await list(filterKey, '?status=BLACKLISTED&take=1')
      expect(blacklisted.body.total).toBe(2)
      expect(blacklisted.body.data).toHaveLength(1)
    })
  })
})

describe('GET /api/v0/customers/{id}', () => {
  it('answers the customer', async () => {
    const customer = await create(key, { email: uniqueEmail('get'), customer_type: 'Government' })
    const res = await getOne(key, customer.id)
    expect(res.status).toBe(200)
    expect(res.body).toEqual(customer)
  })

  it('404 for a missing id', async () => {
    const res = await getOne(key, MISSING_UUID)
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
  })

  it('404 for another application’s customer', async () => {
    const theirs = await create(otherKey)
    const res = await getOne(key, theirs.id)
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
  })

  it.each(['not-a-uuid', '12345', `${MISSING_UUID}0`, MISSING_UUID.replace(/-/g, '')])('400 for the malformed id %s', async (id) => {
    const res = await getOne(key, id)
    expect(res.status).toBe(400)
    expect(res.body).toEqual(INVALID_ID)
  })
})

describe('PATCH /api/v0/customers/{id}', () => {
  it('changes only the given fields and moves updated_at', async () => {
    const customer = await create(key, { email: uniqueEmail('patch'), customer_type: 'Individual' })
    await sleep(5)
    const res = await server.request<Customer>('PATCH', `/api/v0/customers/${customer.id}`, { key, body: { last_name: 'Byron' } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...customer, last_name: 'Byron', updated_at: expect.stringMatching(ISO_MS) })
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(customer.updated_at))
    expect((await getOne(key, customer.id)).body).toEqual(res.body)
  })

  it('updates every field at once', async () => {
    const customer = await create(key)
    const email = uniqueEmail('every')
    await sleep(5)
    const patch = { first_name: 'New', last_name: 'Name', phone_number: '999', email, customer_type: 'Non-Profit', status: 'DEACTIVATED' }
    const res = await server.request<Customer>('PATCH', `/api/v0/customers/${customer.id}`, { key, body: patch })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...customer, ...patch, updated_at: expect.stringMatching(ISO_MS) })
    expect(res.body.created_at).toBe(customer.created_at)
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(customer.updated_at))
  })

  it.each(CUSTOMER_TYPES)('sets customer_type %s', async (customerType) => {
    const customer = await create(key)
    const res = await server.request<Customer>('PATCH', `/api/v0/customers/${customer.id}`, { key, body: { customer_type: customerType } })
    expect(res.status).toBe(200)
    expect(res.body.customer_type).toBe(customerType)
  })

  it.each(STATUSES)('sets status %s', async (status) => {
    const customer = await create(key, { status: status === 'ACTIVE' ? 'DELETED' : 'ACTIVE' })
    const res = await server.request<Customer>('PATCH', `/api/v0/customers/${customer.id}`, { key, body: { status } })
    expect(res.status).toBe(200)
    expect(res.body.status).toBe(status)
  })

  it('an empty patch changes no field', async () => {
    const customer = await create(key, { email: uniqueEmail('empty') })
    const res = await server.request<Customer>('PATCH', `/api/v0/customers/${customer.id}`, { key, body: {} })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(customer) // not even updated_at moves
  })

  it('404 for a missing id', async () => {
    const res = await server.request('PATCH', `/api/v0/customers/${MISSING_UUID}`, { key, body: { first_name: 'X' } })
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
  })

  it('404 for another application’s customer, which stays unchanged', async () => {
    const theirs = await create(otherKey, { email: uniqueEmail('theirs') })
    const res = await server.request('PATCH', `/api/v0/customers/${theirs.id}`, { key, body: { first_name: 'Hijacked' } })
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
    expect((await getOne(otherKey, theirs.id)).body).toEqual(theirs)
  })

  it('400 for a malformed id', async () => {
    const res = await server.request('PATCH', '/api/v0/customers/not-a-uuid', { key, body: { first_name: 'X' } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(INVALID_ID)
  })

  describe('validation (400, record unchanged)', () => {
    const long = (n: number) => 'x'.repeat(n)
    const cases: Array<[string, unknown, string]> = [
      ['empty first_name', { first_name: '' }, 'first_name should not be empty'],
      ['first_name of 101', { first_name: long(101) }, 'first_name must be shorter than or equal to 100 characters'],
      ['empty last_name', { last_name: '' }, 'last_name should not be empty'],
      ['last_name of 101', { last_name: long(101) }, 'last_name must be shorter than or equal to 100 characters'],
      ['empty phone_number', { phone_number: '' }, 'phone_number should not be empty'],
      ['phone_number of 21', { phone_number: long(21) }, 'phone_number must be shorter than or equal to 20 characters'],
      ['email of 256', { email: `${'a'.repeat(256 - '@example.com'.length)}@example.com` }, 'email must be shorter than or equal to 255 characters'],
      ['a malformed email', { email: 'nope' }, 'email must be an email'],
      [
        'unknown customer_type',
        { customer_type: 'Household' },
        'customer_type must be one of the following values: Individual, Startup, Small Business, Medium Business, Enterprise, Non-Profit, Government',
      ],
      ['unknown status', { status: 'PAUSED' }, 'status must be one of the following values: ACTIVE, BLACKLISTED, DEACTIVATED, DELETED'],
      ['an unknown field', { id: MISSING_UUID }, 'property id should not exist'],
      ['an unknown field beside a valid one', { first_name: 'Ok', created_at: '2020-01-01T00:00:00.000Z' }, 'property created_at should not exist'],
      ['a numeric phone_number (no coercion)', { phone_number: 123 }, 'phone_number must be a string'],
      ['a numeric last_name', { last_name: 7 }, 'last_name must be a string'],
      ['an array body', [], 'Request body must be a JSON object'],
    ]

    it.each(cases)('rejects %s', async (_name, body, message) => {
      const customer = await create(key, { email: uniqueEmail('valid') })
      const res = await server.request('PATCH', `/api/v0/customers/${customer.id}`, { key, body })
      expect(res.status).toBe(400)
      expect(res.body).toEqual(badRequest(message))
      expect((await getOne(key, customer.id)).body).toEqual(customer)
    })

    it.each([
      ['first_name', 1],
      ['first_name', 100],
      ['last_name', 1],
      ['last_name', 100],
      ['phone_number', 1],
      ['phone_number', 20],
    ] as const)('accepts %s of length %i', async (field, length) => {
      const customer = await create(key)
      const value = 'y'.repeat(length)
      const res = await server.request<Customer>('PATCH', `/api/v0/customers/${customer.id}`, { key, body: { [field]: value } })
      expect(res.status).toBe(200)
      expect(res.body[field]).toBe(value)
    })

    it('accepts an email of exactly 255 characters', async () => {
      const customer = await create(key)
      const email = `${'b'.repeat(255 - '@example.com'.length)}@example.com`
      const res = await server.request<Customer>('PATCH', `/api/v0/customers/${customer.id}`, { key, body: { email } })
      expect(res.status).toBe(200)
      expect(res.body.email).toBe(email)
    })
  })
})
