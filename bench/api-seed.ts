/**
 * bench:api's bulk data: rows written straight into the tables of src/db/migrations.ts, as fast as
 * each engine allows (one INSERT … SELECT over a number series per table: a recursive CTE on
 * SQLite, generate_series on PostgreSQL), then ANALYZE (PostgreSQL: VACUUM ANALYZE) and a
 * checkpoint, so the planner and the storage see the data as a long-lived database would.
 *
 * Seeded ids are UUID-shaped and tell where they come from: `0000000T-000G-4000-8000-<i, 12 hex>`,
 * T the table (TABLE), G the group (GROUP), i the row's number. They can't collide with the
 * server's own ids (UUIDv7, which start with the time). Timestamps are ISO 8601 strings, one
 * second apart from 2024-01-01, so every seeded row is older than what the run writes.
 */
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import type { DatabaseLocation } from '../src/config.js'
import { backendOf, type Backend, type Db } from '../src/db/database.js'
import type { Database } from '../src/db/schema.js'

/**
 * Where to run the bulk statements: on PostgreSQL a connection of its own, without the server
 * pool's 8 s query and statement timeouts (POSTGRES_TIMEOUTS), which a million-row INSERT
 * exceeds; on SQLite `db` itself. Open it on a migrated database.
 */
export function bulkConnection(location: DatabaseLocation, db: Db): { db: Db; close(): Promise<void> } {
  if (location.kind === 'sqlite') return { db, close: async () => undefined }
  const bulk = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: location.url, max: 1 }) }) })
  return { db: bulk, close: () => bulk.destroy() }
}

const TABLE = { apps: 1, customers: 2, liquidationAddresses: 3, webhooks: 4, events: 5, deliveries: 6 } as const
const GROUP = { others: 0, own: 1, pool: 2, due: 3, pending: 4 } as const
type Table = keyof typeof TABLE
type Group = keyof typeof GROUP

/** The id of seeded row `i` of `table` in `group` (the same as `Sql.id` writes). */
export function seededId(table: Table, group: Group, i: number): string {
  return `0000000${TABLE[table]}-000${GROUP[group]}-4000-8000-${i.toString(16).padStart(12, '0')}`
}

/** 2024-01-01T00:00:00Z, the first seeded timestamp */
const BASE_EPOCH_S = 1_704_067_200

/** SQL text for one backend: the few expressions that differ between SQLite and PostgreSQL. */
class Sql {
  constructor(readonly backend: Backend) {}

  /** `expr` (a non-negative integer) in lower-case hex, zero-padded to `width` digits */
  hex(expr: string, width: number): string {
    return this.backend === 'sqlite' ? `printf('%0${width}x', ${expr})` : `lpad(to_hex(${expr}), ${width}, '0')`
  }

  id(table: Table, group: Group, expr: string): string {
    return `'0000000${TABLE[table]}-000${GROUP[group]}-4000-8000-' || ${this.hex(expr, 12)}`
  }

