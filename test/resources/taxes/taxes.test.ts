import type { Tax } from '../../../src/resources/taxes/schemas.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_UUID, startTestServer, type ApiResponse, type RequestOptions, type TestKey, type TestServer } from '../../helper.js'


interface ErrorBody {
  statusCode: number
  error: string
  message: string
  details?: string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let server: TestServer
let key: TestKey
let otherKey: TestKey
let inactiveKey: TestKey
let noScopeKey: TestKey

beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
  otherKey = await server.createKey()
  inactiveKey = await server.createKey()
  await server.deactivate(inactiveKey)
  noScopeKey = await server.createKey({ scopes: ['webhook:read'] })
})
afterAll(async () => server.close())

function badRequest(message: string): ErrorBody {
  return { statusCode: 400, error: 'Bad Request', message }
}

const NOT_FOUND: ErrorBody = { statusCode: 404, error: 'Not Found', message: 'Tax not found' }
const INVALID_ID: ErrorBody = badRequest('Invalid tax ID format')

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

async function create(caller: TestKey, body: Record<string, unknown> = {}): Promise<Tax> {
  const res = await server.request<Tax>('POST', '/api/v0/taxes', { key: caller, body: { name: 'VAT', percentage: 20, ...body } })
  expect(res.status, res.text).toBe(201)
  return res.body
}

async function list(caller: TestKey, query = ''): Promise<ApiResponse<Tax[]>> {
  return server.request<Tax[]>('GET', `/api/v0/taxes${query}`, { key: caller })
}

async function count(caller: TestKey): Promise<number> {
  const res = await list(caller, '?take=100')
  expect(res.status).toBe(200)
  return res.body.length
}

async function getOne(caller: TestKey, id: string): Promise<ApiResponse<Tax>> {
  return server.request<Tax>('GET', `/api/v0/taxes/${id}`, { key: caller })
}

describe('PUT and DELETE /api/v0/taxes without an id (the guards)', () => {
  const GUARD: Record<'PUT' | 'DELETE', ErrorBody> = {
    PUT: badRequest('Tax ID is required in the URL path. Use PUT /api/v0/taxes/{id} to update a specific tax.'),
    DELETE: badRequest('Tax ID is required in the URL path. Use DELETE /api/v0/taxes/{id} to delete a specific tax.'),
  }

  type HeaderVariant = 'no headers' | 'a valid key' | 'a wrong secret' | 'an inactive key' | 'a key without tax scopes' | 'only the secret'
  const headerVariants: HeaderVariant[] = ['no headers', 'a valid key', 'a wrong secret', 'an inactive key', 'a key without tax scopes', 'only the secret']

  function headersFor(variant: HeaderVariant): Record<string, string> {
    switch (variant) {
      case 'no headers':
        return {}
      case 'a valid key':
        return key.headers
      case 'a wrong secret':
        return { 'x-client-key': key.clientKey, 'x-client-secret': `${key.clientSecret.slice(0, -4)}XXXX` }
      case 'an inactive key':
        return inactiveKey.headers
      case 'a key without tax scopes':
        return noScopeKey.headers
      case 'only the secret':
        return { 'x-client-secret': key.clientSecret }
    }
  }

  type BodyVariant = 'no body' | 'valid JSON' | 'malformed JSON' | 'text/plain' | 'a 2 MiB body' | 'an empty JSON body'
  const bodyVariants: BodyVariant[] = ['no body', 'valid JSON', 'malformed JSON', 'text/plain', 'a 2 MiB body', 'an empty JSON body']
  const twoMiB = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) })

  function bodyFor(variant: BodyVariant): Pick<RequestOptions, 'body' | 'headers'> {
    switch (variant) {
      case 'no body':
        return {}
      case 'valid JSON':
        return { body: { name: 'VAT', percentage: 20 } }
      case 'malformed JSON':
        return { body: '{"name": "VAT",' }
      case 'text/plain':
        return { body: 'name=VAT', headers: { 'content-type': 'text/plain' } }
      case 'a 2 MiB body':
        return { body: twoMiB }
      case 'an empty JSON body':
        return { body: '' }
    }
  }

  const combinations = (['PUT', 'DELETE'] as const).flatMap((method) =>
    headerVariants.flatMap((headers) => bodyVariants.map((body) => [method, headers, body] as const)),
  )

  it.each(combinations)('%s /api/v0/taxes with %s and %s answers the 400 guard', async (method, headerVariant, bodyVariant) => {
    const { body, headers } = bodyFor(bodyVariant)
    const res = await server.request(method, '/api/v0/taxes', {
      ...(body === undefined ? {} : { body }),
      headers: { ...headersFor(headerVariant), ...headers },
    })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(GUARD[method])
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  })

  it.each(['PUT', 'DELETE'] as const)('%s /api/v0/taxes with a query string answers the guard too', async (method) => {
    const res = await server.request(method, '/api/v0/taxes?id=123', { key })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(GUARD[method])
  })

  it('the guards change no tax', async () => {
    const caller = await server.createKey()
    const tax = await create(caller)
    await server.request('PUT', '/api/v0/taxes', { key: caller, body: { name: 'Changed' } })
    await server.request('DELETE', '/api/v0/taxes', { key: caller })
    expect((await getOne(caller, tax.id)).body).toEqual(tax)
    expect(await count(caller)).toBe(1)
  })
})

