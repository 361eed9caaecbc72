import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BACKEND } from '../backend.js'
import { type ApiResponse, startTestServer, type TestKey, type TestServer } from '../helper.js'

const STORAGE_DOWN = { statusCode: 503, error: 'Service Unavailable', message: 'The database storage is unavailable', details: 'Retry the request shortly' }

let server: TestServer
let key: TestKey
beforeAll(async () => {
  server = await startTestServer()
  key = await server.createKey()
})
afterAll(async () => server.close())

/**
 * A storage that takes no more writes, on this run's backend. SQLite: the server's connection
 * may not grow the file past its current size (max_page_count: writes that need a page fail with
 * SQLITE_FULL, as on a full disk). PostgreSQL: the database turns read-only and the server's
 * connections are cut, so its new ones are read-only (25006). Returns how to clear it.
 */
async function storageFault(): Promise<() => Promise<void>> {
  if (TEST_BACKEND === 'postgres') {
    const cut = () => server.database.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = 'devplatform'")
    const [row] = await server.database.query<{ name: string }>('select current_database() as name')
    await server.database.query(`alter database "${String(row?.name)}" set default_transaction_read_only = on`)
    await cut()
    return async () => {
      await server.database.query(`alter database "${String(row?.name)}" set default_transaction_read_only = off`)
      await cut()
    }
  }
  const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(server.app.db)
  await sql.raw(`pragma max_page_count = ${Number(rows[0]?.page_count)}`).execute(server.app.db)
  return async () => {
    await sql`pragma max_page_count = 1073741823`.execute(server.app.db)
  }
}

const tax = (i: number) => ({ name: `tax ${i}`, description: 'x'.repeat(255), percentage: 5 })

describe('storage faults (full, read-only): 503 that says so, nothing changed, logged once, recovered by itself', () => {
  it('answers 503 with Retry-After while writes fail, keeps serving reads, and writes again once cleared', async () => {
    const clear = await storageFault()
    let refused: ApiResponse | undefined
    try {
      // Until the free space left in the file's pages (SQLite) or the server's cut connections (PostgreSQL) are used up.
      for (let i = 0; i < 500 && refused === undefined; i++) {
        const before = await server.database.count('select count(*) as n from taxes')
        const res = await server.request('POST', '/api/v0/taxes', { key, body: tax(i) })
        if (res.status === 503 && (res.body as { message?: string }).message === STORAGE_DOWN.message) {
          refused = res
          expect(await server.database.count('select count(*) as n from taxes')).toBe(before)
        } else {
          expect([201, 503], JSON.stringify(res.body)).toContain(res.status)
        }
      }
      if (refused === undefined) throw new Error('the storage fault never showed')
      expect(refused.body).toEqual(STORAGE_DOWN)
      expect(refused.headers.get('retry-after')).toBe('1')
      // The fault lasts: every write is refused the same way, and logged once, not per request.
      for (let i = 0; i < 20; i++) {
        const res = await server.request('POST', '/api/v0/taxes', { key, body: tax(1000 + i) })
        expect(res.status).toBe(503)
        expect(res.body).toEqual(STORAGE_DOWN)
      }
      expect(server.logs().split('\n').filter((line) => line.includes('database storage unavailable'))).toHaveLength(1)
      // Reads and liveness are not affected.
      expect((await server.request('GET', '/api/v0/taxes', { key })).status).toBe(200)
      expect((await server.request('GET', '/api/v0/health/public')).status).toBe(200)
    } finally {
      await clear()
    }
    // Cleared: the next writes succeed without a restart (PostgreSQL: after the cut connections are replaced).
    const statuses: number[] = []
    for (let i = 0; i < 5; i++) statuses.push((await server.request('POST', '/api/v0/taxes', { key, body: tax(2000 + i) })).status)
    expect(statuses.at(-1)).toBe(201)
    expect(statuses.every((status) => status === 201 || status === 503)).toBe(true)
  })
})
