import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_DEPTH, MAX_ENTRIES, MAX_KEYS_PER_OBJECT, scanJson } from '../../src/validation/json-shape.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * What the JSON body's text is checked for before it is parsed (src/validation/json-shape.ts):
 * a key written twice in one object is a 400 naming it (JSON.parse would keep the last one), and
 * a body past the key, entry or depth limits is a 400 saying which, without being built.
 */

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

const badRequest = (message: string) => ({ statusCode: 400, error: 'Bad Request', message })
const NOT_JSON = badRequest('Request body is not valid JSON')

/** `count` members "k0": 1, "k1": 1, … as JSON text. */
function members(count: number): string {
  return Array.from({ length: count }, (_, index) => `"k${index}":1`).join(',')
}

async function post(path: string, body: string, testKey = key) {
  return server.request<{ message: string }>('POST', path, { key: testKey, body })
}

describe('duplicate keys', () => {
  it('a key written twice → 400 naming it, nothing stored', async () => {
    const caller = await server.createKey()
    const res = await post('/api/v0/customers', '{"first_name":"A","last_name":"B","phone_number":"+1555","phone_number":"NaN"}', caller)
    expect(res.status).toBe(400)
    expect(res.body).toEqual(badRequest('Request body has a duplicate key: phone_number'))
    const list = await server.request<{ data: unknown[] }>('GET', '/api/v0/customers', { key: caller })
    expect(list.body.data).toEqual([])
  })

  it('at any depth, named by its path', async () => {
    const cases: Array<[string, string]> = [
      ['{"name":"t","percentage":1,"address":{"city":"x","zip":"1","city":"y"}}', 'address.city'],
      ['{"name":"t","percentage":1,"extra":[{"k":1},{"k":1,"k":2}]}', 'extra[1].k'],
      ['{"name":"t","percentage":1,"a":[[0],[1,{"b":{"c":1,"c":1}}]]}', 'a[1][1].b.c'],
    ]
    for (const [body, path] of cases) {
      const res = await post('/api/v0/taxes', body)
      expect(res.status, body).toBe(400)
      expect(res.body, body).toEqual(badRequest(`Request body has a duplicate key: ${path}`))
    }
  })

  it('the same key written two ways (an escape) is a duplicate', async () => {
    const res = await post('/api/v0/taxes', '{"name":"t","n\\u0061me":"u","percentage":1}')
    expect(res.body).toEqual(badRequest('Request body has a duplicate key: name'))
  })

  it('a name in different objects, or inside a string, is no duplicate', async () => {
    const res = await post('/api/v0/taxes', '{"name":"\\"name\\": \\"percentage\\":", "description":"name","percentage":1,"appIds":["name"]}')
    expect(res.status).toBe(201)
    const nested = await post('/api/v0/taxes', '{"name":"t","percentage":1,"x":{"name":1},"y":[{"name":1},{"name":1}]}')
    // Past the parser: refused by the schema for its unknown properties, not for duplicates.
    expect(nested.status).toBe(400)
    expect(nested.body.message).toBe('property x should not exist; property y should not exist')
  })

  it('a body that is not JSON is called that, whatever keys it repeats', async () => {
    for (const body of ['{"name":"t","name":"u",}', '{"name":"t","name":"u"', '{"name":"t","name":"u"}}']) {
      const res = await post('/api/v0/taxes', body)
      expect(res.body, body).toEqual(NOT_JSON)
    }
  })

  it('prototype poisoning is refused as before, repeated or not', async () => {
    for (const body of ['{"__proto__":{"admin":true},"name":"t"}', '{"__proto__":1,"__proto__":2}', '{"constructor":{"prototype":{"admin":true}}}']) {
      const res = await post('/api/v0/taxes', body)
      expect(res.body, body).toEqual(NOT_JSON)
    }
    expect(({} as Record<string, unknown>).admin).toBeUndefined()
  })
})

