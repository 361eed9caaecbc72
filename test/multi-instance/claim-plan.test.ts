import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db, writeTransaction } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { AppsRepository } from '../../src/apps/repository.js'
import { DeliveriesRepository } from '../../src/events/deliveries-repository.js'
import { DeliveryLogRepository } from '../../src/resources/webhooks/delivery-log-repository.js'
import { EventsRepository } from '../../src/events/events-repository.js'
import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { runUnitOfWork } from '../../src/db/unit-of-work.js'
import { DeliveryNotifier } from '../../src/delivery/notifier.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'

// PostgreSQL only. A database nobody has analyzed (autovacuum off, or not yet run) has no
// statistics, and the planner then guesses. Whatever it guesses, a claim must read only the
// deliveries it takes, not its webhook's backlog, and the status-filtered log only its page: both
// costs must not grow with the data. Counted as rows fetched through an index in the statement's
// transaction (pg_stat_xact_user_tables).

const BACKLOG = 3000
const WEBHOOKS = 40
let fresh: FreshDatabase
let db: Db
let backlogHook = ''
const allHooks: string[] = []
let appId = ''

/**
 * Rows of `deliveries` fetched by index scans, as counted by this connection so far (PostgreSQL
 * 15 counts on across transactions until it reports them): read before and after a statement.
 */
async function deliveryIndexReads(tx: Db): Promise<number> {
  const { rows } = await sql<{ n: string | null }>`select idx_tup_fetch as n from pg_stat_xact_user_tables where relname = 'deliveries'`.execute(tx)
  return Number(rows[0]?.n ?? 0)
}

