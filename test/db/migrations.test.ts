import SQLite from 'better-sqlite3'
import { Kysely, PostgresDialect, sql, SqliteDialect } from 'kysely'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { writeTransaction } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { migrateTo } from '../../src/modules/database.js'
import { EventsRepository } from '../../src/events/events-repository.js'
import { IDEMPOTENCY } from '../../src/idempotency/plugin.js'
import { IdempotencyKeysRepository } from '../../src/idempotency/repository.js'
import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { UnitOfWork } from '../../src/db/unit-of-work.js'
import { dropFreshDatabases, freshDatabase, TEST_BACKEND } from '../backend.js'

afterAll(async () => {
  await dropFreshDatabases()
})

/** A Kysely handle on a fresh database of the run's backend, with no schema: a test brings it to an earlier version. */
async function earlierVersion() {
  const fresh = await freshDatabase()
  const location = parseDatabaseUrl(fresh.url)
  const old = new Kysely<unknown>({
    dialect: location.kind === 'sqlite' ? new SqliteDialect({ database: new SQLite(location.filename) }) : new PostgresDialect({ pool: new pg.Pool({ connectionString: location.url, max: 1 }) }),
  })
  return { fresh, location, old }
}

describe(`upgrading a database written by an earlier version (${TEST_BACKEND})`, () => {
  it("0006 moves each webhook's total_events into its event count rows: the same totals, counted on from there", async () => {
    const { fresh, location, old } = await earlierVersion()
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

  it('0018 keeps each stored Idempotency-Key, for both environments: the request that wrote it is replayed, never run again', async () => {
    const { fresh, location, old } = await earlierVersion()
    const hourAgo = Date.now() - 60 * 60 * 1000
    const created = new Date(hourAgo).toISOString()
    const lease = new Date(Date.now() + 60_000).toISOString()
    try {
      await migrateTo(old, '0017_checkout')
      await sql`insert into apps (id, name, created_at) values ('app-1', 'old', ${created})`.execute(old)
      await sql`insert into idempotency_keys (app_id, key, fingerprint, status_code, content_type, body, created_at, lease_until, committed_at)
                values ('app-1', 'answered', 'fp-1', 201, 'application/json', '{"id":"cus_1"}', ${created}, ${created}, ${created}),
                       ('app-1', 'running', 'fp-2', null, null, null, ${created}, ${lease}, null)`.execute(old)
    } finally {
      await old.destroy()
    }

    const db = await openDatabase(location)
    try {
      expect(await fresh.count('select count(*) from idempotency_keys')).toBe(4)
      const keys = new IdempotencyKeysRepository(db)
      const claim = (environment: 'development' | 'production', key: string, fingerprint: string) =>
        keys.claim({ appId: 'app-1', environment, key, fingerprint, leaseMs: 30_000, retentionMs: IDEMPOTENCY.retentionMs })
      for (const environment of ['development', 'production'] as const) {
        expect(await claim(environment, 'answered', 'fp-1')).toEqual({ outcome: 'completed', response: { statusCode: 201, contentType: 'application/json', body: '{"id":"cus_1"}' } })
        expect(await claim(environment, 'running', 'fp-2')).toEqual({ outcome: 'running' })
      }
      // From here on each environment has its own: a new key claimed by one is free in the other.
      expect((await claim('development', 'new', 'fp-3')).outcome).toBe('claimed')
      expect((await claim('development', 'new', 'fp-3')).outcome).toBe('running')
      expect((await claim('production', 'new', 'fp-4')).outcome).toBe('claimed')
      // The purge takes both copies of an earlier row.
      expect(await keys.purgeExpired(new Date(hourAgo + 1).toISOString())).toBe(4)
      expect(await fresh.count('select count(*) from idempotency_keys')).toBe(2)
    } finally {
      await db.destroy()
    }
  })

  it("0019 gives earlier invoices and payment links a money: sandbox only where the application never had a production key, live otherwise", async () => {
    const { location, old } = await earlierVersion()
    const now = new Date().toISOString()
    // app-dev: development keys only; app-both: a development and a (deactivated) production key;
    // app-gone: deleted, its keys with it, so who made its rows can't be told.
    const apps: [id: string, deletedAt: string | null, keyEnvironments: string[]][] = [
      ['app-dev', null, ['development', 'development']],
      ['app-both', null, ['development', 'production']],
      ['app-gone', now, []],
    ]
    try {
      await migrateTo(old, '0018_idempotency_per_environment')
      for (const [app, deletedAt, keyEnvironments] of apps) {
        await sql`insert into apps (id, name, created_at, deleted_at) values (${app}, ${app}, ${now}, ${deletedAt})`.execute(old)
        for (const [i, environment] of keyEnvironments.entries()) {
          await sql`insert into api_keys (id, app_id, client_key, secret_digest, environment, scopes, active, created_at)
                    values (${`${app}-key-${i}`}, ${app}, ${`pk_${app}_${i}`}, 'digest', ${environment}, '[]', ${environment === 'production' ? 0 : 1}, ${now})`.execute(old)
        }
        await sql`insert into invoices (id, app_id, customer_id, name, email, currency, status, lines, subtotal, tax_amount, total, amount_paid, due_date, delivery, payment_methods, payment_link, partial_payment, created_at, updated_at)
                  values (${`${app}-invoice`}, ${app}, 'customer', 'Invoice', 'b@example.com', 'usdc', 'OPEN', '[]', '100', '0', '100', '0', ${now}, 'EMAIL', '[]', 0, 0, ${now}, ${now})`.execute(old)
        await sql`insert into payment_links (id, app_id, slug, title, link_type, currency, products, is_for_all_products, allow_quantity_adjustment, collect_tax, collect_address, allow_mobile_payment, limit_payments, payments_count, created_at, updated_at)
                  values (${`${app}-link`}, ${app}, 'link', 'Link', 'DONATION', 'usdc', '[]', 0, 0, 0, 0, 0, 0, 0, ${now}, ${now})`.execute(old)
      }
    } finally {
      await old.destroy()
    }

    const db = await openDatabase(location)
    try {
      const invoices = await db.selectFrom('invoices').select(['app_id', 'environment']).orderBy('app_id').execute()
      const links = await db.selectFrom('payment_links').select(['app_id', 'environment']).orderBy('app_id').execute()
      const expected = [
        { app_id: 'app-both', environment: 'live' },
        { app_id: 'app-dev', environment: 'sandbox' },
        { app_id: 'app-gone', environment: 'live' },
      ]
      expect(invoices).toEqual(expected)
      expect(links).toEqual(expected)
    } finally {
      await db.destroy()
    }
  })
  it("0022 drops live wallets' made-up addresses (nothing watched them) and keeps the sandbox's; the unique wallet per chain holds", async () => {
    const { location, old } = await earlierVersion()
    const now = new Date().toISOString()
    try {
      await migrateTo(old, '0021_receiving_addresses')
      await sql`insert into apps (id, name, created_at) values ('app-1', 'old', ${now})`.execute(old)
      for (const [id, environment, address] of [
        ['wallet-live', 'live', '0x1111111111111111111111111111111111111111'],
        ['wallet-sandbox', 'sandbox', '0x2222222222222222222222222222222222222222'],
      ] as const) {
        await sql`insert into wallets (id, environment, app_id, chain, address, created_at, updated_at) values (${id}, ${environment}, 'app-1', 'base', ${address}, ${now}, ${now})`.execute(old)
      }
    } finally {
      await old.destroy()
    }

    const db = await openDatabase(location)
    try {
      expect(await db.selectFrom('wallets').select(['id', 'address']).orderBy('id').execute()).toEqual([
        { id: 'wallet-live', address: null },
        { id: 'wallet-sandbox', address: '0x2222222222222222222222222222222222222222' },
      ])
      const again = db.insertInto('wallets').values({ id: 'wallet-twin', environment: 'live', app_id: 'app-1', chain: 'base', address: null, created_at: now, updated_at: now }).execute()
      await expect(again).rejects.toThrow()
    } finally {
      await db.destroy()
    }
  })
})