describe('POST /api/v0/taxes', () => {
  it('creates a tax and answers 201 with exactly the tax object', async () => {
    const res = await server.request<Tax>('POST', '/api/v0/taxes', {
      key,
      body: { name: 'Sales tax', description: 'State sales tax', percentage: 7.25, active: false, appIds: ['app-1', 'app-2'] },
    })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Sales tax',
      description: 'State sales tax',
      percentage: 7.25,
      active: false,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    })
    expect(res.body.updated_at).toBe(res.body.created_at)
    expect((await getOne(key, res.body.id)).body).toEqual(res.body)
  })

  it('defaults description to null and active to true', async () => {
    const res = await server.request<Tax>('POST', '/api/v0/taxes', { key, body: { name: 'GST', percentage: 10 } })
    expect(res.status).toBe(201)
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'GST',
      description: null,
      percentage: 10,
      active: true,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    })
  })

  describe('boundaries accepted', () => {
    it.each([
      ['name of 1', { name: 'x' }],
      ['name of 100', { name: 'x'.repeat(100) }],
      ['percentage 0', { percentage: 0 }],
      ['percentage 100', { percentage: 100 }],
      ['a fractional percentage', { percentage: 0.01 }],
      ['percentage 99.99', { percentage: 99.99 }],
      ['description of 255', { description: 'd'.repeat(255) }],
      ['an empty description', { description: '' }],
      ['appIds of strings', { appIds: ['a', 'b', 'c'] }],
      ['an empty appIds', { appIds: [] }],
      ['active true', { active: true }],
      ['active false', { active: false }],
    ])('accepts %s', async (_name, patch: Record<string, unknown>) => {
      const tax = await create(key, patch)
      for (const [field, value] of Object.entries(patch)) {
        if (field !== 'appIds') expect(tax[field as keyof Tax]).toEqual(value)
      }
      expect(Object.keys(tax).sort()).toEqual(['active', 'created_at', 'description', 'id', 'name', 'percentage', 'updated_at'])
    })
  })

  describe('validation (400, nothing created)', () => {
    const base = { name: 'VAT', percentage: 20 }
    const cases: Array<[string, unknown, string]> = [
      ['an empty name', { ...base, name: '' }, 'name should not be empty'],
      ['a name of 101', { ...base, name: 'x'.repeat(101) }, 'name must be shorter than or equal to 100 characters'],
      ['percentage -0.01', { ...base, percentage: -0.01 }, 'percentage must not be less than 0'],
      ['percentage 100.01', { ...base, percentage: 100.01 }, 'percentage must not be greater than 100'],
      ['percentage as a string', { ...base, percentage: '10' }, 'percentage must be a number'],
      ['percentage null', { ...base, percentage: null }, 'percentage must be a number'],
      ['a description of 256', { ...base, description: 'd'.repeat(256) }, 'description must be shorter than or equal to 255 characters'],
      ['a numeric description', { ...base, description: 5 }, 'description must be a string'],
      ['a numeric name', { ...base, name: 5 }, 'name must be a string'],
      ['active as a string', { ...base, active: 'true' }, 'active must be a boolean value'],
      ['appIds as a string', { ...base, appIds: 'app-1' }, 'appIds must be an array'],
      ['appIds as an object', { ...base, appIds: { a: 'b' } }, 'appIds must be an array'],
      ['appIds holding a number', { ...base, appIds: ['ok', 1] }, 'appIds[1] must be a string'],
      ['an unknown field', { ...base, rate: 5 }, 'property rate should not exist'],
      ['an id in the body', { ...base, id: MISSING_UUID }, 'property id should not exist'],
      ['a missing name', { percentage: 20 }, 'name is required'],
      ['a missing percentage', { name: 'VAT' }, 'percentage is required'],
      ['an empty object', {}, 'name is required; percentage is required'],
      ['an array body', [base], 'Request body must be a JSON object'],
    ]

    it.each(cases)('rejects %s', async (_name, body, message) => {
      const caller = await server.createKey()
      await create(caller)
      const res = await server.request('POST', '/api/v0/taxes', { key: caller, body })
      expect(res.status).toBe(400)
      expect(res.body).toEqual(badRequest(message))
      expect(await count(caller)).toBe(1)
    })
  })
})

