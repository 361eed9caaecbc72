import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely'

// Migrations live in code (not files on disk) so the built package and the tests run the same list.
// Only portable DDL: text, integer, double precision; no SQLite-only or PostgreSQL-only syntax.
const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('apps')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute()

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
        .addColumn('client_key', 'text', (c) => c.notNull().unique())
        .addColumn('secret_digest', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('rate_limit_per_hour', 'integer')
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('deactivated_at', 'text')
        .execute()
      await db.schema.createIndex('api_keys_app_id').on('api_keys').column('app_id').execute()

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

      await db.schema
        .createTable('customers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
        .addColumn('first_name', 'text', (c) => c.notNull())
        .addColumn('last_name', 'text', (c) => c.notNull())
        .addColumn('phone_number', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('email_key', 'text')
        .addColumn('customer_type', 'text')
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute()
      // NULL emails are distinct in both SQLite and PostgreSQL, so customers without email never collide.
      await db.schema.createIndex('customers_app_id_email_key').on('customers').columns(['app_id', 'email_key']).unique().execute()
      await db.schema.createIndex('customers_app_id_created_at').on('customers').columns(['app_id', 'created_at']).execute()

      await db.schema
        .createTable('liquidation_addresses')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
        .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id'))
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('chain', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('address_key', 'text', (c) => c.notNull())
        .addColumn('external_account_id', 'text')
        .addColumn('prefunded_account_id', 'text')
        .addColumn('bridge_wallet_id', 'text')
        .addColumn('destination_payment_rail', 'text', (c) => c.notNull())
        .addColumn('destination_currency', 'text', (c) => c.notNull())
        .addColumn('destination_wire_message', 'text')
        .addColumn('destination_sepa_reference', 'text')
        .addColumn('destination_ach_reference', 'text')
        .addColumn('destination_address', 'text')
        .addColumn('destination_blockchain_memo', 'text')
        .addColumn('return_address', 'text')
        .addColumn('custom_developer_fee_percent', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('liquidation_addresses_chain_address').on('liquidation_addresses').columns(['chain', 'address_key']).unique().execute()
      await db.schema.createIndex('liquidation_addresses_customer').on('liquidation_addresses').columns(['app_id', 'customer_id', 'created_at']).execute()

      await db.schema
        .createTable('taxes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('percentage', 'double precision', (c) => c.notNull())
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('app_ids', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('taxes_app_id_created_at').on('taxes').columns(['app_id', 'created_at']).execute()
    },
  },
}

migrations['0002_webhook_deliveries'] = {
  async up(db: Kysely<unknown>) {
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
}

migrations['0003_owner_tools'] = {
  async up(db: Kysely<unknown>) {
    // Secret rotation: the secret replaced last keeps signing beside the new one until it expires.
    await db.schema.alterTable('webhooks').addColumn('previous_signing_secret', 'text').execute()
    await db.schema.alterTable('webhooks').addColumn('previous_secret_expires_at', 'text').execute()
    // 1 when the owner asked for one more attempt (POST .../retry): that attempt is the last.
    await db.schema
      .alterTable('deliveries')
      .addColumn('resend', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    // The owner's delivery log, newest first.
    await db.schema.createIndex('deliveries_webhook_id_created_at').on('deliveries').columns(['webhook_id', 'created_at']).execute()

    // Idempotency-Key: one row per (application, key); status_code is null while the first request runs.
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('content_type', 'text')
      .addColumn('body', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'text', (c) => c.notNull())
      // set inside the first request's own transaction: once its change committed, the key never runs again
      .addColumn('committed_at', 'text')
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['app_id', 'key'])
      .execute()
    await db.schema.createIndex('idempotency_keys_created_at').on('idempotency_keys').column('created_at').execute()
  },
}

migrations['0004_fair_delivery'] = {
  async up(db: Kysely<unknown>) {
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
    // The circuit breaker: a webhook that keeps failing gets one attempt at a time, spaced out.
    await db.schema
      .alterTable('webhooks')
      .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
      .execute()
    await db.schema.alterTable('webhooks').addColumn('circuit_retry_at', 'text').execute()
  },
}

migrations['0005_deferred_fanout'] = {
  async up(db: Kysely<unknown>) {
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
}

migrations['0006_webhook_event_counts'] = {
  async up(db: Kysely<unknown>) {
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
}

migrations['0007_claim_without_statistics'] = {
  async up(db: Kysely<unknown>) {
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
}

migrations['0008_webhook_event_types'] = {
  async up(db: Kysely<unknown>) {
    // Event-type filters: the JSON array of the event types a webhook receives; null receives all
    // (every webhook before this). Read with the webhook by the outbox's existing statements.
    await db.schema.alterTable('webhooks').addColumn('event_types', 'text').execute()
  },
}

migrations['0009_ledger'] = {
  async up(db: Kysely<unknown>) {
    // The double-entry ledger (src/ledger/ledger.ts). Amounts are decimal text of integers of the
    // currency's smallest unit on both backends: DAI's 18 decimals pass what a 64-bit integer holds.
    await db.schema
      .createTable('ledger_accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('reference', 'text', (c) => c.notNull())
      .addColumn('may_go_negative', 'integer', (c) => c.notNull())
      .addColumn('debits_posted', 'text', (c) => c.notNull())
      .addColumn('credits_posted', 'text', (c) => c.notNull())
      .addColumn('debits_pending', 'text', (c) => c.notNull())
      .addColumn('credits_pending', 'text', (c) => c.notNull())
      .addColumn('available', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('ledger_accounts_key', ['environment', 'app_id', 'kind', 'currency', 'reference'])
      // The database refuses, whatever the code does, an account that may not go negative below zero.
      .addCheckConstraint('ledger_accounts_not_negative', sql`may_go_negative = 1 or available not like '-%'`)
      .execute()
    await db.schema
      .createTable('ledger_entries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('reason_type', 'text', (c) => c.notNull())
      .addColumn('reason_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('ledger_entries_reason').on('ledger_entries').columns(['reason_type', 'reason_id']).execute()
    await db.schema
      .createTable('ledger_postings')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('entry_id', 'text', (c) => c.notNull().references('ledger_entries.id'))
      .addColumn('account_id', 'text', (c) => c.notNull().references('ledger_accounts.id'))
      .addColumn('direction', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('ledger_postings_entry').on('ledger_postings').columns(['entry_id']).execute()
    await db.schema.createIndex('ledger_postings_account').on('ledger_postings').columns(['account_id']).execute()
  },
}

migrations['0010_money'] = {
  async up(db: Kysely<unknown>) {
    // An application's wallets, one per environment and chain, each holding several currencies
    // (a ledger account per currency, its reference the wallet's id).
    await db.schema
      .createTable('wallets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('chain', 'text', (c) => c.notNull())
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('wallets_app_chain', ['environment', 'app_id', 'chain'])
      .execute()
    // Exchange rates an operator loads, each with the time it was true; the newest one counts.
    await db.schema
      .createTable('exchange_rates')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('from_currency', 'text', (c) => c.notNull())
      .addColumn('to_currency', 'text', (c) => c.notNull())
      .addColumn('midmarket_rate', 'text', (c) => c.notNull())
      .addColumn('buy_rate', 'text', (c) => c.notNull())
      .addColumn('sell_rate', 'text', (c) => c.notNull())
      .addColumn('as_of', 'text', (c) => c.notNull())
      .addColumn('loaded_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('exchange_rates_pair').on('exchange_rates').columns(['environment', 'from_currency', 'to_currency', 'as_of']).execute()
    // A deposit to a liquidation address and its forwarding; amounts are integer text of the
    // currency's smallest unit. next_step_at is when the scheduler advances it (null once it ended).
    await db.schema
      .createTable('drains')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('liquidation_address_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('deposit_tx_hash', 'text', (c) => c.notNull())
      .addColumn('from_address', 'text')
      .addColumn('source_payment_rail', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('developer_fee', 'text')
      .addColumn('subtotal_amount', 'text')
      .addColumn('exchange_rate', 'text')
      .addColumn('converted_amount', 'text')
      .addColumn('outgoing_amount', 'text')
      .addColumn('destination_tx_hash', 'text')
      .addColumn('refund_tx_hash', 'text')
      .addColumn('return_reason', 'text')
      .addColumn('pending_entry_id', 'text')
      .addColumn('next_step_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('drains_deposit', ['liquidation_address_id', 'deposit_tx_hash'])
      .execute()
    await db.schema.createIndex('drains_address').on('drains').columns(['app_id', 'liquidation_address_id', 'created_at', 'id']).execute()
    await db.schema
      .createIndex('drains_due')
      .on('drains')
      .column('next_step_at')
      .where(sql.ref('next_step_at'), 'is not', null)
      .execute()
  },
}

migrations['0011_products'] = {
  async up(db: Kysely<unknown>) {
    // An application's products (src/resources/products/). The price is decimal text of an
    // integer of the currency's minor unit; images is JSON (the image bytes are in the ImageStore).
    await db.schema
      .createTable('products')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('price', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('type', 'text')
      .addColumn('product_type', 'text')
      .addColumn('weight', 'double precision')
      .addColumn('unit', 'text')
      .addColumn('quantity', 'integer')
      .addColumn('stock_count', 'integer')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('images', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // The list: an application's products newest first, a page at a time.
    await db.schema.createIndex('products_app_created').on('products').columns(['app_id', 'created_at', 'id']).execute()
  },
}

migrations['0012_key_management'] = {
  async up(db: Kysely<unknown>) {
    // A rotated key's replaced secret keeps working until previous_secret_expires_at (docs/cli.md);
    // a key with expires_at is refused from then on, checked on every request.
    await db.schema.alterTable('api_keys').addColumn('previous_secret_digest', 'text').execute()
    await db.schema.alterTable('api_keys').addColumn('previous_secret_expires_at', 'text').execute()
    await db.schema.alterTable('api_keys').addColumn('expires_at', 'text').execute()
    // A deleted application's row stays, so the records kept for audit still name their owner.
    await db.schema.alterTable('apps').addColumn('deleted_at', 'text').execute()
  },
}

migrations['0013_transfers'] = {
  async up(db: Kysely<unknown>) {
    // Transfers and payment intents (src/resources/transfers/), advanced by the money scheduler
    // as drains are: next_step_at is when it next moves on (null while awaiting funds or ended).
    await db.schema
      .createTable('transfers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('wallet_id', 'text')
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount', 'text')
      .addColumn('developer_fee', 'text', (c) => c.notNull())
      .addColumn('destination_currency', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('deposit_instructions', 'text')
      .addColumn('customer', 'text')
      .addColumn('exchange_rate', 'text')
      .addColumn('converted_amount', 'text')
      .addColumn('destination_tx_hash', 'text')
      .addColumn('refund_tx_hash', 'text')
      .addColumn('return_reason', 'text')
      .addColumn('pending_entry_id', 'text')
      .addColumn('next_step_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // The lists: an application's transfers (or payment intents) newest first, a page at a time.
    await db.schema.createIndex('transfers_app_created').on('transfers').columns(['app_id', 'environment', 'created_at', 'id']).execute()
    await db.schema.createIndex('transfers_wallet').on('transfers').columns(['app_id', 'wallet_id', 'created_at', 'id']).execute()
    await db.schema
      .createIndex('transfers_due')
      .on('transfers')
      .column('next_step_at')
      .where(sql.ref('next_step_at'), 'is not', null)
      .execute()
  },
}

migrations['0014_test_payments'] = {
  async up(db: Kysely<unknown>) {
    // Sandbox card payments (src/resources/test-payments/): amount is integer text of the fiat
    // currency's minor unit; the refund columns are set once, by the one refund a payment may have.
    await db.schema
      .createTable('test_payments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text')
      .addColumn('wallet_id', 'text', (c) => c.notNull())
      .addColumn('entry_id', 'text', (c) => c.notNull())
      .addColumn('refund_id', 'text', (c) => c.unique())
      .addColumn('refund_entry_id', 'text')
      .addColumn('refunded_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    await db.schema.createIndex('test_payments_app_created').on('test_payments').columns(['app_id', 'created_at', 'id']).execute()
  },
}

migrations['0016_payment_links'] = {
  async up(db: Kysely<unknown>) {
    // An application's payment links (src/resources/payment-links/): amount is integer text of the
    // currency's smallest unit; products and custom_fields are JSON. payments_count is raised by
    // the paying half with a conditional update (never past max_payments).
    await db.schema
      .createTable('payment_links')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('cover_image', 'text')
      .addColumn('link_type', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount', 'text')
      .addColumn('payment_for_id', 'text')
      .addColumn('customer_id', 'text')
      .addColumn('products', 'text', (c) => c.notNull())
      .addColumn('is_for_all_products', 'integer', (c) => c.notNull())
      .addColumn('allow_quantity_adjustment', 'integer', (c) => c.notNull())
      .addColumn('collect_tax', 'integer', (c) => c.notNull())
      .addColumn('tax_id', 'text')
      .addColumn('collect_address', 'integer', (c) => c.notNull())
      .addColumn('allow_mobile_payment', 'integer', (c) => c.notNull())
      .addColumn('limit_payments', 'integer', (c) => c.notNull())
      .addColumn('max_payments', 'integer')
      .addColumn('payments_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('custom_fields', 'text')
      .addColumn('expires_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // A slug names one link of an application (the hosted page's address); another application may use it too.
    await db.schema.createIndex('payment_links_app_slug').on('payment_links').columns(['app_id', 'slug']).unique().execute()
    // The list: an application's links newest first, a page at a time.
    await db.schema.createIndex('payment_links_app_created').on('payment_links').columns(['app_id', 'created_at', 'id']).execute()
  },
}

migrations['0015_invoices'] = {
  async up(db: Kysely<unknown>) {
    // An application's invoices (src/resources/invoices/). Amounts are integer text of cents of
    // the invoice's currency; lines is JSON with each line's price frozen when it was set.
    await db.schema
      .createTable('invoices')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('lines', 'text', (c) => c.notNull())
      .addColumn('subtotal', 'text', (c) => c.notNull())
      .addColumn('tax_id', 'text')
      .addColumn('tax_name', 'text')
      .addColumn('tax_percentage', 'text')
      .addColumn('tax_amount', 'text', (c) => c.notNull())
      .addColumn('total', 'text', (c) => c.notNull())
      .addColumn('amount_paid', 'text', (c) => c.notNull())
      .addColumn('due_date', 'text', (c) => c.notNull())
      .addColumn('send_date', 'text')
      .addColumn('delivery', 'text', (c) => c.notNull())
      .addColumn('payment_methods', 'text', (c) => c.notNull())
      .addColumn('payment_link', 'integer', (c) => c.notNull())
      .addColumn('payment_link_id', 'text')
      .addColumn('partial_payment', 'integer', (c) => c.notNull())
      .addColumn('address', 'text')
      .addColumn('phone_number', 'text')
      .addColumn('logo', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute()
    // The list: an application's invoices newest first, a page at a time; and those of one customer.
    await db.schema.createIndex('invoices_app_created').on('invoices').columns(['app_id', 'created_at', 'id']).execute()
    await db.schema.createIndex('invoices_app_customer').on('invoices').columns(['app_id', 'customer_id', 'created_at', 'id']).execute()
  },
}

migrations['0017_checkout'] = {
  async up(db: Kysely<unknown>) {
    // What a hosted checkout's payment intent pays (src/resources/checkout/): one row per intent,
    // naming the invoice or the payment link; settled in the transaction its funds arrive in.
    await db.schema
      .createTable('checkout_payments')
      .addColumn('transfer_id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('invoice_id', 'text')
      .addColumn('payment_link_id', 'text')
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('address', 'text')
      .addColumn('items', 'text')
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('paid_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute()
  },
}

migrations['0018_idempotency_per_environment'] = {
  async up(db: Kysely<unknown>) {
    // Idempotency-Keys belong to (application, environment): a development key and a production
    // key of one application never share a stored answer or a claim. The primary key changes, so
    // the table is rebuilt (SQLite cannot alter a primary key). Which environment wrote an earlier
    // row is not recorded: it is kept for both, so the request that wrote it is never run a
    // second time when retried; it goes with the purge, within 24 hours.
    await db.schema
      .createTable('idempotency_keys_by_environment')
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('status_code', 'integer')
      .addColumn('content_type', 'text')
      .addColumn('body', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'text', (c) => c.notNull())
      .addColumn('committed_at', 'text')
      .addPrimaryKeyConstraint('idempotency_keys_environment_pk', ['app_id', 'environment', 'key'])
      .execute()
    for (const environment of ['development', 'production']) {
      await sql`insert into idempotency_keys_by_environment (app_id, environment, key, fingerprint, status_code, content_type, body, created_at, lease_until, committed_at)
                select app_id, ${environment}, key, fingerprint, status_code, content_type, body, created_at, lease_until, committed_at from idempotency_keys`.execute(db)
    }
    await db.schema.dropTable('idempotency_keys').execute()
    await db.schema.alterTable('idempotency_keys_by_environment').renameTo('idempotency_keys').execute()
    await db.schema.createIndex('idempotency_keys_created_at').on('idempotency_keys').column('created_at').execute()
  },
}

migrations['0019_hosted_payment_environment'] = {
  async up(db: Kysely<unknown>) {
    // The money an invoice's or payment link's hosted page takes: the environment of the key that
    // created it (live for a production key, sandbox for a development key), fixed for its life.
    // Which key made an earlier row was not recorded. An application that never had a production
    // key can only have made its rows with development keys: sandbox. Any other (a production key
    // exists, or the application was deleted and its keys with it) gets the conservative live, so
    // no sandbox completion can pay an invoice or link that may be live; its pages then wait for
    // live funds.
    for (const table of ['invoices', 'payment_links'] as const) {
      await db.schema.alterTable(table).addColumn('environment', 'text', (c) => c.notNull().defaultTo('live')).execute()
      await sql`update ${sql.table(table)} set environment = 'sandbox'
                where exists (select 1 from apps where apps.id = ${sql.ref(`${table}.app_id`)} and apps.deleted_at is null)
                  and not exists (select 1 from api_keys where api_keys.app_id = ${sql.ref(`${table}.app_id`)} and api_keys.environment = 'production')`.execute(db)
    }
  },
}

const provider: MigrationProvider = { getMigrations: async () => migrations }

/** Thrown when the database holds migrations this version does not know: a newer version wrote it. */
export class NewerSchemaError extends Error {}

/** Names of the migrations already applied (none on a new database). */
async function appliedMigrations<DB>(db: Kysely<DB>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (!tables.some((table) => table.name === 'kysely_migration')) return []
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db)
  return rows.map((row) => row.name)
}

/** The newest schema version this build knows. */
export const LATEST_MIGRATION = Object.keys(migrations).sort().at(-1) ?? ''

/** Brings a new database's schema to the named version and no further: tests of an upgrade start there. */
export async function migrateTo<DB>(db: Kysely<DB>, name: string): Promise<void> {
  const { error } = await new Migrator({ db, provider }).migrateTo(name)
  if (error !== undefined) throw error
}

/**
 * Brings the schema to the newest version; throws with the failing migration's error. A schema
 * that a newer version of devplatform wrote is refused before anything changes: running old code
 * on it could corrupt what the new code relies on.
 */
export async function migrateToLatest<DB>(db: Kysely<DB>): Promise<void> {
  const unknown = (await appliedMigrations(db)).filter((name) => !(name in migrations)).sort()
  if (unknown.length > 0) {
    throw new NewerSchemaError(
      `the database schema was written by a newer devplatform (migration ${unknown.join(', ')} is unknown to this version, which knows up to ${LATEST_MIGRATION}); upgrade devplatform`,
    )
  }
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest()
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName
    const reason = error instanceof Error ? error.message : String(error)
    // No migration named: it failed before any ran (e.g. the database stayed locked).
    throw new Error(failed === undefined ? `database migration could not start: ${reason}` : `database migration ${failed} failed: ${reason}`)
  }
}
