import { type QueryExecutorProvider, sql } from 'kysely'
import { chunks } from '../db/chunks.js'
import type { MigrationStep } from '../modules/module.js'
import { eventEnvironmentOf } from './environment.js'

/**
 * The events written before their environment was kept get the one their data names (its
 * livemode), read as JSON so a livemode nested deeper (a product's metadata) is never taken for
 * the object's own; the others (the application's own objects) stay null.
 */
export async function backfillEventEnvironments(db: QueryExecutorProvider): Promise<void> {
  let after = ''
  for (;;) {
    const { rows } = await sql<{ id: string; payload: string }>`select id, payload from events where id > ${after} order by id limit 1000`.execute(db)
    const last = rows.at(-1)
    if (last === undefined) return
    after = last.id
    for (const environment of ['sandbox', 'live'] as const) {
      const ids = rows.filter((row) => eventEnvironmentOf((JSON.parse(row.payload) as { data?: unknown }).data) === environment).map((row) => row.id)
      for (const part of chunks(ids)) await sql`update events set environment = ${environment} where id in (${sql.join(part)})`.execute(db)
    }
  }
}

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const eventsMigrations: Readonly<Record<string, MigrationStep>> = {
  '0002_webhook_deliveries': async (db) => {
    await db.schema
      .createTable('events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('events_app_id_created_at').on('events').columns(['app_id', 'created_at']).execute()

    await db.schema
      .createTable('deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
      .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id'))
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('claim_token', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // The dispatcher's queue: only pending rows, in due order (partial indexes: SQLite and PostgreSQL).
    await db.schema
      .createIndex('deliveries_due')
      .on('deliveries')
      .columns(['next_attempt_at', 'webhook_id'])
      .where(sql.ref('status'), '=', 'pending')
      .execute()
    await db.schema.createIndex('deliveries_webhook_id').on('deliveries').columns(['webhook_id', 'status']).execute()

    await db.schema
      .createTable('delivery_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id'))
      .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id'))
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('error', 'text')
      .addColumn('response_body', 'text')
      .execute()
    await db.schema.createIndex('delivery_attempts_delivery_id').on('delivery_attempts').column('delivery_id').execute()
  },
  '0003_owner_tools': async (db) => {
    // 1 when the owner asked for one more attempt (POST .../retry): that attempt is the last.
    await db.schema
      .alterTable('deliveries')
      .addColumn('resend', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    // The owner's delivery log, newest first.
    await db.schema.createIndex('deliveries_webhook_id_created_at').on('deliveries').columns(['webhook_id', 'created_at']).execute()
  },
  '0004_fair_delivery': async (db) => {
    // The dispatcher's queues, one per webhook: each webhook's pending deliveries in due order. The
    // claim walks the distinct webhooks of this index (a skip scan) and takes a fair share of each,
    // so one webhook's backlog is never in front of another's due delivery.
    await db.schema.dropIndex('deliveries_due').execute()
    await db.schema
      .createIndex('deliveries_queue')
      .on('deliveries')
      .columns(['webhook_id', 'next_attempt_at'])
      .where(sql.ref('status'), '=', 'pending')
      .execute()
  },
  '0005_deferred_fanout': async (db) => {
    // An application with many webhooks has its events' deliveries written by a dispatcher, not by
    // the write that made the event: 1 until then. The partial index holds only those events, so
    // finding them (per application, oldest first) costs nothing while there are none.
    await db.schema
      .alterTable('events')
      .addColumn('fanout_pending', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema
      .createIndex('events_fanout_pending')
      .on('events')
      .columns(['app_id', 'created_at', 'id'])
      .where(sql.ref('fanout_pending'), '=', 1)
      .execute()
  },
  '0007_claim_without_statistics': async (db) => {
    // A claim takes a webhook's earliest due deliveries from deliveries_queue, stopping at its
    // share. With (webhook_id, status) beside it, PostgreSQL without statistics (a table never
    // analyzed: autovacuum off, or not yet run) planned the claim on that index, reading and
    // sorting the webhook's whole pending backlog at every claim: a 20,000-delivery backlog on
    // 100 webhooks drained at 63 deliveries/s, and at 828/s once the index was gone (bench/drain.ts).
    // The status-filtered log keeps an index of its own, of ended deliveries only, in its order,
    // so it no longer sorts every delivery of that status; its pending rows are in deliveries_queue.
    await db.schema.dropIndex('deliveries_webhook_id').execute()
    await db.schema
      .createIndex('deliveries_webhook_ended')
      .on('deliveries')
      .columns(['webhook_id', 'status', 'created_at', 'id'])
      .where(sql.ref('status'), '<>', 'pending')
      .execute()
  },
  '0025_event_environment': async (db) => {
    await db.schema.alterTable('events').addColumn('environment', 'text').execute()
    await backfillEventEnvironments(db)
  },
}
