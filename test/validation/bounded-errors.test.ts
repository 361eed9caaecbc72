import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRules } from '../../src/validation/rules.js'
import { createValidatorCompiler } from '../../src/validation/validator.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * A 400's message is bounded whatever the body: at most 10 failures listed, then "; and N more";
 * each listed part cut to 300 characters; and a body too big for its schema (an array over its
 * maxItems, an object with more than 100 unknown properties) is refused before its items are
 * walked, so a 1 MB body answers at once and other requests keep being served meanwhile.
 */
let server: TestServer
let key: TestKey

beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

const base = { name: 'VAT', percentage: 20 }

async function taxCount(): Promise<number> {
  return server.database.count('select count(*) as n from taxes where app_id = ?', key.appId)
}

async function post(body: unknown) {
  return server.request<{ statusCode: number; error: string; message: string }>('POST', '/api/v0/taxes', { key, body })
}

describe('1 MB bodies', () => {
  it('349,000 empty appIds: a short 400 naming the body\'s item limit, before parsing', async () => {
    const body = JSON.stringify({ ...base, appIds: new Array<string>(349_000).fill('') })
    expect(body.length).toBeGreaterThan(1_000_000)
    expect(body.length).toBeLessThan(1024 * 1024)
    const res = await server.request<{ message: string }>('POST', '/api/v0/taxes', { key, body })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe('Request body has more than 10000 keys and array items')
    expect(res.text.length).toBeLessThan(4096)
    expect(await taxCount()).toBe(0)
  })

  it('9,000 empty appIds (within the body\'s limits): a short 400 naming the array limit', async () => {
    const res = await post({ ...base, appIds: new Array<string>(9_000).fill('') })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe('appIds must contain no more than 100 elements')
    expect(res.text.length).toBeLessThan(4096)
    expect(await taxCount()).toBe(0)
  })

  it('95,000 unknown properties: refused before parsing, naming the limit of keys in one object', async () => {
    const extra: Record<string, number> = {}
    for (let i = 0; i < 95_000; i++) extra[`k${i}`] = 1
    const body = JSON.stringify({ ...base, ...extra })
    expect(body.length).toBeLessThan(1024 * 1024)
    const res = await server.request<{ message: string }>('POST', '/api/v0/taxes', { key, body })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe('Request body has more than 1000 keys in one object')
    expect(res.text.length).toBeLessThan(4096)
  })

  it('990 unknown properties: 10 named, then the exact count of the rest', async () => {
    const extra: Record<string, number> = {}
    for (let i = 0; i < 990; i++) extra[`k${i}`] = 1
    const res = await post({ ...base, ...extra })
    expect(res.status).toBe(400)
    const listed = Array.from({ length: 10 }, (_, i) => `property k${i} should not exist`)
    expect(res.body.message).toBe(`${listed.join('; ')}; and 980 more`)
    expect(res.text.length).toBeLessThan(4096)
  })

  it('a 100 KB unknown property name is cut in the message', async () => {
    const name = 'n'.repeat(100_000)
    const res = await post({ ...base, [name]: 1 })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe(`property ${'n'.repeat(300 - 'property '.length - 1)}…`)
    expect(res.text.length).toBeLessThan(1024)
  })
})

describe('at most 10 failures listed', () => {
  const unknown = (count: number): Record<string, number> =>
    Object.fromEntries(Array.from({ length: count }, (_, i) => [`u${String(i).padStart(2, '0')}`, i]))
  const named = (count: number): string[] => Array.from({ length: count }, (_, i) => `property u${String(i).padStart(2, '0')} should not exist`)

  it('10 failures: all listed, nothing after', async () => {
    const res = await post({ ...base, ...unknown(10) })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe(named(10).join('; '))
  })

  it('11 failures: 10 listed, then "; and 1 more"', async () => {
    const res = await post({ ...base, ...unknown(11) })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe(`${named(10).join('; ')}; and 1 more`)
  })

  it('failures of every kind count: 9 unknown properties, a missing name and a bad percentage', async () => {
    const res = await post({ percentage: 101, ...unknown(9) })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe(`name is required; ${named(9).join('; ')}; and 1 more`)
  })

  it('100 unknown properties are all checked (the count is exact, other failures included)', async () => {
    const res = await post({ percentage: 20, ...unknown(100) })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe(`name is required; ${named(9).join('; ')}; and 91 more`)
  })

  it('101 unknown properties: refused for its size, only the unknown properties counted', async () => {
    const res = await post({ percentage: 20, ...unknown(101) })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe(`${named(10).join('; ')}; and 91 more`)
  })

  it('text problems are bounded the same way: 11 appIds with a NUL', async () => {
    const appIds = Array.from({ length: 11 }, (_, i) => `app\u0000${i}`)
    const res = await post({ ...base, appIds })
    expect(res.status).toBe(400)
    const listed = Array.from({ length: 10 }, (_, i) => `appIds[${i}] must not contain control characters`)
    expect(res.body.message).toBe(`${listed.join('; ')}; and 1 more`)
  })

  it('a normal multi-field 400 is unchanged', async () => {
    const res = await post({ name: '', percentage: -1, active: 'yes', appIds: ['ok', 1] })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe(
      'name should not be empty; percentage must not be less than 0; active must be a boolean value; appIds[1] must be a string',
    )
  })
})

describe('appIds maxItems (100)', () => {
  const ids = (count: number): string[] => Array.from({ length: count }, (_, i) => `app-${i}`)

  it('100 appIds are accepted', async () => {
    const res = await post({ ...base, appIds: ids(100) })
    expect(res.status, res.text).toBe(201)
  })

  it('101 appIds are refused, on PUT too (100 accepted)', async () => {
    const res = await post({ ...base, appIds: ids(101) })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe('appIds must contain no more than 100 elements')
    const created = await post(base)
    expect(created.status).toBe(201)
    const id = (created.body as unknown as { id: string }).id
    const patched = await server.request<{ message: string }>('PUT', `/api/v0/taxes/${id}`, { key, body: { appIds: ids(101) } })
    expect(patched.status).toBe(400)
    expect(patched.body.message).toBe('appIds must contain no more than 100 elements')
    const ok = await server.request('PUT', `/api/v0/taxes/${id}`, { key, body: { appIds: ids(100) } })
    expect(ok.status, ok.text).toBe(200)
  })

  it('101 appIds that each fail too: only the limit is named (the items are not walked)', async () => {
    const res = await post({ ...base, appIds: new Array<string>(101).fill('') })
    expect(res.status).toBe(400)
    expect(res.body.message).toBe('appIds must contain no more than 100 elements')
  })
})

describe('every array in a request schema has a maxItems', () => {
  const compile = createValidatorCompiler(createRules({ allowHttpLoopback: false }))
  const schemaOf = (tags: ReturnType<typeof Type.Array>) => Type.Object({ nested: Type.Object({ tags }) })

  it('an array without one stops start-up, naming it', () => {
    expect(() => compile({ schema: schemaOf(Type.Array(Type.String())), httpPart: 'body', method: 'POST', url: '/x' })).toThrow(
      'body.nested.tags is an array without maxItems: give it one',
    )
  })

  it('an array with one compiles', () => {
    expect(() => compile({ schema: schemaOf(Type.Array(Type.String(), { maxItems: 5 })), httpPart: 'body', method: 'POST', url: '/x' })).not.toThrow()
  })
})
