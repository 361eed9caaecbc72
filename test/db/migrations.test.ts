import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, sql, SqliteDialect } from 'kysely'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { openDatabase, writeTransaction } from '../../src/db/database.js'
import { migrateTo } from '../../src/db/migrations.js'
import { EventsRepository } from '../../src/db/repositories/events.js'
import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { UnitOfWork } from '../../src/db/unit-of-work.js'
import { dropFreshDatabases, freshDatabase, TEST_BACKEND } from '../backend.js'

afterAll(async () => {
  await dropFreshDatabases()
})

describe(`upgrading a database written by an earlier version (${TEST_BACKEND})`, () => {
  it("0006 moves each webhook's total_events into its event count rows: the same totals, counted on from there", async () => {
    const fresh = await freshDatabase()
    const location = parseDatabaseUrl(fresh.url)
    const old = new Kysely<unknown>({
      dialect: location.kind === 'sqlite' ? new SqliteDialect({ database: new SQLite(location.filename) }) : new PostgresDialect({ pool: new pg.Pool({ connectionString: location.url, max: 1 }) }),
    })
    const now = new Date().toISOString()
    try {
      await migrateTo(old, '0005_deferred_fanout')
      await sql`insert into apps (id, name, created_at) values ('app-1', 'old', ${now})`.execute(old)
      for (const [id, total] of [
        ['webhook-7', 7],
        ['webhook-0', 0],
      ] as const) {
        await sql`insert into webhooks (id, app_id, name, url, is_active, encrypted, signing_secret, total_events, successful_deliveries, failed_deliveries, created_at, updated_at)
                  values (${id}, 'app-1', ${id}, 'https://example.com/hook', 1, 0, 'whsec_x', ${total}, 0, 0, ${now}, ${now})`.execute(old)
      }
    } finally {
      await old.destroy()
    }

    const db = await openDatabase(location)
    try {
      const webhooks = new WebhooksRepository(db)
      expect((await webhooks.find('app-1', 'webhook-7'))?.total_events).toBe(7)
      expect((await webhooks.find('app-1', 'webhook-0'))?.total_events).toBe(0)
      expect(await fresh.count('select count(*) from webhook_event_counts')).toBe(1)
      await writeTransaction(db, async (tx) => new EventsRepository(tx, new UnitOfWork(tx)).emit('app-1', 'tax.created', { n: 1 }))
      expect((await webhooks.find('app-1', 'webhook-7'))?.total_events).toBe(8)
      expect((await webhooks.find('app-1', 'webhook-0'))?.total_events).toBe(1)
    } finally {
      await db.destroy()
    }
  })
})