describe('GET /api/v0/taxes', () => {
  let listKey: TestKey
  let all: Tax[]

  beforeAll(async () => {
    listKey = await server.createKey()
    all = []
    for (let i = 0; i < 12; i += 1) all.push(await create(listKey, { name: `Listed ${i}`, percentage: i }))
  })

  it('answers an array of tax objects, 10 by default', async () => {
    const res = await list(listKey)
    expect(res.status).toBe(200)
    expect(Array.isArray(res.body)).toBe(true)
    expect(res.body).toHaveLength(10)
    const byId = new Map(all.map((t) => [t.id, t]))
    for (const tax of res.body) expect(tax).toEqual(byId.get(tax.id))
  })

  it('take=1 and take=100 are accepted', async () => {
    expect((await list(listKey, '?take=1')).body).toHaveLength(1)
    const res = await list(listKey, '?take=100')
    expect(res.status).toBe(200)
    expect(res.body.map((t) => t.id).sort()).toEqual(all.map((t) => t.id).sort())
  })

  it('skip and take page through every tax exactly once', async () => {
    const seen: string[] = []
    for (const skip of [0, 5, 10]) {
      const res = await list(listKey, `?skip=${skip}&take=5`)
      expect(res.status).toBe(200)
      seen.push(...res.body.map((t) => t.id))
    }
    expect(seen).toHaveLength(12)
    expect([...seen].sort()).toEqual(all.map((t) => t.id).sort())
    expect((await list(listKey, '?skip=12')).body).toEqual([])
  })

  it.each([
    ['take=0', 'take must not be less than 1'],
    ['take=101', 'take must not be greater than 100'],
    ['skip=-1', 'skip must not be less than 0'],
    ['take=abc', 'take must be an integer number'],
    ['skip=abc', 'skip must be an integer number'],
    ['active=maybe', 'active must be a boolean value'],
  ])('rejects %s', async (query, message) => {
    const res = await list(listKey, `?${query}`)
    expect(res.status).toBe(400)
    expect(res.body).toEqual(badRequest(message))
  })

  it('lists only the caller’s own taxes', async () => {
    await create(otherKey, { name: 'Listed elsewhere' })
    const res = await list(listKey, '?take=100')
    const mine = new Set(all.map((t) => t.id))
    expect(res.body).toHaveLength(12)
    for (const tax of res.body) expect(mine.has(tax.id)).toBe(true)
  })

  describe('filters', () => {
    let filterKey: TestKey
    let vat: Tax
    let salesTax: Tax
    let cityTax: Tax
    let percent: Tax
    let plainPercent: Tax

    beforeAll(async () => {
      filterKey = await server.createKey()
      vat = await create(filterKey, { name: 'VAT Standard', active: true })
      salesTax = await create(filterKey, { name: 'Sales Tax', active: false })
      cityTax = await create(filterKey, { name: 'city tax', active: true })
      percent = await create(filterKey, { name: '5%off', active: false })
      plainPercent = await create(filterKey, { name: '5xoff', active: false })
    })

    async function ids(query: string): Promise<string[]> {
      const res = await list(filterKey, query)
      expect(res.status, res.text).toBe(200)
      return res.body.map((t) => t.id).sort()
    }

    it('name matches partially, case-insensitively', async () => {
      expect(await ids('?name=TAX')).toEqual([salesTax.id, cityTax.id].sort())
      expect(await ids('?name=vat')).toEqual([vat.id])
      expect(await ids('?name=standard')).toEqual([vat.id])
      expect(await ids('?name=nothing')).toEqual([])
    })

    it("a '%' in the name filter is literal", async () => {
      expect(await ids(`?name=${encodeURIComponent('5%o')}`)).toEqual([percent.id])
    })

    it('active=true and active=false filter', async () => {
      expect(await ids('?active=true')).toEqual([vat.id, cityTax.id].sort())
      expect(await ids('?active=false')).toEqual([salesTax.id, percent.id, plainPercent.id].sort())
    })

    it('filters combine with each other and with take', async () => {
      expect(await ids('?name=tax&active=true')).toEqual([cityTax.id])
      expect(await ids('?name=tax&active=false')).toEqual([salesTax.id])
      expect((await list(filterKey, '?active=false&take=2')).body).toHaveLength(2)
    })
  })
})