describe('limits on a body', () => {
  it(`${MAX_KEYS_PER_OBJECT} keys in one object are parsed; one more → 400`, async () => {
    const at = await post('/api/v0/taxes', `{${members(MAX_KEYS_PER_OBJECT)}}`)
    // Parsed, then refused by the schema, which names the unknown properties.
    expect(at.status).toBe(400)
    expect(at.body.message).toMatch(/^property k0 should not exist; /)
    const over = await post('/api/v0/taxes', `{${members(MAX_KEYS_PER_OBJECT + 1)}}`)
    expect(over.body).toEqual(badRequest(`Request body has more than ${MAX_KEYS_PER_OBJECT} keys in one object`))
    const nested = await post('/api/v0/taxes', `{"name":"t","metadata":{${members(MAX_KEYS_PER_OBJECT + 1)}}}`)
    expect(nested.body).toEqual(badRequest(`Request body has more than ${MAX_KEYS_PER_OBJECT} keys in one object: metadata`))
  })

  it(`${MAX_ENTRIES} keys and array items in all are parsed; one more → 400`, async () => {
    // One key, and items to make up the rest.
    const items = (count: number) => `{"appIds":[${Array.from({ length: count }, () => '"a"').join(',')}]}`
    const at = await post('/api/v0/taxes', items(MAX_ENTRIES - 1))
    expect(at.status).toBe(400)
    expect(at.body.message).toBe('appIds must contain no more than 100 elements')
    const over = await post('/api/v0/taxes', items(MAX_ENTRIES))
    expect(over.body).toEqual(badRequest(`Request body has more than ${MAX_ENTRIES} keys and array items`))
    // Keys of many objects count together.
    const objects = `{"x":[${Array.from({ length: 20 }, () => `{${members(MAX_ENTRIES / 20)}}`).join(',')}]}`
    expect((await post('/api/v0/taxes', objects)).body).toEqual(badRequest(`Request body has more than ${MAX_ENTRIES} keys and array items`))
  })

  it(`nesting ${MAX_DEPTH} levels deep is parsed; one more → 400`, async () => {
    // The top object is one level: the arrays make up the rest.
    const nested = (levels: number) => `{"name":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)},"percentage":1}`
    const at = await post('/api/v0/taxes', nested(MAX_DEPTH))
    expect(at.body).toEqual(badRequest('name must be a string'))
    const over = await post('/api/v0/taxes', nested(MAX_DEPTH + 1))
    expect(over.body).toEqual(badRequest(`Request body is nested more than ${MAX_DEPTH} levels deep`))
  })

  it('a limit is reported before the text is known to be JSON (it is never read whole)', async () => {
    expect((await post('/api/v0/taxes', '['.repeat(100_000))).body).toEqual(badRequest(`Request body is nested more than ${MAX_DEPTH} levels deep`))
    expect((await post('/api/v0/taxes', `{${members(MAX_KEYS_PER_OBJECT + 1)},`)).body).toEqual(badRequest(`Request body has more than ${MAX_KEYS_PER_OBJECT} keys in one object`))
  })
})

describe('scanJson', () => {
  const scan = (text: string) => scanJson(Buffer.from(text))

  it('finds nothing in bodies without duplicates or limits, whatever their strings hold', () => {
    const clean = [
      '{}',
      '[]',
      '"a string"',
      '{"a":"b:c","b":"\\"a\\":1","c":"\\\\","d":["a","a"],"e":{"a":{"a":1}}}',
      '{ "a" : [ { "a" : 1 } , { "a" : 2 } ] , "b" : [ ] }',
      '{"é":1,"e\\u0301":2,"\\u00e9\\u0300":3}',
    ]
    for (const text of clean) expect(scan(text), text).toBeUndefined()
  })

  it('reads keys as JSON.parse does: escapes decoded, bytes compared exactly', () => {
    expect(scan('{"é":1,"\\u00e9":2}')?.message).toBe('Request body has a duplicate key: é')
    expect(scan('{"a\\"":1,"a\\u0022":2}')?.message).toBe('Request body has a duplicate key: a"')
    expect(scan('{"\\ud800":1,"\\udbff":2}')).toBeUndefined()
    expect(scan('{"\\ud800":1,"\\ud800":2}')?.message).toBe('Request body has a duplicate key: \ud800')
  })

  it('tells a limit from a duplicate, the first duplicate named', () => {
    expect(scan('{"a":1,"a":2,"b":1,"b":2}')).toEqual({ kind: 'duplicate', message: 'Request body has a duplicate key: a' })
    expect(scan(`{"a":1,"a":2,"x":{${members(MAX_KEYS_PER_OBJECT + 1)}}}`)?.kind).toBe('limit')
  })

  it('cuts a long path', () => {
    const long = 'k'.repeat(500)
    const message = scan(`{"${long}":1,"${long}":2}`)?.message ?? ''
    expect(message.startsWith('Request body has a duplicate key: kkk')).toBe(true)
    expect(message.endsWith('k…')).toBe(true)
    expect(message.length).toBeLessThan(300)
  })
})