  /** ISO 8601 with milliseconds, `expr` seconds after 2024-01-01 */
  ts(expr: string): string {
    return this.backend === 'sqlite'
      ? `strftime('%Y-%m-%dT%H:%M:%fZ', ${BASE_EPOCH_S} + (${expr}), 'unixepoch')`
      : `to_char(timestamp '2024-01-01 00:00:00' + (${expr}) * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
  }

  /** One statement inserting `count` rows: `columns` from `exprs`, in which `i` runs from 0 to count - 1. */
  insert(table: string, row: Record<string, string>, count: number): string {
    const columns = Object.keys(row).join(', ')
    const exprs = Object.values(row).join(', ')
    return this.backend === 'sqlite'
      ? `with recursive s(i) as (select 0 union all select i + 1 from s where i < ${count - 1}) insert into ${table} (${columns}) select ${exprs} from s`
      : `insert into ${table} (${columns}) select ${exprs} from generate_series(0, ${count - 1}) as s(i)`
  }
}

/** A quoted SQL string literal. */
function text(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

/** Called after each statement of `seedRows` with what it wrote and how long it took. */
export type SeedProgress = (step: string, ms: number) => void

async function run(db: Db, statement: string, count: number, progress?: { report: SeedProgress; step: string }): Promise<void> {
  if (count === 0) return
  const started = performance.now()
  await sql.raw(statement).execute(db)
  progress?.report(progress.step, performance.now() - started)
}

function webhookRow(q: Sql, group: Group, appId: string, signingSecret: string, extra: Record<string, string>): Record<string, string> {
  return {
    id: q.id('webhooks', group, 'i'),
    app_id: appId,
    name: `'hook ' || i`,
    url: `'https://hooks.example.com/' || i`,
    is_active: '0',
    encrypted: '0',
    signing_secret: text(signingSecret),
    created_at: q.ts('i'),
    updated_at: q.ts('i'),
    ...extra,
  }
}

/** `count` inactive webhooks of `appId` (the DELETE scenarios' pool): their ids are `poolWebhookId(0 … count - 1)`. */
export async function seedWebhookPool(db: Db, appId: string, count: number, signingSecret: string): Promise<void> {
  const q = new Sql(backendOf(db))
  await run(db, q.insert('webhooks', webhookRow(q, 'pool', text(appId), signingSecret, { url: text('http://127.0.0.1:9/pool') }), count), count)
}

export function poolWebhookId(i: number): string {
  return seededId('webhooks', 'pool', i)
}

export interface SeedPlan {
  /** rows in each of customers, liquidation addresses, webhooks and deliveries */
  rows: number
  /** the benchmarked application's own customers, liquidation addresses and (ended) deliveries */
  own: number
  /** the benchmarked application, and its one active webhook (already created) */
  appId: string
  webhookId: string
  /** the application whose inactive webhooks the DELETE scenario deletes, and how many */
  poolAppId: string
  pool: number
  signingSecret: string
}

/** Other applications' webhooks with a pending, not yet due, retry: the same in every size (see api.ts). */
export const PENDING_WEBHOOKS = 100
export const PENDING_DELIVERIES = 1_000
/** Due deliveries for the claim: 10 webhooks (the benchmarked one and 9 of other applications), 10 each. */
export const DUE_WEBHOOKS = 10
export const DUE_PER_WEBHOOK = 10
/** The benchmarked application's webhooks besides its active one (inactive and deleted). */
export const OWN_EXTRA_WEBHOOKS = 10

/** The customer the POST scenarios add addresses to: the benchmarked application's first own customer. */
export const OWN_CUSTOMER_ID = seededId('customers', 'own', 0)

/** Every other application's row count per 1,000 rows: one application per 1,000 customers. */
export function otherAppsFor(rows: number): number {
  return Math.max(1, Math.ceil(rows / 1000))
}

/**
 * Seeds `plan.rows` rows into each of customers, liquidation addresses, webhooks and deliveries:
 *
 * - customers, liquidation addresses: `own` of the benchmarked application (customers "Own i
 *   Customer i", addresses spread over them), the rest of other applications (one per 1,000 rows);
 * - webhooks: the benchmarked one (already there), OWN_EXTRA_WEBHOOKS more of its application
 *   (inactive, half of them deleted), the DELETE pool, the rest of other applications (active,
 *   except every tenth from the 200th on; every 50th from the 200th on deleted);
 * - deliveries: `own` ended ones of the benchmarked webhook, PENDING_DELIVERIES retries due in a
 *   day on PENDING_WEBHOOKS other webhooks, DUE_WEBHOOKS × DUE_PER_WEBHOOK due now (the claim's),
 *   the rest ended (98 % succeeded, 1 % failed, 1 % canceled), ten to an event.
 *
 * Events (deliveries reference them): one per own delivery, one per ten others'.
 */
export async function seedRows(db: Db, plan: SeedPlan, report: SeedProgress = () => undefined): Promise<void> {
  const q = new Sql(backendOf(db))
  const { rows, own, pool } = plan
  const apps = otherAppsFor(rows)
  const app = text(plan.appId)
  const otherApp = (expr: string) => q.id('apps', 'others', `(${expr}) % ${apps}`)
  const otherCustomers = rows - own
  const otherWebhooks = rows - 1 - OWN_EXTRA_WEBHOOKS - pool
  const due = DUE_WEBHOOKS * DUE_PER_WEBHOOK
  const otherDeliveries = rows - own - PENDING_DELIVERIES - due
  const otherEvents = Math.ceil(otherDeliveries / 10)
  if (otherCustomers < 1 || otherWebhooks < 200 || otherDeliveries < 10) {
    throw new Error(`${rows} rows are too few for ${own} own rows and a DELETE pool of ${pool}`)
  }
  const now = Date.now()
  const dueAt = new Date(now - 60_000).toISOString()
  const retryAt = new Date(now + 24 * 3600_000).toISOString()

  const step = (name: string, count: number) => ({ report, step: `${count.toLocaleString('en-US')} ${name}` })
  await run(db, q.insert('apps', { id: q.id('apps', 'others', 'i'), name: `'other ' || i`, created_at: q.ts('i') }, apps), apps, step('other applications', apps))

  const customer = (group: Group, appId: string, first: string, last: string, email: string) => ({
    id: q.id('customers', group, 'i'),
    app_id: appId,
    first_name: first,
    last_name: last,
    phone_number: `'555' || i`,
    email,
    email_key: email,
    status: `'ACTIVE'`,
    created_at: q.ts('i'),
    updated_at: q.ts('i'),
  })
  await run(db, q.insert('customers', customer('own', app, `'Own' || i`, `'Customer' || i`, `'own' || i || '@example.com'`), own), own, step('own customers', own))
  await run(db, q.insert('customers', customer('others', otherApp('i'), `'First' || i`, `'Last' || i`, `'c' || i || '@example.com'`), otherCustomers), otherCustomers, step("others' customers", otherCustomers))

  const address = (group: Group, appId: string, customerId: string, prefix: string) => ({
    id: q.id('liquidationAddresses', group, 'i'),
    app_id: appId,
    customer_id: customerId,
    state: `'active'`,
    chain: `'ethereum'`,
    currency: `'usdc'`,
    address: `'0x${prefix}' || ${q.hex('i', 39)}`,
    address_key: `'0x${prefix}' || ${q.hex('i', 39)}`,
    external_account_id: `'ext_1'`,
    destination_payment_rail: `'ach'`,
    destination_currency: `'usd'`,
    created_at: q.ts('i'),
    updated_at: q.ts('i'),
  })
  await run(db, q.insert('liquidation_addresses', address('own', app, q.id('customers', 'own', `i % ${own}`), 'd'), own), own, step('own liquidation addresses', own))
  await run(
    db,
    q.insert('liquidation_addresses', address('others', otherApp(`i % ${otherCustomers}`), q.id('customers', 'others', `i % ${otherCustomers}`), 'e'), otherCustomers),
    otherCustomers,
    step("others' liquidation addresses", otherCustomers),
  )

  await run(db, q.insert('webhooks', webhookRow(q, 'own', app, plan.signingSecret, { deleted_at: `case when i % 2 = 0 then ${q.ts('i')} else null end` }), OWN_EXTRA_WEBHOOKS), OWN_EXTRA_WEBHOOKS, step('own webhooks', OWN_EXTRA_WEBHOOKS))
  const poolStarted = performance.now()
  await seedWebhookPool(db, plan.poolAppId, pool, plan.signingSecret)
  report(`${pool.toLocaleString('en-US')} DELETE pool webhooks`, performance.now() - poolStarted)
  await run(
    db,
    q.insert(
      'webhooks',
      webhookRow(q, 'others', otherApp('i'), plan.signingSecret, {
        is_active: 'case when i >= 200 and i % 10 = 0 then 0 else 1 end',
        deleted_at: `case when i >= 200 and i % 50 = 0 then ${q.ts('i')} else null end`,
      }),
      otherWebhooks,
    ),
    otherWebhooks,
    step("others' webhooks", otherWebhooks),
  )
  // Each webhook has taken events, as a long-lived database's have: one count row each, so reading
  // a webhook's total_events searches a table as big as the webhooks'.
  const countsStarted = performance.now()
  await sql`insert into webhook_event_counts (webhook_id, slot, events) select id, 0, 1 from webhooks where id not in (select webhook_id from webhook_event_counts)`.execute(db)
  report('webhook event counts', performance.now() - countsStarted)

  const event = (group: Group, appId: string) => ({
    id: q.id('events', group, 'i'),
    app_id: appId,
    type: `'liquidation_address.created'`,
    payload: `'{"id":"' || ${q.id('events', group, 'i')} || '","type":"liquidation_address.created","created_at":"' || ${q.ts('i')} || '","data":{"state":"active","chain":"ethereum","currency":"usdc"}}'`,
    created_at: q.ts('i'),
  })
  await run(db, q.insert('events', event('own', app), own), own, step('own events', own))
  await run(db, q.insert('events', event('others', otherApp('i')), otherEvents), otherEvents, step("others' events", otherEvents))

  const delivery = (group: Group, fields: Record<string, string>) => ({
    id: q.id('deliveries', group, 'i'),
    attempts: '1',
    next_attempt_at: q.ts('i'),
    created_at: q.ts('i'),
    updated_at: q.ts('i'),
    ...fields,
  })
  await run(
    db,
    q.insert('deliveries', delivery('own', { event_id: q.id('events', 'own', 'i'), webhook_id: text(plan.webhookId), app_id: app, status: `'succeeded'` }), own),
    own,
    step('own deliveries', own),
  )
  await run(
    db,
    q.insert(
      'deliveries',
      delivery('others', {
        event_id: q.id('events', 'others', 'i / 10'),
        webhook_id: q.id('webhooks', 'others', `i % ${otherWebhooks}`),
        app_id: otherApp(`i % ${otherWebhooks}`),
        status: `case i % 100 when 0 then 'failed' when 1 then 'canceled' else 'succeeded' end`,
        attempts: 'case i % 100 when 0 then 8 else 1 end',
      }),
      otherDeliveries,
    ),
    otherDeliveries,
    step("others' ended deliveries", otherDeliveries),
  )
  // Retries waiting on other applications' webhooks 10 … 109 (active, not deleted): the claim's
  // skip scan visits each of these webhooks and passes on (not due).
  await run(
    db,
    q.insert(
      'deliveries',
      delivery('pending', {
        event_id: q.id('events', 'others', `i % ${otherEvents}`),
        webhook_id: q.id('webhooks', 'others', `10 + i % ${PENDING_WEBHOOKS}`),
        app_id: otherApp(`10 + i % ${PENDING_WEBHOOKS}`),
        status: `'pending'`,
        attempts: '1 + i % 5',
        next_attempt_at: text(retryAt),
      }),
      PENDING_DELIVERIES,
    ),
    PENDING_DELIVERIES,
    step('pending retries', PENDING_DELIVERIES),
  )
  // Due now: the benchmarked webhook (i < 10) and other applications' webhooks 1 … 9.
  const dueWebhook = `i / ${DUE_PER_WEBHOOK}`
  await run(
    db,
    q.insert(
      'deliveries',
      delivery('due', {
        event_id: q.id('events', 'others', `i % ${otherEvents}`),
        webhook_id: `case when ${dueWebhook} = 0 then ${text(plan.webhookId)} else ${q.id('webhooks', 'others', dueWebhook)} end`,
        app_id: `case when ${dueWebhook} = 0 then ${app} else ${otherApp(dueWebhook)} end`,
        status: `'pending'`,
        attempts: '0',
        next_attempt_at: text(dueAt),
      }),
      due,
    ),
    due,
    step('due deliveries', due),
  )
  await settle(db, report)
}

/**
 * Leaves the seeded database as a long-lived one would be, so the run does not pay for the bulk
 * load: statistics gathered (ANALYZE), and the writes flushed; on PostgreSQL also vacuumed (the
 * autovacuum a million inserts trigger would otherwise run during the first scenarios) and
 * checkpointed; on SQLite the WAL checkpointed into the database file.
 */
async function settle(db: Db, report: SeedProgress): Promise<void> {
  const started = performance.now()
  if (backendOf(db) === 'postgres') {
    await sql`vacuum analyze`.execute(db)
    report('vacuum analyze', performance.now() - started)
    const checkpointStarted = performance.now()
    await sql`checkpoint`.execute(db)
    report('checkpoint', performance.now() - checkpointStarted)
    return
  }
  await sql`analyze`.execute(db)
  report('analyze', performance.now() - started)
  const checkpointStarted = performance.now()
  await sql`pragma wal_checkpoint(truncate)`.execute(db)
  report('wal checkpoint', performance.now() - checkpointStarted)
}

/** The claim's due deliveries end (canceled), so the server started next has nothing of the seed's to deliver. */
export async function cancelDue(db: Db): Promise<void> {
  await sql`update deliveries set status = 'canceled' where id like ${'00000006-0003-%'} and status = 'pending'`.execute(db)
}

/** Rows in each table the rows group is about. */
export async function countRows(db: Db): Promise<Record<'customers' | 'liquidation_addresses' | 'webhooks' | 'deliveries', number>> {
  const count = async (table: 'customers' | 'liquidation_addresses' | 'webhooks' | 'deliveries') =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
  return {
    customers: await count('customers'),
    liquidation_addresses: await count('liquidation_addresses'),
    webhooks: await count('webhooks'),
    deliveries: await count('deliveries'),
  }
}