describe('GET /api/v0/taxes/{id}', () => {
  it('answers the tax', async () => {
    const tax = await create(key, { name: 'Fetched', description: 'one', percentage: 3.5 })
    const res = await getOne(key, tax.id)
    expect(res.status).toBe(200)
    expect(res.body).toEqual(tax)
  })

  it('404 for a missing id', async () => {
    const res = await getOne(key, MISSING_UUID)
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
  })

  it('404 for another application’s tax', async () => {
    const theirs = await create(otherKey)
    const res = await getOne(key, theirs.id)
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
  })

  it.each(['not-a-uuid', '123', `${MISSING_UUID}0`])('400 for the malformed id %s', async (id) => {
    const res = await getOne(key, id)
    expect(res.status).toBe(400)
    expect(res.body).toEqual(INVALID_ID)
  })
})

describe('PUT /api/v0/taxes/{id}', () => {
  it('changes only the given fields and moves updated_at', async () => {
    const tax = await create(key, { name: 'Partial', description: 'before', percentage: 5 })
    await sleep(5)
    const res = await server.request<Tax>('PUT', `/api/v0/taxes/${tax.id}`, { key, body: { percentage: 6.5 } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...tax, percentage: 6.5, updated_at: expect.stringMatching(ISO_MS) })
    expect(Date.parse(res.body.updated_at)).toBeGreaterThan(Date.parse(tax.updated_at))
    expect((await getOne(key, tax.id)).body).toEqual(res.body)
  })

  it.each([
    ['name', { name: 'Renamed' }],
    ['description', { description: 'after' }],
    ['active', { active: false }],
    ['appIds alone', { appIds: ['x'] }],
    ['nothing', {}],
  ])('updates %s alone', async (_name, patch: Record<string, unknown>) => {
    const tax = await create(key, { name: 'Alone', description: 'before', percentage: 5 })
    const changes = Object.fromEntries(Object.entries(patch).filter(([field]) => field !== 'appIds'))
    const res = await server.request<Tax>('PUT', `/api/v0/taxes/${tax.id}`, { key, body: patch })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...tax, ...changes, updated_at: expect.stringMatching(ISO_MS) })
  })

  it('updates every field at once', async () => {
    const tax = await create(key)
    const patch = { name: 'All', description: 'all of them', percentage: 100, active: false, appIds: ['a'] }
    const res = await server.request<Tax>('PUT', `/api/v0/taxes/${tax.id}`, { key, body: patch })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      id: tax.id,
      name: 'All',
      description: 'all of them',
      percentage: 100,
      active: false,
      created_at: tax.created_at,
      updated_at: expect.stringMatching(ISO_MS),
    })
  })

  it.each([
    ['name of 1', { name: 'x' }],
    ['name of 100', { name: 'x'.repeat(100) }],
    ['percentage 0', { percentage: 0 }],
    ['percentage 100', { percentage: 100 }],
    ['description of 255', { description: 'd'.repeat(255) }],
  ])('accepts %s', async (_name, patch: Record<string, unknown>) => {
    const tax = await create(key)
    const res = await server.request<Tax>('PUT', `/api/v0/taxes/${tax.id}`, { key, body: patch })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...tax, ...patch, updated_at: expect.stringMatching(ISO_MS) })
  })

  describe('validation (400, record unchanged)', () => {
    const cases: Array<[string, unknown, string]> = [
      ['an empty name', { name: '' }, 'name should not be empty'],
      ['a name of 101', { name: 'x'.repeat(101) }, 'name must be shorter than or equal to 100 characters'],
      ['percentage -0.01', { percentage: -0.01 }, 'percentage must not be less than 0'],
      ['percentage 100.01', { percentage: 100.01 }, 'percentage must not be greater than 100'],
      ['percentage as a string', { percentage: '10' }, 'percentage must be a number'],
      ['a description of 256', { description: 'd'.repeat(256) }, 'description must be shorter than or equal to 255 characters'],
      ['active as a number', { active: 1 }, 'active must be a boolean value'],
      ['appIds as a string', { appIds: 'app-1' }, 'appIds must be an array'],
      ['appIds holding a number', { appIds: [1] }, 'appIds[0] must be a string'],
      ['an unknown field', { rate: 5 }, 'property rate should not exist'],
      ['an unknown field beside a valid one', { name: 'Fine', created_at: '2020-01-01T00:00:00.000Z' }, 'property created_at should not exist'],
      ['an array body', [], 'Request body must be a JSON object'],
    ]

    it.each(cases)('rejects %s', async (_name, body, message) => {
      const tax = await create(key, { name: 'Guarded', description: 'keep', percentage: 12 })
      const res = await server.request('PUT', `/api/v0/taxes/${tax.id}`, { key, body })
      expect(res.status).toBe(400)
      expect(res.body).toEqual(badRequest(message))
      expect((await getOne(key, tax.id)).body).toEqual(tax)
    })
  })

  it('404 for a missing id', async () => {
    const res = await server.request('PUT', `/api/v0/taxes/${MISSING_UUID}`, { key, body: { name: 'X' } })
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
  })

  it('404 for another application’s tax, which stays unchanged', async () => {
    const theirs = await create(otherKey, { name: 'Theirs' })
    const res = await server.request('PUT', `/api/v0/taxes/${theirs.id}`, { key, body: { name: 'Hijacked' } })
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
    expect((await getOne(otherKey, theirs.id)).body).toEqual(theirs)
  })

  it('400 for a malformed id', async () => {
    const res = await server.request('PUT', '/api/v0/taxes/not-a-uuid', { key, body: { name: 'X' } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(INVALID_ID)
  })
})

