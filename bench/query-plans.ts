/**
 * The query plans of the hot statements, printed as Markdown for the README (issue: "cost stays
 * flat as data grows … show the query plans of the hot statements").
 *
 * Seeds a fresh database (SQLite, or PostgreSQL when DATABASE_URL names one; bench/database.ts)
 * with --rows rows in each of customers, liquidation addresses, webhooks and deliveries, exactly as
 * bench:api's rows group does (bench/api-seed.ts, then ANALYZE / VACUUM ANALYZE), plus one API key
 * per other application so the authentication lookup has a table to search. Then it runs each hot
 * operation through the application's own repositories on a Kysely instance whose connections
 * record what reaches them, so the SQL shown is the SQL the application sends, with the parameters
 * it binds (writes run in a transaction that is rolled back). Each captured sequence is then
 * replayed, statement by statement and in order, in a transaction rolled back afterwards:
 *
 *   SQLite      EXPLAIN QUERY PLAN (the detail column, indented as the sqlite3 shell does), then
 *               the statement itself, timed (through Kysely and better-sqlite3, as the server runs it);
 *   PostgreSQL  EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF), which runs it, so the next
 *               statement sees what it wrote, as in the application's transaction.
 *
 * --without-statistics (SQLite only): the statistics ANALYZE gathered are deleted before planning,
 * so the plans are those of a database the server made and filled (it never runs ANALYZE itself).
 *
 * Each sequence is replayed REPLAYS times; the times are medians, the plans the last replay's.
 * A plan line that scans a big table (SQLite: SCAN of a big table other than through a partial
 * index; PostgreSQL: a Seq Scan of one, or 1,000 rows or more removed by a filter), and a plan that
 * does not use the index its statement is written for, are listed at the end under "Automatic check".
 *
 *   npx tsx bench/query-plans.ts [--rows 1000000] [--own-rows 1000] [--without-statistics]
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/query-plans.ts
 */
