import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_UUID, startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * A JSON body is read as UTF-8 and nothing else: a Content-Encoding the server does not decode
 * or a charset other than UTF-8 is 415 and changes nothing, rather than being misread as UTF-8.
 */
let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

const CUSTOMER = { first_name: 'Zoé', last_name: 'Ñúñez', phone_number: '1' }

const UNSUPPORTED_ENCODING = {
  statusCode: 415,
  error: 'Unsupported Media Type',
  message: 'Unsupported Content-Encoding: send the body unencoded (no Content-Encoding, or identity)',
}
const UNSUPPORTED_CHARSET = {
  statusCode: 415,
  error: 'Unsupported Media Type',
  message: 'Unsupported charset: send application/json in UTF-8 (charset=utf-8, or no charset)',
}

async function postCustomer(testKey: TestKey, body: Buffer, headers: Record<string, string>): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await fetch(`${server.baseUrl}/api/v0/customers`, { method: 'POST', headers: { ...testKey.headers, ...headers }, body })
  return { status: res.status, headers: res.headers, body: await res.json() }
}

async function storedNames(testKey: TestKey): Promise<string[]> {
  const res = await server.request<{ data: { first_name: string; last_name: string }[] }>('GET', '/api/v0/customers?take=100', { key: testKey })
  expect(res.status).toBe(200)
  return res.body.data.map((customer) => `${customer.first_name} ${customer.last_name}`)
}

const utf8Body = Buffer.from(JSON.stringify(CUSTOMER), 'utf8')
const latin1Body = Buffer.from(JSON.stringify(CUSTOMER), 'latin1')

describe('Content-Encoding', () => {
  it('gzip, deflate, br or any coding but identity → 415 with Accept-Encoding: identity, nothing stored', async () => {
    // A fresh application: its customer list holds only what this test created.
    const ownKey = await server.createKey()
    const cases: [string, Buffer][] = [
      ['gzip', gzipSync(utf8Body)],
      ['GZIP', gzipSync(utf8Body)],
      ['deflate', utf8Body],
      ['br', utf8Body],
      ['identity, gzip', gzipSync(utf8Body)],
      ['x-unknown', utf8Body],
    ]
    for (const [coding, body] of cases) {
      const res = await postCustomer(ownKey, body, { 'content-type': 'application/json', 'content-encoding': coding })
      expect(res.status, coding).toBe(415)
      expect(res.body).toEqual(UNSUPPORTED_ENCODING)
      expect(res.headers.get('accept-encoding')).toBe('identity')
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
    }
    expect(await storedNames(ownKey)).toEqual([])
  })

  it('identity (any case) or an empty value is no coding: the body is read', async () => {
    // A fresh application: its customer list holds only what this test created.
    const ownKey = await server.createKey()
    for (const coding of ['identity', 'IDENTITY', '']) {
      const res = await postCustomer(ownKey, utf8Body, { 'content-type': 'application/json', 'content-encoding': coding })
      expect(res.status, coding).toBe(201)
    }
    expect(await storedNames(ownKey)).toEqual(['Zoé Ñúñez', 'Zoé Ñúñez', 'Zoé Ñúñez'])
  })

  it('a request without a body is not refused for its Content-Encoding (nothing to misread)', async () => {
    const res = await server.request('DELETE', `/api/v0/webhooks/${MISSING_UUID}`, {
      key,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    })
    expect(res.status).toBe(404)
  })
})

describe('charset', () => {
  it('a charset other than UTF-8 → 415, nothing stored', async () => {
    // A fresh application: its customer list holds only what this test created.
    const ownKey = await server.createKey()
    for (const charset of ['latin1', 'iso-8859-1', 'ISO-8859-1', 'windows-1252', 'utf-16', 'us-ascii', '"latin1"', '']) {
      const res = await postCustomer(ownKey, latin1Body, { 'content-type': `application/json; charset=${charset}` })
      expect(res.status, charset).toBe(415)
      expect(res.body).toEqual(UNSUPPORTED_CHARSET)
    }
    // A second charset parameter that is not UTF-8 is refused too.
    const twice = await postCustomer(ownKey, utf8Body, { 'content-type': 'application/json; charset=utf-8; charset=latin1' })
    expect(twice.status).toBe(415)
    expect(await storedNames(ownKey)).toEqual([])
  })

  it('UTF-8 in any spelling, quoted or not, or no charset → read as UTF-8', async () => {
    // A fresh application: its customer list holds only what this test created.
    const ownKey = await server.createKey()
    const types = [
      'application/json',
      'application/json; charset=utf-8',
      'application/json; charset=UTF-8',
      'application/json;charset=utf-8',
      'application/json; charset="utf-8"',
      'application/json; charset="UTF-8"',
      'application/json; charset=utf8',
      'Application/JSON; Charset=UTF-8',
    ]
    for (const type of types) {
      const res = await postCustomer(ownKey, utf8Body, { 'content-type': type })
      expect(res.status, type).toBe(201)
      expect(res.body).toMatchObject(CUSTOMER)
    }
    expect(await storedNames(ownKey)).toEqual(types.map(() => 'Zoé Ñúñez'))
  })

  it('bytes that are not UTF-8 under no charset → 400, not stored as replacement characters', async () => {
    // A fresh application: its customer list holds only what this test created.
    const ownKey = await server.createKey()
    const res = await postCustomer(ownKey, latin1Body, { 'content-type': 'application/json' })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'Request body is not valid UTF-8' })
    expect(await storedNames(ownKey)).toEqual([])
  })

  it('a UTF-8 byte order mark is ignored (RFC 8259 allows it)', async () => {
    // A fresh application: its customer list holds only what this test created.
    const ownKey = await server.createKey()
    const res = await postCustomer(ownKey, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8Body]), { 'content-type': 'application/json' })
    expect(res.status).toBe(201)
    expect(await storedNames(ownKey)).toEqual(['Zoé Ñúñez'])
  })
})
