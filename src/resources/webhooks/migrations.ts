import { sql } from 'kysely'
import type { MigrationStep } from '../../modules/module.js'

/** Its part of each migration that changes its tables, by the migration's name (see Module.migrations). */
export const webhooksMigrations: Readonly<Record<string, MigrationStep>> = {
  '0001_initial': async (db) => {
    await db.schema
      .createTable('webhooks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('is_active', 'integer', (c) => c.notNull())
      .addColumn('encrypted', 'integer', (c) => c.notNull())
      .addColumn('signing_secret', 'text', (c) => c.notNull())
      .addColumn('total_events', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('successful_deliveries', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('failed_deliveries', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_delivery', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('deleted_at', 'text')
      .execute()
    await db.schema.createIndex('webhooks_app_id_created_at').on('webhooks').columns(['app_id', 'created_at']).execute()
  },
  '0003_owner_tools': async (db) => {
    // Secret rotation: the secret replaced last keeps signing beside the new one until it expires.
    await db.schema.alterTable('webhooks').addColumn('previous_signing_secret', 'text').execute()
    await db.schema.alterTable('webhooks').addColumn('previous_secret_expires_at', 'text').execute()
  },
  '0004_fair_delivery': async (db) => {
    // The circuit breaker: a webhook that keeps failing gets one attempt at a time, spaced out.
    await db.schema
      .alterTable('webhooks')
      .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema.alterTable('webhooks').addColumn('circuit_retry_at', 'text').execute()
  },
  '0005_deferred_fanout': async (db) => {
    // The outbox reads an application's active webhooks on every write: through this index it
    // reads only those, not every webhook the application ever deactivated or deleted (with
    // 150,000 of them the read took 42 ms on the event loop).
    await db.schema
      .createIndex('webhooks_active')
      .on('webhooks')
      .columns(['app_id', 'id'])
      .where(sql<boolean>`is_active = 1 and deleted_at is null`)
      .execute()
  },
  '0006_webhook_event_counts': async (db) => {
    // Every write that emitted an event added to its webhooks' total_events, so on PostgreSQL all of
    // an application's writes took turns on its webhook rows (sampled: 7 to 9 of 10 connections
    // waiting for that row lock). The counts move to rows of their own, several per webhook.
    await db.schema
      .createTable('webhook_event_counts')
      .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id'))
      .addColumn('slot', 'integer', (c) => c.notNull())
      .addColumn('events', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('webhook_event_counts_pk', ['webhook_id', 'slot'])
      .execute()
    await sql`insert into webhook_event_counts (webhook_id, slot, events) select id, 0, total_events from webhooks where total_events > 0`.execute(db)
    await db.schema.alterTable('webhooks').dropColumn('total_events').execute()
  },
  '0008_webhook_event_types': async (db) => {
    // Event-type filters: the JSON array of the event types a webhook receives; null receives all
    // (every webhook before this). Read with the webhook by the outbox's existing statements.
    await db.schema.alterTable('webhooks').addColumn('event_types', 'text').execute()
  },
}