import { parseArgs } from 'node:util'
import { CompiledQuery, type DatabaseConnection, type QueryResult, sql } from 'kysely'
import { SCOPES } from '../src/resources/index.js'
import { loadWebhookConfig } from '../src/config.js'
import { backendOf, type Db, writeTransaction } from '../src/db/database.js'
import { openDatabase } from '../src/modules/database.js'
import { AppsRepository } from '../src/apps/repository.js'
import { CustomersRepository } from '../src/resources/customers/repository.js'
import { DeliveriesRepository } from '../src/events/deliveries-repository.js'
import { EventsRepository, hasPendingFanOut } from '../src/events/events-repository.js'
import { LiquidationAddressesRepository } from '../src/resources/liquidation-addresses/repository.js'
import { toLiquidationAddress } from '../src/resources/liquidation-addresses/objects.js'
import { WebhooksRepository } from '../src/resources/webhooks/repository.js'
import { newId } from '../src/db/time.js'
import { UnitOfWork } from '../src/db/unit-of-work.js'
import { generateSigningSecret } from '../src/resources/webhooks/routes.js'
import { FairShare } from '../src/delivery/fair-share.js'
import { QueueScan } from '../src/delivery/queue-scan.js'
import { bulkConnection, countRows, OWN_CUSTOMER_ID, otherAppsFor, poolWebhookId, seedRows } from './api-seed.js'
import { benchDatabase } from './database.js'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    'own-rows': { type: 'string', default: '1000' },
    'without-statistics': { type: 'boolean', default: false },
  },
})
function positive(name: string, text: string): number {
  const n = Number(text)
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer (got ${JSON.stringify(text)})`)
  return n
}
const rows = positive('rows', values.rows)
const ownRows = positive('own-rows', values['own-rows'])
/** SQLite: plan without statistics (sqlite_stat1, sqlite_stat4 emptied), as on a database the server made (it never runs ANALYZE) */
const withoutStatistics = values['without-statistics']
/** bench:api's rows group's DELETE pool (min(5,000, rows-small / 2)), so the seeded data is the same */
const POOL = Math.min(5_000, Math.floor(rows / 2))
/** bench:api's name filter */
const NAME_FILTER = 'er12'
/** The dispatcher's MAX_CLAIM (src/delivery/dispatcher.ts, not exported) */
const MAX_CLAIM = 500
/** Replays of each captured sequence: times are the median of these */
const REPLAYS = 5
/** Tables the seed fills with --rows rows (events: a tenth of them plus the own ones) */
const BIG_TABLES = ['customers', 'liquidation_addresses', 'webhooks', 'events', 'deliveries']
/** Partial indexes: scanning one reads only the rows it holds (pending deliveries, events waiting for their fan-out) */
const PARTIAL_INDEXES = ['deliveries_queue', 'events_fanout_pending']

const log = (message: string) => process.stderr.write(`[query-plans ${new Date().toISOString().slice(11, 19)}] ${message}\n`)
const thousands = (n: number) => Math.round(n).toLocaleString('en-US')
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

// --- capturing the application's SQL -----------------------------------------------------------

/** What makes the rolled-back transactions roll back. */
class Rollback extends Error {}

/** Runs `work` in a write transaction (as the application opens it) and rolls it back. */
async function rolledBack(db: Db, work: (tx: Db) => Promise<void>): Promise<void> {
  try {
    await writeTransaction(db, async (tx) => {
      await work(tx)
      throw new Rollback()
    })
  } catch (error) {
    if (!(error instanceof Rollback)) throw error
  }
}

/** `connection`, recording every statement sent on it. */
function recording(connection: DatabaseConnection, queries: CompiledQuery[]): DatabaseConnection {
  return {
    executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      queries.push(query)
      return connection.executeQuery<R>(query)
    },
    streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
      queries.push(query)
      return connection.streamQuery<R>(query, chunkSize)
    },
  }
}

/**
 * The statements `work` sends on `db` (transaction control left out), as they reach the connection:
 * the SQL and parameters the database gets, however they were made (a builder, `sql`, SQL compiled
 * once and reused). While `work` runs, `db`'s executor hands out recording connections; the
 * transactions begun on `db` run on them too. `db` itself is used, not a copy, so whatever the
 * application keeps per database (its SQLite write transactions) is found.
 */
async function capture(db: Db, work: (db: Db) => Promise<void>): Promise<CompiledQuery[]> {
  const queries: CompiledQuery[] = []
  const executor = db.getExecutor()
  const provide = executor.provideConnection.bind(executor)
  executor.provideConnection = (consumer) => provide((connection) => consumer(recording(connection, queries)))
  try {
    await work(db)
  } finally {
    executor.provideConnection = provide
  }
  return queries.filter((query) => !/^\s*(begin|start transaction|commit|rollback|savepoint|release)\b/i.test(query.sql))
}

// --- explaining them --------------------------------------------------------------------------

interface Explained {
  statement: CompiledQuery
  plan: string[]
  /** SQLite: the statement run on its own; PostgreSQL: EXPLAIN ANALYZE's Execution Time */
  ms: number
  /** PostgreSQL: EXPLAIN ANALYZE's Planning Time */
  planningMs?: number
  /** SQLite: rows returned or changed */
  rows?: number
}

function stringField(row: unknown, key: 'QUERY PLAN' | 'detail'): string {
  if (typeof row !== 'object' || row === null || !(key in row)) throw new Error(`plan row without ${key}: ${JSON.stringify(row)}`)
  const value: unknown = (row as Record<typeof key, unknown>)[key]
  return String(value)
}

function numberField(row: unknown, key: 'id' | 'parent'): number {
  if (typeof row !== 'object' || row === null || !(key in row)) throw new Error(`plan row without ${key}: ${JSON.stringify(row)}`)
  return Number((row as Record<typeof key, unknown>)[key])
}

/** EXPLAIN QUERY PLAN's rows as the sqlite3 shell shows them: the detail column, indented by depth. */
function sqlitePlan(planRows: readonly unknown[]): string[] {
  const depth = new Map<number, number>()
  return planRows.map((row) => {
    const id = numberField(row, 'id')
    const parent = numberField(row, 'parent')
    const level = parent === 0 ? 0 : (depth.get(parent) ?? 0) + 1
    depth.set(id, level)
    return `${'  '.repeat(level)}${stringField(row, 'detail')}`
  })
}

async function explainOnce(db: Db, statements: readonly CompiledQuery[]): Promise<Explained[]> {
  const out: Explained[] = []
  await rolledBack(db, async (tx) => {
    for (const statement of statements) {
      const parameters = [...statement.parameters]
      if (backendOf(tx) === 'postgres') {
        const result = await tx.executeQuery(CompiledQuery.raw(`explain (analyze, buffers, costs off, timing off) ${statement.sql}`, parameters))
        const plan = result.rows.map((row) => stringField(row, 'QUERY PLAN'))
        const time = (label: string) => Number(plan.find((line) => line.startsWith(label))?.match(/([\d.]+) ms/)?.[1] ?? NaN)
        out.push({ statement, plan, ms: time('Execution Time'), planningMs: time('Planning Time') })
      } else {
        const plan = sqlitePlan((await tx.executeQuery(CompiledQuery.raw(`explain query plan ${statement.sql}`, parameters))).rows)
        const started = performance.now()
        const result = await tx.executeQuery(statement)
        const ms = performance.now() - started
        out.push({ statement, plan, ms, rows: result.rows.length > 0 ? result.rows.length : Number(result.numAffectedRows ?? 0n) })
      }
    }
  })
  return out
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[middle] ?? NaN) : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2
}

/** Replays the sequence REPLAYS times: the last replay's plans, each statement's median times. */
async function explain(db: Db, statements: readonly CompiledQuery[]): Promise<Explained[]> {
  const runs: Explained[][] = []
  for (let i = 0; i < REPLAYS; i++) runs.push(await explainOnce(db, statements))
  const last = runs.at(-1) ?? []
  return last.map((explained, i) => {
    const planning = runs.map((run) => run[i]?.planningMs).filter((ms): ms is number => ms !== undefined)
    return {
      ...explained,
      ms: median(runs.map((run) => run[i]?.ms ?? NaN)),
      ...(planning.length > 0 ? { planningMs: median(planning) } : {}),
    }
  })
}

// --- naming and printing ------------------------------------------------------------------------

const P = String.raw`(?:\?|\$\d+)`
/** What each statement is, by its SQL (first match), and the index its plan should use (by name, both backends). */
const NAMES: [RegExp, string, RegExp?][] = [
  [/from "api_keys" where "client_key" =/, 'AppsRepository.findCredentials: the API key by client_key', /api_keys_2|api_keys_client_key_key/],
  [
    new RegExp(`^select \\*, \\(select .* from webhook_event_counts c where c.webhook_id = webhooks.id\\) as "total_events" from "webhooks" where "app_id" = ${P} and "deleted_at" is null and "id" = ${P}$`),
    'WebhooksRepository.find: `owned(appId)` and the id, its total_events summed from webhook_event_counts',
    /webhooks_1|webhooks_pkey/,
  ],
  [/^select "id" from "webhooks" where "id" = .* for update$/, 'DeliveriesRepository.lockToStop: the webhook FOR UPDATE (PostgreSQL only)', /webhooks_pkey/],
  [/^update "webhooks" set "deleted_at" =/, 'WebhooksRepository.delete: `updateOwned` sets deleted_at, returning the row', /webhooks_1|webhooks_pkey/],
  [
    /^update "deliveries" set "status" = .* where "id" in \(select "id" from "deliveries"( indexed by deliveries_queue)? where "webhook_id" =/,
    "DeliveriesRepository.cancelPendingOf: the webhook's pending deliveries canceled",
    /deliveries_queue/,
  ],
  [
    /^with "canceled" as \(update "deliveries" set "status" =/,
    'DeliveriesRepository.cancelPendingOf (PostgreSQL): the pending deliveries canceled, skipping held rows, and one left pending if any (only then the waiting follow-up runs)',
    /deliveries_queue/,
  ],
  [/^select \* from "customers" where .* like /, 'CustomersRepository.list: the page, name filter (src/db/like.ts)', /customers_app_id/],
  [/^select count\(\*\) as "total" from "customers" where .* like /, 'CustomersRepository.list: the total, name filter', /customers_app_id/],
  [new RegExp(`^select \\* from "customers" where "app_id" = ${P} and "id" = ${P}$`), 'CustomersRepository.find: the customer lookup', /customers_1|customers_pkey/],
  [/^insert into "liquidation_addresses"/, 'LiquidationAddressesRepository.create: the insert (unique check: liquidation_addresses_chain_address)'],
  [
    /fanout_pending = 1\) then 1 else 0 end/,
    'EventsRepository.emit, INLINE_CANDIDATES: active webhooks, and whether an event waits for its fan-out (exists on events_fanout_pending)',
    /events_fanout_pending/,
  ],
  [/^insert into "events"/, 'EventsRepository.emit: the event insert'],
  [/^with "event" as \(insert into "events"/, "EventsRepository.emit (PostgreSQL, one active webhook): the event, its delivery and the webhook's event count in one statement"],
  [
    /^select "id", "created_at" from "webhooks" where .* order by "id"/,
    "EventsRepository.lockActiveWebhooks: the application's active webhooks, locked in id order (PostgreSQL only)",
    /webhooks_active/,
  ],
  [/^insert into "deliveries"/, 'EventsRepository.writeDeliveries: the deliveries insert'],
  [/^insert into "webhook_event_counts"/, "EventsRepository.writeDeliveries: the webhooks' event counts (upsert on the primary key)"],
  [/^select "id" from "events" where fanout_pending = 1/, 'hasPendingFanOut: any event waiting for its fan-out', /events_fanout_pending/],
  [/with recursive pending/, 'EventsRepository.pendingApps: applications with events waiting (skip scan of events_fanout_pending)', /events_fanout_pending/],
  [/with recursive queue/, 'DeliveriesRepository.dueQueues: webhooks with due deliveries (skip scan of deliveries_queue)', /deliveries_queue/],
  [
    /deliveries.* join "?events"? (as )?"?e"? on "?e"?\."?id"? = "?d"?\."?event_id"?/,
    "DeliveriesRepository.dueOf: each planned webhook's due deliveries",
    /deliveries_queue/,
  ],
  [/^update "deliveries" set "claim_token" =/, 'DeliveriesRepository.claim: the claim', /deliveries_1|deliveries_pkey/],
]

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim()
}

function nameOf(statement: CompiledQuery): { name: string; expect?: RegExp } {
  const text = oneLine(statement.sql)
  for (const [pattern, name, expect] of NAMES) if (pattern.test(text)) return expect === undefined ? { name } : { name, expect }
  return { name: `${text.split(' ')[0] ?? ''} (${text.match(/(?:from|into|update) "?(\w+)"?/)?.[1] ?? '?'})` }
}

/** The SQL as sent, dedented; placeholder lists longer than 20 shortened. */
function displaySql(text: string): string {
  const lines = text.split('\n').filter((line) => line.trim() !== '')
  const indents = lines.slice(1).map((line) => line.match(/^ */)?.[0].length ?? 0)
  const cut = indents.length > 0 ? Math.min(...indents) : 0
  const dedented = lines.map((line, i) => (i === 0 ? line.trim() : line.slice(cut))).join('\n')
  return dedented.replace(new RegExp(`\\(${P}(?:, ${P}){20,}\\)`, 'g'), (list) => {
    const items = list.slice(1, -1).split(', ')
    return `(${items.slice(0, 3).join(', ')}, … ${items.at(-1) ?? ''})  /* ${items.length} placeholders */`
  })
}

/** A plan line with long array literals (PostgreSQL's `= ANY ('{…}')`) shortened. */
function displayPlanLine(line: string): string {
  return line.replace(/'\{([^'{}]*)\}'/g, (literal, items: string) => {
    const values = items.split(',')
    return values.length <= 5 ? literal : `'{${values.slice(0, 3).join(',')},…}' /* ${values.length} values */`
  })
}

function displayValue(value: unknown): string {
  if (Array.isArray(value)) {
    const shown = value.slice(0, 3).map(displayValue)
    return `[${shown.join(', ')}${value.length > 3 ? `, … ${value.length} in all` : ''}]`
  }
  if (typeof value === 'string') return JSON.stringify(value.length > 48 ? `${value.slice(0, 45)}…` : value)
  return String(value)
}

function displayParameters(parameters: readonly unknown[]): string {
  if (parameters.length === 0) return 'none'
  const shown = parameters.slice(0, 12).map(displayValue)
  return `${shown.join(', ')}${parameters.length > 12 ? `, … ${parameters.length} in all` : ''}`
}

const ms = (value: number) => (value >= 10 ? value.toFixed(1) : value >= 1 ? value.toFixed(2) : value.toFixed(3))

interface Finding {
  operation: string
  statement: string
  line: string
  why: string
}

/** Plan lines that read a big table whole, or much of it. */
function suspects(explained: Explained, sqlText: string): { line: string; why: string }[] {
  const out: { line: string; why: string }[] = []
  // aliases of the big tables in this statement: `"deliveries" as "d"`, `deliveries d`
  const big = new Set(BIG_TABLES)
  for (const match of sqlText.matchAll(/"?(\w+)"?(?: as)? "?(\w+)"?/g)) {
    const [, table, alias] = match
    if (table !== undefined && alias !== undefined && BIG_TABLES.includes(table) && !/^(where|on|set|join|inner|cross|order|limit|values|group)$/i.test(alias)) big.add(alias)
  }
  for (const raw of explained.plan) {
    const line = raw.trim()
    const sqliteScan = line.match(/^SCAN (\w+)(?: USING (?:COVERING )?INDEX (\w+))?/)
    if (sqliteScan !== null && big.has(sqliteScan[1] ?? '')) {
      const index = sqliteScan[2]
      if (index === undefined) out.push({ line, why: 'SQLite reads the whole table' })
      else if (!PARTIAL_INDEXES.includes(index)) out.push({ line, why: `SQLite reads the whole index ${index}` })
    }
    const seqScan = line.match(/Seq Scan on (\w+)/)
    if (seqScan !== null && big.has(seqScan[1] ?? '')) out.push({ line, why: 'PostgreSQL reads the whole table' })
    const removed = Number(line.match(/Rows Removed by (?:Filter|Index Recheck): (\d+)/)?.[1] ?? 0)
    if (removed >= 1000) out.push({ line, why: `${thousands(removed)} rows read and thrown away` })
    if (/USE TEMP B-TREE/.test(line)) out.push({ line, why: 'SQLite sorts in a temporary B-tree (fine while the sorted set is small)' })
  }
  return out
}

// --- the data -----------------------------------------------------------------------------------

const started = Date.now()
const database = await benchDatabase()
const output: string[] = []
try {
  const db = await openDatabase(database.location)
  const backend = backendOf(db)
  const engine =
    backend === 'postgres'
      ? `PostgreSQL ${(await sql<{ server_version: string }>`show server_version`.execute(db)).rows[0]?.server_version ?? '?'}`
      : `SQLite ${(await sql<{ v: string }>`select sqlite_version() as v`.execute(db)).rows[0]?.v ?? '?'}`

  // As bench:api's rows group: the benchmarked application with one active webhook, the DELETE pool's application.
  const apps = new AppsRepository(db)
  const app = await apps.createApp('bench')
  const key = await apps.createKey({ appId: app.id, environment: 'production', scopes: SCOPES, rateLimitOverride: 1_000_000_000 })
  const webhook = await new WebhooksRepository(db).create(app.id, {
    name: 'bench',
    url: 'http://127.0.0.1:9/hook',
    isActive: true,
    encrypted: false,
    signingSecret: generateSigningSecret(),
  })
  const poolApp = await apps.createApp('deletes')
  await apps.createKey({ appId: poolApp.id, environment: 'production', scopes: SCOPES, rateLimitOverride: 1_000_000_000 })

  log(`seeding ${thousands(rows)} rows per table (${engine})…`)
  const seedStart = Date.now()
  const bulk = bulkConnection(database.location, db)
  try {
    await seedRows(
      bulk.db,
      { rows, own: ownRows, appId: app.id, webhookId: webhook.id, poolAppId: poolApp.id, pool: POOL, signingSecret: generateSigningSecret() },
      (step, stepMs) => log(`  ${step}: ${seconds(stepMs)}`),
    )
    // One API key per other application (the seed makes none), so the authentication lookup searches a real table.
    const otherApps = otherAppsFor(rows)
    const hex = backend === 'postgres' ? `lpad(to_hex(i), 12, '0')` : `printf('%012x', i)`
    const series =
      backend === 'postgres'
        ? sql.raw(`generate_series(0, ${otherApps - 1}) as s(i)`)
        : sql.raw(`(with recursive s(i) as (select 0 union all select i + 1 from s where i < ${otherApps - 1}) select i from s) as s`)
    await sql`
      insert into api_keys (id, app_id, client_key, secret_digest, environment, scopes, rate_limit_per_hour, active, created_at)
      select ${sql.raw(`'00000007-0000-4000-8000-' || ${hex}`)}, ${sql.raw(`'00000001-0000-4000-8000-' || ${hex}`)},
        ${sql.raw(`'pk_seed_' || ${hex}`)}, 'seeded', 'production', '[]', null, 1, '2024-01-01T00:00:00.000Z'
      from ${series}
    `.execute(bulk.db)
    await sql`analyze api_keys`.execute(bulk.db)
  } finally {
    await bulk.close()
  }
  const seedMs = Date.now() - seedStart
  if (withoutStatistics) {
    if (backend !== 'sqlite') throw new Error('--without-statistics is for SQLite: PostgreSQL analyzes by itself (autovacuum)')
    const tables = await sql<{ name: string }>`select name from sqlite_schema where name in ('sqlite_stat1', 'sqlite_stat4')`.execute(db)
    for (const { name } of tables.rows) await sql`delete from ${sql.table(name)}`.execute(db)
    // reloads the (now empty) statistics into the planner
    await sql`analyze sqlite_schema`.execute(db)
  }
  const counts = await countRows(db)
  const keys = Number((await db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
  const events = Number((await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
  log(`seeded in ${seconds(seedMs)}: ${JSON.stringify({ ...counts, events, api_keys: keys })}`)

  // --- the hot operations, as the routes and the dispatcher run them ------------------------------

  const config = loadWebhookConfig({})
  const caps = { free: Math.min(config.concurrency, MAX_CLAIM), perApp: config.perAppConcurrency, perWebhook: config.perWebhookConcurrency }
  const leaseMs = 2 * config.timeoutMs + 1000
  const matches = Array.from({ length: ownRows }, (_, i) => `own${i} customer${i}`).filter((name) => name.includes(NAME_FILTER)).length

  interface Operation {
    title: string
    about: string
    run(db: Db): Promise<void>
  }
  const operations: Operation[] = [
    {
      title: 'Authentication (every authenticated request)',
      about: `The onRequest hook's AppsRepository.findCredentials, for the benchmarked application's key (${thousands(keys)} API keys).`,
      run: async (cdb) => {
        if ((await new AppsRepository(cdb).findCredentials(key.client_key)) === undefined) throw new Error('key not found')
      },
    },
    {
      title: 'GET /webhooks/{id}',
      about: `WebhooksRepository.find for the benchmarked application's active webhook (${thousands(ownRows)} ended deliveries of its own).`,
      run: async (cdb) => {
        if ((await new WebhooksRepository(cdb).find(app.id, webhook.id)) === undefined) throw new Error('webhook not found')
      },
    },
    {
      title: 'DELETE /webhooks/{id}',
      about: `WebhooksRepository.delete in the route's unit of work (rolled back), for an inactive webhook of the DELETE pool's application, as bench:api deletes them.`,
      run: (cdb) =>
        rolledBack(cdb, async (tx) => {
          if ((await new WebhooksRepository(tx, new UnitOfWork(tx)).delete(poolApp.id, poolWebhookId(0))) === undefined) throw new Error('pool webhook not found')
        }),
    },
    {
      title: `GET /customers?name=${NAME_FILTER}`,
      about: `CustomersRepository.list with the route's defaults (take 10, skip 0): ${matches} of the application's ${thousands(ownRows)} customers match.`,
      run: async (cdb) => {
        await new CustomersRepository(cdb).list(app.id, { name: NAME_FILTER, take: 10, skip: 0 })
      },
    },
    {
      title: 'POST /customers/{id}/liquidation_addresses',
      about: "The route's unit of work (rolled back): the customer lookup, the insert, then EventsRepository.emit's outbox statements; the application has one active webhook, so the event's delivery is written inline.",
      run: (cdb) =>
        rolledBack(cdb, async (tx) => {
          const unit = new UnitOfWork(tx)
          if ((await new CustomersRepository(tx).find(app.id, OWN_CUSTOMER_ID)) === undefined) throw new Error('customer not found')
          const created = await new LiquidationAddressesRepository(tx).create(app.id, OWN_CUSTOMER_ID, {
            chain: 'ethereum',
            currency: 'usdc',
            address: `0x${'f'.repeat(40)}`,
            external_account_id: 'ext_1',
          })
          await new EventsRepository(tx, unit).emit(app.id, 'liquidation_address.created', toLiquidationAddress(created))
        }),
    },
    {
      title: 'Dispatcher: deferred fan-out check (every loop turn)',
      about: 'hasPendingFanOut (a read), then EventsRepository.fanOutPending in a rolled-back unit of work: with no event waiting, its pendingApps finds none and it ends.',
      run: async (cdb) => {
        await hasPendingFanOut(cdb)
        await rolledBack(cdb, async (tx) => {
          await new EventsRepository(tx, new UnitOfWork(tx)).fanOutPending(undefined)
        })
      },
    },
    {
      title: 'Dispatcher: the claim',
      about:
        "As Dispatcher.claimAndStart: QueueScan's windows of dueQueues (reads), FairShare's plan with the default caps, then dueOf and claim in a write transaction (rolled back). 100 deliveries are due on 10 webhooks of 10 applications; 1,000 retries wait (not due) on 100 others.",
      run: async (cdb) => {
        const nowMs = Date.now()
        const now = new Date(nowMs).toISOString()
        const queues = await new QueueScan(cdb).due(now, [], caps.free)
        const take = new FairShare().plan(queues, caps, { countForApp: () => 0, countFor: () => 0 })
        await rolledBack(cdb, async (tx) => {
          const repo = new DeliveriesRepository(tx)
          const due = await repo.dueOf(take, now)
          await repo.claim(
            due.map((delivery) => delivery.id),
            newId(),
            new Date(nowMs + leaseMs).toISOString(),
          )
        })
      },
    },
  ]

  output.push(`### ${engine}, ${thousands(rows)} rows per table`, '')
  output.push(
    `Customers ${thousands(counts.customers)}, liquidation addresses ${thousands(counts.liquidation_addresses)}, webhooks ${thousands(counts.webhooks)}, deliveries ${thousands(counts.deliveries)}, events ${thousands(events)}, API keys ${thousands(keys)} (${thousands(otherAppsFor(rows))} other applications; the benchmarked one owns ${thousands(ownRows)} customers, addresses and ended deliveries). Seeded as bench:api's rows group seeds (bench/api-seed.ts), then ${backend === 'postgres' ? 'VACUUM ANALYZE' : 'ANALYZE'}; seeded in ${seconds(seedMs)}.${withoutStatistics ? " Then sqlite_stat1 and sqlite_stat4 emptied (--without-statistics): the planner has no statistics, as on a database the server made (it never runs ANALYZE)." : ''}`,
    '',
    backend === 'postgres'
      ? `Plans: \`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF)\` of the statement as the application sends it, with its parameters, in a transaction rolled back afterwards (each statement after the ones before it, so it sees what they wrote; the rows rolled back stay in the indexes until a vacuum, as a live database's updated rows do). Times: EXPLAIN ANALYZE's execution (and planning) time, median of ${REPLAYS} replays. Long \`= ANY ('{…}')\` lists are shortened.`
      : `Plans: \`EXPLAIN QUERY PLAN\` of the statement as the application sends it, with its parameters (SQLite plans each run with its own values, using sqlite_stat4 when ANALYZE gathered it: a statement run several times with different values may get different plans, each shown). Times: the statement run through Kysely and better-sqlite3 as the server runs it, in a transaction rolled back afterwards (each statement after the ones before it), median of ${REPLAYS} replays.`,
    '',
  )

  const findings: Finding[] = []
  const summary: string[] = ['| operation | statement | time |', '|---|---|---|']
  for (const operation of operations) {
    log(`${operation.title}…`)
    const statements = await capture(db, operation.run)
    log(`  ${statements.length} statements: ${statements.map((statement) => oneLine(statement.sql).slice(0, 40)).join(' | ')}`)
    const explained = await explain(db, statements)
    output.push(`#### ${operation.title}`, '', operation.about, '')
    // Repeats of one statement (SQLite's dueOf: one per planned webhook) are shown once.
    const groups = new Map<string, Explained[]>()
    for (const item of explained) groups.set(item.statement.sql, [...(groups.get(item.statement.sql) ?? []), item])
    for (const group of groups.values()) {
      const first = group[0]
      if (first === undefined) continue
      const { name, expect } = nameOf(first.statement)
      const total = group.reduce((sum, item) => sum + item.ms, 0)
      // SQLite plans each run with its own values (sqlite_stat4): each distinct plan is shown.
      const byPlan = new Map<string, Explained[]>()
      for (const item of group) byPlan.set(item.plan.join('\n'), [...(byPlan.get(item.plan.join('\n')) ?? []), item])
      const repeated =
        group.length > 1
          ? ` (run ${group.length} times, once per planned webhook: ${ms(total)} ms in all; ${byPlan.size === 1 ? 'one plan for all, shown with the first run' : `${byPlan.size} different plans, each shown with its first run`})`
          : ''
      output.push(`**${name}**${repeated}`, '', '```sql', displaySql(first.statement.sql), '```', '')
      for (const runs of byPlan.values()) {
        const shown = runs[0]
        if (shown === undefined) continue
        const time =
          backend === 'postgres'
            ? `execution ${ms(shown.ms)} ms, planning ${ms(shown.planningMs ?? NaN)} ms`
            : `${ms(shown.ms)} ms, ${thousands(shown.rows ?? 0)} row${shown.rows === 1 ? '' : 's'}`
        if (byPlan.size > 1) output.push(`Plan of ${runs.length} of the ${group.length} runs:`, '')
        output.push(`Parameters: ${displayParameters(shown.statement.parameters)}`, '')
        output.push('```', ...(shown.plan.length > 0 ? shown.plan.map(displayPlanLine) : ['(no plan rows: a plain INSERT … VALUES; constraints are checked through their indexes)']), '```', '')
        output.push(`Time: ${time}${runs.length > 1 ? ` (the first run; ${runs.length} runs: ${ms(runs.reduce((sum, item) => sum + item.ms, 0))} ms)` : ''}.`, '')
        for (const suspect of suspects(shown, oneLine(shown.statement.sql))) findings.push({ operation: operation.title, statement: name, ...suspect })
        if (expect !== undefined && !shown.plan.some((line) => expect.test(line))) {
          const access = shown.plan.map((line) => line.trim()).filter((line) => /^(SCAN|SEARCH) |Scan /.test(line))
          const which = byPlan.size > 1 ? ` (${runs.length} of ${group.length} runs)` : ''
          findings.push({ operation: operation.title, statement: `${name}${which}`, line: access.join(' / '), why: `no use of the expected index (${expect.source})` })
        }
      }
      summary.push(`| ${operation.title} | ${name} | ${group.length > 1 ? `${ms(total)} ms (${group.length} ×)` : `${ms(first.ms)} ms`} |`)
    }
  }

  output.push(`#### Summary (${backend === 'postgres' ? 'execution time' : 'statement time'}, median of ${REPLAYS})`, '', ...summary, '')
  output.push('#### Automatic check: plan lines that read a big table (or much of one), plans without the expected index', '')
  if (findings.length === 0) output.push('None: every statement reaches its rows through an index (or a partial index of pending rows only).', '')
  else for (const finding of findings) output.push(`- ${finding.operation}, ${finding.statement}: \`${displayPlanLine(finding.line)}\`: ${finding.why}.`)
  output.push('', `Whole run (seeding included): ${seconds(Date.now() - started)}.`, '')
  await db.destroy()
} finally {
  await database.drop()
}
console.log(output.join('\n'))
