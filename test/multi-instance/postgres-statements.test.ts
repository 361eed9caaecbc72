import { sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db, readSnapshot, writeTransaction } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { isDatabaseUnavailable } from '../../src/db/errors.js'
import { NAMED_STATEMENT_LIMIT } from '../../src/db/postgres/statements.js'
import { pipelined, PreparedQuery } from '../../src/db/prepared.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'
import { startTestServer } from '../helper.js'

// PostgreSQL only (this folder runs on the PostgreSQL + Redis half). Statements with parameters
// run as named prepared statements, parsed once per connection; a schema change by another
// process (a newer instance's migration) must not break the statements prepared before it.

afterAll(async () => {
  await dropFreshDatabases()
})

/** A database with one pooled connection, so every statement meets the same prepared ones. */
async function openOneConnection(fresh: FreshDatabase): Promise<Db> {
  return openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 1))
}

async function preparedTexts(db: Db): Promise<string[]> {
  // Without parameters this query itself runs unnamed, so it does not list itself.
  const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements order by prepare_time`.execute(db)
  return rows.map((row) => row.statement)
}

const INSERT_APP = new PreparedQuery<{ id: string }>(2, (db, id, name) => db.insertInto('apps').values({ id, name, created_at: '2026-01-01T00:00:00.000Z' }).returning('id'))

describe('round trips on PostgreSQL', () => {
  it("a write transaction's BEGIN goes out with its first statement, and pipelined statements go out together", async () => {
    const fresh = await freshDatabase()
    const target = new URL(fresh.url)
    const proxy = await TcpProxy.start(target.hostname, Number(target.port))
    const db = await openDatabase(parseDatabaseUrl(proxy.urlFor(fresh.url), 'DATABASE_URL', 1))
    try {
      // the connection made and both statements prepared, so only the runs below are counted
      await writeTransaction(db, (tx) => pipelined(tx, INSERT_APP.bind(tx, '44444444-4444-4444-8444-444444444440', 'warm')))
      await writeTransaction(db, (tx) => INSERT_APP.execute(tx, '44444444-4444-4444-8444-444444444449', 'warm 2'))

      proxy.flights = 0
      await writeTransaction(db, (tx) => INSERT_APP.execute(tx, '44444444-4444-4444-8444-444444444441', 'one'))
      // BEGIN with the insert, then COMMIT: three before
      expect(proxy.flights).toBe(2)

      proxy.flights = 0
      const rows = await writeTransaction(db, (tx) =>
        pipelined(tx, INSERT_APP.bind(tx, '44444444-4444-4444-8444-444444444442', 'two'), INSERT_APP.bind(tx, '44444444-4444-4444-8444-444444444443', 'three')),
      )
      expect(rows).toEqual([[{ id: '44444444-4444-4444-8444-444444444442' }], [{ id: '44444444-4444-4444-8444-444444444443' }]])
      // BEGIN with both inserts, then COMMIT
      expect(proxy.flights).toBe(2)

      proxy.flights = 0
      // a transaction that ran nothing sends nothing
      await writeTransaction(db, async () => undefined)
      expect(proxy.flights).toBe(0)
      expect(await fresh.query("select name from apps where name in ('one', 'two', 'three') order by name")).toEqual([{ name: 'one' }, { name: 'three' }, { name: 'two' }])
    } finally {
      await db.destroy()
      await proxy.close()
    }
  })
})

describe('named statements on PostgreSQL', () => {
  it('a statement run three times is prepared once on its connection', async () => {
    const db = await openOneConnection(await freshDatabase())
    try {
      const before = (await preparedTexts(db)).length
      for (let run = 0; run < 3; run++) {
        expect(await db.selectFrom('apps').select('id').where('name', '=', `app ${run}`).execute()).toEqual([])
      }
      const texts = await preparedTexts(db)
      expect(texts.length).toBe(before + 1)
      expect(texts.filter((text) => text === 'select "id" from "apps" where "name" = $1')).toHaveLength(1)
    } finally {
      await db.destroy()
    }
  })

  it(`names the first ${NAMED_STATEMENT_LIMIT} distinct texts and runs the next ones unnamed, with the same answers`, async () => {
    const db = await openOneConnection(await freshDatabase())
    try {
      const before = (await preparedTexts(db)).length
      const distinct = (n: number) => sql<{ n: number }>`select ${n}::int + ${sql.lit(n)} as n`.execute(db)
      for (let n = 0; n < NAMED_STATEMENT_LIMIT - before; n++) expect((await distinct(n)).rows).toEqual([{ n: 2 * n }])
      expect((await preparedTexts(db)).length).toBe(NAMED_STATEMENT_LIMIT)
      const past = NAMED_STATEMENT_LIMIT - before
      expect((await distinct(past)).rows).toEqual([{ n: 2 * past }])
      expect((await distinct(past)).rows).toEqual([{ n: 2 * past }])
      expect((await preparedTexts(db)).length).toBe(NAMED_STATEMENT_LIMIT)
    } finally {
      await db.destroy()
    }
  })

  describe('after another process adds a column to a table a prepared `select *` reads', () => {
    async function probeTable(): Promise<{ fresh: FreshDatabase; db: Db; selectAll: (tx: Db) => Promise<Record<string, unknown>[]> }> {
      const fresh = await freshDatabase()
      await fresh.query('create table probe (id text primary key)')
      await fresh.query("insert into probe (id) values ('a')")
      const db = await openOneConnection(fresh)
      const selectAll = async (tx: Db) => (await sql<Record<string, unknown>>`select * from probe where id = ${'a'}`.execute(tx)).rows
      // Prepared, and run past PostgreSQL's first plans.
      for (let run = 0; run < 6; run++) expect(await selectAll(db)).toEqual([{ id: 'a' }])
      await fresh.query("alter table probe add column extra text not null default 'x'")
      return { fresh, db, selectAll }
    }

    it('outside a transaction the statement is prepared anew and answers with the new column', async () => {
      const { db, selectAll } = await probeTable()
      try {
        expect(await selectAll(db)).toEqual([{ id: 'a', extra: 'x' }])
        expect(await selectAll(db)).toEqual([{ id: 'a', extra: 'x' }])
      } finally {
        await db.destroy()
      }
    })

    it('a write transaction with retries runs again and commits once', async () => {
      const { fresh, db, selectAll } = await probeTable()
      try {
        let runs = 0
        const read = await writeTransaction(
          db,
          async (tx) => {
            runs++
            await sql`insert into probe (id) values (${`b${runs}`})`.execute(tx)
            return selectAll(tx)
          },
          { retries: 1 },
        )
        expect(read).toEqual([{ id: 'a', extra: 'x' }])
        expect(runs).toBe(2)
        expect(await fresh.query('select id from probe order by id')).toEqual([{ id: 'a' }, { id: 'b2' }])
      } finally {
        await db.destroy()
      }
    })

    it('a write transaction without retries fails as "unavailable" (503) and changes nothing; the next one commits', async () => {
      const { fresh, db, selectAll } = await probeTable()
      try {
        const write = (id: string) =>
          writeTransaction(db, async (tx) => {
            await sql`insert into probe (id) values (${id})`.execute(tx)
            return selectAll(tx)
          })
        const error: unknown = await write('b').catch((caught: unknown) => caught)
        expect(isDatabaseUnavailable(error)).toBe(true)
        expect(await write('c')).toEqual([{ id: 'a', extra: 'x' }])
        expect(await fresh.query('select id from probe order by id')).toEqual([{ id: 'a' }, { id: 'c' }])
      } finally {
        await db.destroy()
      }
    })

    it('a snapshot read runs again and answers', async () => {
      const { db, selectAll } = await probeTable()
      try {
        expect(await readSnapshot(db, selectAll)).toEqual([{ id: 'a', extra: 'x' }])
      } finally {
        await db.destroy()
      }
    })
  })

  it('the API keeps answering when a migration elsewhere adds columns to the keys and webhooks tables', async () => {
    const server = await startTestServer()
    try {
      const key = await server.createKey()
      const created = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'w', url: 'https://example.com/h' } })
      expect(created.status).toBe(201)
      const path = `/api/v0/webhooks/${created.body.id}`
      const before = await server.request('GET', path, { key })
      for (let run = 0; run < 10; run++) expect((await server.request('GET', path, { key })).status).toBe(200)
      await server.database.query('alter table api_keys add column later_note text')
      await server.database.query('alter table webhooks add column later_note text')
      const statuses: number[] = []
      for (let run = 0; run < 10; run++) statuses.push((await server.request('GET', path, { key })).status)
      expect(statuses).toEqual(Array.from({ length: 10 }, () => 200))
      expect((await server.request('GET', path, { key })).body).toEqual(before.body)
      expect((await server.request('GET', '/api/v0/webhooks', { key })).status).toBe(200)
      const patched = await server.request<{ name: string }>('PATCH', path, { key, body: { name: 'renamed' } })
      expect(patched.status).toBe(200)
      expect(patched.body.name).toBe('renamed')
    } finally {
      await server.close()
    }
  })
})