beforeAll(async () => {
  fresh = await freshDatabase()
  db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 3))
  // No statistics for this test's life, even where autovacuum runs.
  await fresh.query('alter table deliveries set (autovacuum_enabled = false)')
  appId = (await new AppsRepository(db).createApp('claim plan')).id
  const webhooks = new WebhooksRepository(db)
  const secret = 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q='
  for (let n = 0; n < WEBHOOKS; n++) {
    const webhook = await webhooks.create(appId, { name: `hook ${n}`, url: `http://127.0.0.1:9/${n}`, isActive: true, encrypted: false, signingSecret: secret })
    if (n === 0) backlogHook = webhook.id
    allHooks.push(webhook.id)
  }
  // Three events: every webhook has three deliveries due now.
  for (let n = 0; n < 3; n++) await runUnitOfWork(db, new DeliveryNotifier(), (unit) => new EventsRepository(unit.tx, unit).emit(appId, 'tax.created', { n }))
  // Copies of the event's delivery, a minute apart: as many that succeeded from 2026-01-01, then
  // the backlog, due, from 2026-02-01. Newest first, the log meets every pending one before the
  // first that succeeded unless it reads an index of the status.
  const [first] = await fresh.query<{ id: string }>('select id from deliveries where webhook_id = ? limit 1', backlogHook)
  for (const [status, from] of [
    ['succeeded', '2026-01-01'],
    ['pending', '2026-02-01'],
  ] as const) {
    const at = `to_char(timestamp '${from}' + n * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    await fresh.query(
      `insert into deliveries (id, event_id, webhook_id, app_id, status, attempts, next_attempt_at, claim_token, created_at, updated_at, resend)
       select gen_random_uuid()::text, d.event_id, d.webhook_id, d.app_id, ?, 0, ${at}, null, ${at}, d.updated_at, 0
       from deliveries d, generate_series(1, ?) n where d.id = ?`,
      status,
      BACKLOG,
      first?.id,
    )
  }
  const analyzed = await fresh.query<{ n: number }>("select count(*)::int as n from pg_stats where tablename = 'deliveries'")
  expect(analyzed[0]?.n).toBe(0)
})
afterAll(async () => {
  await db.destroy()
  await dropFreshDatabases()
})

/** Runs `work` in a transaction that is rolled back, planning named statements as `planCacheMode` says. */
async function rolledBack(planCacheMode: PlanCacheMode, work: (tx: Db) => Promise<void>): Promise<void> {
  await writeTransaction(db, async (tx) => {
    await sql`select set_config('plan_cache_mode', ${planCacheMode}, true)`.execute(tx)
    await work(tx)
    throw new RolledBack()
  }).catch((error: unknown) => {
    if (!(error instanceof RolledBack)) throw error
  })
}

// 'auto' (the default): a named statement's first five runs are planned for their values, later
// ones may get the generic plan; the generic plan is also forced.
type PlanCacheMode = 'auto' | 'force_generic_plan'
const MODES: PlanCacheMode[] = ['auto', 'force_generic_plan']

describe.each(MODES)(`a webhook with ${BACKLOG} due deliveries, on a database without statistics (plan_cache_mode %s)`, (mode) => {
  it('each claim of 5 reads only those 5 (and the index entries beside them), the earliest first', async () => {
    const now = new Date().toISOString()
    for (let run = 0; run < 7; run++) {
      await rolledBack(mode, async (tx) => {
        const before = await deliveryIndexReads(tx)
        const due = await new DeliveriesRepository(tx).dueOf(new Map([[backlogHook, 5]]), now)
        expect(due).toHaveLength(5)
        expect(due.map((delivery) => delivery.webhook_id)).toEqual(Array(5).fill(backlogHook))
        const reads = (await deliveryIndexReads(tx)) - before
        expect(reads, `run ${run}: rows fetched`).toBeGreaterThanOrEqual(5)
        expect(reads, `run ${run}: rows fetched`).toBeLessThanOrEqual(20)
      })
    }
    // The earliest first: the backlog's, due since 2026-02-01 (the event's own is due now).
    const earliest = await fresh.query<{ id: string }>("select id from deliveries where webhook_id = ? and status = 'pending' order by next_attempt_at limit 2", backlogHook)
    await rolledBack(mode, async (tx) => {
      const due = await new DeliveriesRepository(tx).dueOf(new Map([[backlogHook, 2]]), now)
      expect(due.map((delivery) => delivery.id)).toEqual(earliest.map((row) => row.id))
    })
  })

  it(`a claim of 2 from each of ${WEBHOOKS} webhooks reads each webhook's once, and gives them in the order asked`, async () => {
    const now = new Date().toISOString()
    const take = new Map([...allHooks].reverse().map((id) => [id, 2]))
    for (let run = 0; run < 7; run++) {
      await rolledBack(mode, async (tx) => {
        const before = await deliveryIndexReads(tx)
        const due = await new DeliveriesRepository(tx).dueOf(take, now)
        expect(due).toHaveLength(2 * WEBHOOKS)
        expect(due.map((delivery) => delivery.webhook_id)).toEqual([...take.keys()].flatMap((id) => [id, id]))
        const reads = (await deliveryIndexReads(tx)) - before
        expect(reads, `run ${run}: rows fetched`).toBeLessThanOrEqual(4 * WEBHOOKS)
      })
    }
  })

  it('the log filtered by an ended status reads only its page, newest first', async () => {
    for (let run = 0; run < 7; run++) {
      await rolledBack(mode, async (tx) => {
        const before = await deliveryIndexReads(tx)
        const page = await new DeliveryLogRepository(tx).forOwner(appId, backlogHook, { status: 'succeeded', skip: 0, take: 10 })
        expect(page).toHaveLength(10)
        expect(page.every((entry) => entry.status === 'succeeded')).toBe(true)
        expect(page.map((entry) => entry.created_at)).toEqual([...page.map((entry) => entry.created_at)].sort().reverse())
        const reads = (await deliveryIndexReads(tx)) - before
        expect(reads, `run ${run}: rows fetched`).toBeLessThanOrEqual(30)
      })
    }
  })
})

class RolledBack extends Error {}
