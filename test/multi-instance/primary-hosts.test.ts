// vitest: postgres project only — connects to PostgreSQL servers listed in one URL
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isDatabaseUnavailable, isReadOnlyRefusal } from '../../src/db/errors.js'
import { openPostgres } from '../../src/db/postgres/open.js'
import { connectToPrimary, NoPrimaryError } from '../../src/db/postgres/primary.js'
import { ADMIN_DATABASE_URL } from '../backend.js'
import { FakePostgres } from '../helpers/fake-postgres.js'
import { closedPort } from './limits-helpers.js'

/**
 * A URL listing several hosts (a failover formation's): the pool, and the LISTEN connection, pass
 * over a host that refuses connections and one that is read-only (a standby) for the one that
 * takes writes, and a session that refuses a write as read-only leaves the pool.
 */

/** The test database's URL with `hosts` (host:port each) before its own host in the list. */
function withHostsBefore(hosts: string[]): string {
  const real = new URL(ADMIN_DATABASE_URL)
  return ADMIN_DATABASE_URL.replace(`@${real.host}/`, `@${[...hosts, real.host].join(',')}/`)
}

const realPort = Number(new URL(ADMIN_DATABASE_URL).port || 5432)
let standby: FakePostgres
let refused: number

beforeAll(async () => {
  standby = await FakePostgres.start(() => 'read-only')
  refused = await closedPort()
})

afterAll(async () => {
  await standby.close()
})

describe('a PostgreSQL URL listing several hosts', () => {
  it('the pool passes over a host that refuses connections and a standby, and writes to the host that takes writes', async () => {
    const before = standby.connections.length
    const db = await openPostgres(withHostsBefore([`127.0.0.1:${refused}`, `127.0.0.1:${standby.port}`]), 2)
    try {
      const { rows } = await sql<{ port: string; read_only: string }>`select current_setting('port') as port, current_setting('transaction_read_only') as read_only`.execute(db)
      expect(rows).toEqual([{ port: String(realPort), read_only: 'off' }])
      expect(standby.connections.length - before).toBe(1)
    } finally {
      await db.destroy()
    }
  })

  it('with no host that takes writes, opening fails with one line naming each host and why', async () => {
    const url = `postgres://u:hunter2@127.0.0.1:${refused},127.0.0.1:${standby.port}/db`
    const error: unknown = await openPostgres(url, 1).then(() => undefined, (reason: unknown) => reason)
    expect(error).toBeInstanceOf(Error)
    const message = error instanceof Error ? error.message : ''
    expect(message).toMatch(
      new RegExp(`^cannot connect to postgres://u:\\*\\*\\*@127\\.0\\.0\\.1:${refused},127\\.0\\.0\\.1:${standby.port}/db: no writable primary among the hosts: 127\\.0\\.0\\.1:${refused}: connect ECONNREFUSED [^;]+; 127\\.0\\.0\\.1:${standby.port}: read-only \\(a standby\\)$`),
    )
    expect(message).not.toContain('hunter2')
  })

  it('a pooled session that refuses a write as read-only (a demoted primary) leaves the pool: the next checkout gets a fresh, checked session', async () => {
    const db = await openPostgres(withHostsBefore([`127.0.0.1:${standby.port}`]), 1)
    try {
      let refusedWrite: unknown
      const demoted = await db.connection().execute(async (connection) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(connection)
        await sql`set session characteristics as transaction read only`.execute(connection)
        refusedWrite = await sql`create temp table refused (x int)`.execute(connection).then(() => undefined, (reason: unknown) => reason)
        return rows[0]?.pid
      })
      expect(isReadOnlyRefusal(refusedWrite)).toBe(true)
      expect(isDatabaseUnavailable(refusedWrite)).toBe(true)
      const after = await db.connection().execute(async (connection) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(connection)
        await sql`create temp table accepted (x int)`.execute(connection)
        return rows[0]?.pid
      })
      expect(after).toEqual(expect.any(Number))
      expect(after).not.toBe(demoted)
    } finally {
      await db.destroy()
    }
  })

  it('the LISTEN connection goes to the host that takes writes too; with none, NoPrimaryError, which answers 503', async () => {
    const client = await connectToPrimary(withHostsBefore([`127.0.0.1:${refused}`, `127.0.0.1:${standby.port}`]), { connectionTimeoutMillis: 3_000 })
    try {
      const { rows } = await client.query<{ port: string }>(`select current_setting('port') as port`)
      expect(rows).toEqual([{ port: String(realPort) }])
    } finally {
      await client.end()
    }
    const none: unknown = await connectToPrimary(`postgres://u@127.0.0.1:${refused},127.0.0.1:${standby.port}/db`, { connectionTimeoutMillis: 3_000 }).then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(none).toBeInstanceOf(NoPrimaryError)
    expect(isDatabaseUnavailable(none)).toBe(true)
  })
})
