import { LATEST_MIGRATION } from '../../src/modules/database.js'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { openDatabase } from '../../src/modules/database.js'
import { isDatabaseUnavailable, isRetryableConflict, isUniqueViolation } from '../../src/db/errors.js'
import { NewerSchemaError } from '../../src/db/migrations.js'
import { dropFreshDatabases, freshDatabase, TEST_BACKEND } from '../backend.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'

/**
 * Where SQLite and PostgreSQL differ (timestamps, booleans, NUL in text, case folding, error
 * codes, schema versions), the API answers the same: this file runs in both test projects and
 * asserts one expected answer for each.
 */
let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => {
  await server.close()
  await dropFreshDatabases()
})

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe(`the same answers on ${TEST_BACKEND}`, () => {
  it('timestamps: ISO 8601 UTC with milliseconds, stored as written and ordered newest first', async () => {
    const first = await server.request<{ id: string; created_at: string; updated_at: string }>('POST', '/api/v0/taxes', { key, body: { name: 'T1', percentage: 1 } })
    const second = await server.request<{ id: string; created_at: string }>('POST', '/api/v0/taxes', { key, body: { name: 'T2', percentage: 2 } })
    expect(first.body.created_at).toMatch(ISO_MS)
    expect(first.body.updated_at).toBe(first.body.created_at)
    const read = await server.request<{ created_at: string }>('GET', `/api/v0/taxes/${first.body.id}`, { key })
    expect(read.body.created_at).toBe(first.body.created_at)
    const list = await server.request<{ id: string }[]>('GET', '/api/v0/taxes?take=2', { key })
    expect(list.body.map((tax) => tax.id)).toEqual([second.body.id, first.body.id])
  })

  it('booleans: true and false round-trip as JSON booleans, and filter', async () => {
    const off = await server.request<{ id: string; active: boolean }>('POST', '/api/v0/taxes', { key, body: { name: 'Off', percentage: 3, active: false } })
    expect(off.body.active).toBe(false)
    const on = await server.request<{ active: boolean }>('GET', `/api/v0/taxes/${off.body.id}`, { key })
    expect(on.body.active).toBe(false)
    const inactive = await server.request<{ id: string; active: boolean }[]>('GET', '/api/v0/taxes?active=false', { key })
    expect(inactive.body.map((tax) => tax.id)).toEqual([off.body.id])
    const webhook = await server.request<{ isActive: boolean; encrypted: boolean }>('POST', '/api/v0/webhooks', {
      key,
      body: { name: 'w', url: 'https://example.com/h', isActive: false, encrypted: true },
    })
    expect(webhook.body).toMatchObject({ isActive: false, encrypted: true })
  })

  it('NUL (a control character) in text: 400 naming the field in a body, a query string and a path, and nothing stored', async () => {
    const body = await server.request('POST', '/api/v0/customers', { key, body: { first_name: 'A\u0000B', last_name: 'C', phone_number: '+15550100' } })
    expect(body.status).toBe(400)
    expect(body.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'first_name must not contain control characters' })
    const query = await server.request('GET', '/api/v0/customers?name=a%00b', { key })
    expect(query.status).toBe(400)
    expect(query.body).toMatchObject({ message: 'name must not contain control characters' })
    const path = await server.request('GET', '/api/v0/taxes/a%00b', { key })
    expect(path.status).toBe(400)
    const stored = await server.database.count('select count(*) as n from customers')
    expect(stored).toBe(0)
    // Just past the control characters: accepted.
    const fine = await server.request('GET', '/api/v0/customers?name=a%20b', { key })
    expect(fine.status).toBe(200)
  })

  it('case-insensitive name filters fold all of Unicode, not only ASCII', async () => {
    for (const [first, last] of [
      ['Émile', 'Zola'],
      ['ÖZLEM', 'Şahin'],
      ['plain', 'ASCII'],
    ]) {
      const res = await server.request('POST', '/api/v0/customers', { key, body: { first_name: first, last_name: last, phone_number: '+15550101' } })
      expect(res.status).toBe(201)
    }
    const names = async (needle: string) =>
      (await server.request<{ data: { first_name: string }[] }>('GET', `/api/v0/customers?name=${encodeURIComponent(needle)}`, { key })).body.data.map((c) => c.first_name)
    expect(await names('émile')).toEqual(['Émile'])
    expect(await names('ÉMILE ZOLA')).toEqual(['Émile'])
    expect(await names('özlem')).toEqual(['ÖZLEM'])
    expect(await names('ascii')).toEqual(['plain'])
    // LIKE's wildcards are literal characters here.
    expect(await names('%')).toEqual([])
    expect(await names('_')).toEqual([])
  })

  it('unique indexes: a duplicate answers 409 with the same message on both', async () => {
    const make = (email: string) => server.request('POST', '/api/v0/customers', { key, body: { first_name: 'D', last_name: 'U', phone_number: '+15550102', email } })
    expect((await make('Same@Example.com')).status).toBe(201)
    const dup = await make('same@example.COM')
    expect(dup.status).toBe(409)
    expect(dup.body).toEqual({ statusCode: 409, error: 'Conflict', message: 'Customer with this email already exists' })
  })

  it('the error classification reads both engines\' codes', () => {
    expect(isUniqueViolation({ code: 'SQLITE_CONSTRAINT_UNIQUE' })).toBe(true)
    expect(isUniqueViolation({ code: '23505' })).toBe(true)
    expect(isUniqueViolation({ code: '23503' })).toBe(false)
    expect(isRetryableConflict({ code: '40P01' })).toBe(true)
    expect(isRetryableConflict({ code: '40001' })).toBe(true)
    expect(isRetryableConflict({ code: '23505' })).toBe(false)
    for (const code of ['SQLITE_BUSY', 'SQLITE_FULL', 'SQLITE_READONLY', 'SQLITE_IOERR_WRITE', '57P01', '57P03', '08006', '53100', '55P03', '57014', 'ECONNREFUSED', 'ECONNRESET']) {
      expect(isDatabaseUnavailable({ code }), code).toBe(true)
    }
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true)
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true)
    for (const code of ['23505', '42P01', 'SQLITE_ERROR', 'SQLITE_CONSTRAINT_UNIQUE']) expect(isDatabaseUnavailable({ code }), code).toBe(false)
    expect(isDatabaseUnavailable(new Error('syntax error'))).toBe(false)
  })

  it('a schema written by a newer version is refused at start with one clear line, and nothing changes', async () => {
    const fresh = await freshDatabase()
    const location = parseDatabaseUrl(fresh.url)
    const db = await openDatabase(location)
    await sql`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', '2030-01-01T00:00:00.000Z')`.execute(db)
    await db.destroy()
    const refused = await openDatabase(location).then(
      () => undefined,
      (error: unknown) => error,
    )
    expect(refused).toBeInstanceOf(NewerSchemaError)
    expect(String((refused as Error).message)).toBe(
      `the database schema was written by a newer devplatform (migration 9999_from_the_future is unknown to this version, which knows up to ${LATEST_MIGRATION}); upgrade devplatform`,
    )
    expect((refused as Error).message.includes('\n')).toBe(false)
  })
})