describe('DELETE /api/v0/taxes/{id}', () => {
  it('answers 200 with the deleted tax; afterwards it is gone', async () => {
    const caller = await server.createKey()
    const tax = await create(caller, { name: 'Doomed', description: 'bye', percentage: 1.5 })
    const keep = await create(caller, { name: 'Kept' })
    const res = await server.request<Tax>('DELETE', `/api/v0/taxes/${tax.id}`, { key: caller })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(tax)

    const after = await getOne(caller, tax.id)
    expect(after.status).toBe(404)
    expect(after.body).toEqual(NOT_FOUND)
    expect((await list(caller)).body.map((t) => t.id)).toEqual([keep.id])

    const again = await server.request('DELETE', `/api/v0/taxes/${tax.id}`, { key: caller })
    expect(again.status).toBe(404)
    expect(again.body).toEqual(NOT_FOUND)
    const put = await server.request('PUT', `/api/v0/taxes/${tax.id}`, { key: caller, body: { name: 'Back' } })
    expect(put.status).toBe(404)
    expect(put.body).toEqual(NOT_FOUND)
  })

  it('accepts an empty body sent as application/json', async () => {
    const tax = await create(key)
    const res = await server.request<Tax>('DELETE', `/api/v0/taxes/${tax.id}`, { key, body: '' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(tax)
  })

  it('404 for a missing id', async () => {
    const res = await server.request('DELETE', `/api/v0/taxes/${MISSING_UUID}`, { key })
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
  })

  it('404 for another application’s tax, which stays', async () => {
    const theirs = await create(otherKey, { name: 'Not yours' })
    const res = await server.request('DELETE', `/api/v0/taxes/${theirs.id}`, { key })
    expect(res.status).toBe(404)
    expect(res.body).toEqual(NOT_FOUND)
    expect((await getOne(otherKey, theirs.id)).body).toEqual(theirs)
  })

  it('400 for a malformed id', async () => {
    const res = await server.request('DELETE', '/api/v0/taxes/not-a-uuid', { key })
    expect(res.status).toBe(400)
    expect(res.body).toEqual(INVALID_ID)
  })
})

describe('tax guards with a trailing slash (an empty id)', () => {
  it.each(['PUT', 'DELETE'] as const)('%s /api/v0/taxes/ answers the guard, whatever the headers', async (method) => {
    const verb = method === 'PUT' ? 'update' : 'delete'
    const expected = {
      statusCode: 400,
      error: 'Bad Request',
      message: `Tax ID is required in the URL path. Use ${method} /api/v0/taxes/{id} to ${verb} a specific tax.`,
    }
    const guardServer = await startTestServer()
    try {
      const guardKey = await guardServer.createKey()
      for (const key of [null, guardKey]) {
        const res = await guardServer.request(method, '/api/v0/taxes/', { key, body: { name: 'x' } })
        expect(res.status).toBe(400)
        expect(res.body).toEqual(expected)
      }
    } finally {
      await guardServer.close()
    }
  })
})

describe('PUT /api/v0/taxes/{id} naming no field', () => {
  it('changes nothing, not even updated_at', async () => {
    const owner = await server.createKey()
    const created = await server.request<{ id: string; updated_at: string }>('POST', '/api/v0/taxes', { key: owner, body: { name: 'still', percentage: 3 } })
    await new Promise((resolve) => setTimeout(resolve, 5))
    const res = await server.request('PUT', `/api/v0/taxes/${created.body.id}`, { key: owner, body: {} })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(created.body)
  })
})
