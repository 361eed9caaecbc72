import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { AppsRepository } from '../../src/apps/repository.js'
import { DeliveriesRepository } from '../../src/events/deliveries-repository.js'
import { EventsRepository } from '../../src/events/events-repository.js'
import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { runUnitOfWork } from '../../src/db/unit-of-work.js'
import { CIRCUIT_THRESHOLD } from '../../src/db/circuit.js'
import { DeliveryNotifier } from '../../src/delivery/notifier.js'
import { QueueScan } from '../../src/delivery/queue-scan.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'

// The claim's first step: which webhooks have deliveries due (a skip scan over deliveries_queue).
let fresh: FreshDatabase
let db: Db
const notifier = new DeliveryNotifier()
const hooks: Record<string, string> = {}
const apps: Record<string, string> = {}

beforeAll(async () => {
  fresh = await freshDatabase()
  db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 3))
  for (const [app, names] of [
    ['A', ['due', 'backlog', 'later', 'open', 'closed']],
    ['B', ['b']],
  ] as const) {
    apps[app] = (await new AppsRepository(db).createApp(app)).id
    for (const name of names) {
      const webhook = await new WebhooksRepository(db).create(apps[app] ?? '', { name, url: `http://127.0.0.1:9/${name}`, isActive: true, encrypted: false, signingSecret: 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=' })
      hooks[name] = webhook.id
    }
  }
  // Three events for every webhook of A, one for B: all due now.
  for (const [app, events] of [
    ['A', 3],
    ['B', 1],
  ] as const) {
    for (let i = 0; i < events; i++) await runUnitOfWork(db, notifier, (unit) => new EventsRepository(unit.tx, unit).emit(apps[app] ?? '', 'tax.created', { i }))
  }
  const future = new Date(Date.now() + 3_600_000).toISOString()
  // 'later': every delivery due in an hour. 'backlog': its earliest is due now, the other two in an hour.
  await sql`update deliveries set next_attempt_at = ${future} where webhook_id = ${hooks.later}`.execute(db)
  const [first] = await fresh.query<{ id: string }>('select id from deliveries where webhook_id = ? order by next_attempt_at, id limit 1', hooks.backlog)
  await sql`update deliveries set next_attempt_at = ${future} where webhook_id = ${hooks.backlog} and id <> ${first?.id}`.execute(db)
  // 'open': circuit open, its next attempt held back for an hour. 'closed': failures below the threshold.
  await sql`update webhooks set consecutive_failures = ${CIRCUIT_THRESHOLD}, circuit_retry_at = ${future} where id = ${hooks.open}`.execute(db)
  await sql`update webhooks set consecutive_failures = ${CIRCUIT_THRESHOLD - 1}, circuit_retry_at = ${future} where id = ${hooks.closed}`.execute(db)
})
afterAll(async () => {
  await db.destroy()
  await dropFreshDatabases()
})

/** One window big enough for every queue here: the whole scan in one read. */
const all = { after: '', size: 1000 }
const names = (rows: { webhook_id: string }[]) => rows.map((row) => Object.keys(hooks).find((name) => hooks[name] === row.webhook_id)).sort()

it('lists each webhook whose earliest pending delivery is due, once, with its application; not one whose earliest is later, nor an open circuit held back', async () => {
  const { due: rows, next } = await new DeliveriesRepository(db).dueQueues(new Date().toISOString(), [], all)
  expect(next).toBeUndefined()
  expect(names(rows)).toEqual(['b', 'backlog', 'closed', 'due'])
  expect(rows.find((row) => row.webhook_id === hooks.b)?.app_id).toBe(apps.B)
})

it('an hour on, the later deliveries and the held-back circuit are due too', async () => {
  const { due: rows } = await new DeliveriesRepository(db).dueQueues(new Date(Date.now() + 3_600_001).toISOString(), [], all)
  expect(names(rows)).toEqual(['b', 'backlog', 'closed', 'due', 'later', 'open'])
})

it('leaves out the applications it is told to skip (those at their cap)', async () => {
  const deliveries = new DeliveriesRepository(db)
  const now = new Date().toISOString()
  expect(names((await deliveries.dueQueues(now, [apps.A ?? ''], all)).due)).toEqual(['b'])
  expect(names((await deliveries.dueQueues(now, [apps.A ?? '', apps.B ?? ''], all)).due)).toEqual([])
})

it("the claim's own read (dueOf) checks the circuit again: a held-back circuit gives nothing, one whose wait is over gives one delivery however many were planned, one below the threshold all", async () => {
  const deliveries = new DeliveriesRepository(db)
  const take = new Map([hooks.open, hooks.closed, hooks.due].map((id) => [id ?? '', 3]))
  const count = (rows: { webhook_id: string }[]) => Object.fromEntries(Object.keys(hooks).map((name) => [name, rows.filter((row) => row.webhook_id === hooks[name]).length]).filter(([, n]) => n !== 0))
  expect(count(await deliveries.dueOf(take, new Date().toISOString()))).toEqual({ closed: 3, due: 3 })
  const [{ retryAt = '' } = {}] = await fresh.query<{ retryAt: string }>('select circuit_retry_at as "retryAt" from webhooks where id = ?', hooks.open)
  // Its wait ends at retryAt: one millisecond before, still held back; at it, one delivery.
  expect(count(await deliveries.dueOf(take, new Date(Date.parse(retryAt) - 1).toISOString()))).toEqual({ closed: 3, due: 3 })
  expect(count(await deliveries.dueOf(take, retryAt))).toEqual({ open: 1, closed: 3, due: 3 })
})

// Webhook order of the six queues: due, backlog, later, open, closed (A's, created in that order), b.
const inOrder = ['due', 'backlog', 'later', 'open', 'closed', 'b']

it('a window looks at `size` queues after `after` and says where the next begins; the last window says it reached the end', async () => {
  const deliveries = new DeliveriesRepository(db)
  const now = new Date().toISOString()
  // 'later' and 'open' are not due: a full window still ends at them.
  const first = await deliveries.dueQueues(now, [], { after: '', size: 3 })
  expect(names(first.due)).toEqual(['backlog', 'due'])
  expect(first.next).toBe(hooks.later)
  const second = await deliveries.dueQueues(now, [], { after: first.next ?? '', size: 3 })
  expect(names(second.due)).toEqual(['b', 'closed'])
  expect(second.next).toBe(hooks.b)
  // exactly at the end: one more window, empty, with no next
  const third = await deliveries.dueQueues(now, [], { after: second.next ?? '', size: 3 })
  expect(third).toEqual({ due: [], next: undefined })
  // one queue short of the end: not full, so no next
  expect((await deliveries.dueQueues(now, [], { after: first.next ?? '', size: 4 })).next).toBeUndefined()
})

it('a second lap stops at `until`, the queue it names included', async () => {
  const deliveries = new DeliveriesRepository(db)
  const now = new Date().toISOString()
  const lap = await deliveries.dueQueues(now, [], { after: '', size: 1000, until: hooks.backlog })
  expect(names(lap.due)).toEqual(['backlog', 'due'])
  expect(lap.next).toBeUndefined()
  // a full window that ends past `until` is the end of the lap
  expect(await deliveries.dueQueues(now, [], { after: '', size: 3, until: hooks.backlog })).toEqual({ due: lap.due, next: undefined })
})

it('QueueScan: a claim reads windows until it has what it wants, the next goes on from there, and a scan that finds too few sees every queue once', async () => {
  expect(Object.values(hooks).sort()).toEqual(inOrder.map((name) => hooks[name]))
  const scan = new QueueScan(db, 2)
  const now = new Date().toISOString()
  const seen = (queues: { webhookId: string }[]) => names(queues.map((queue) => ({ webhook_id: queue.webhookId })))
  // wanted 1: the first window (due, backlog) has two
  expect(seen(await scan.due(now, [], 1))).toEqual(['backlog', 'due'])
  // from there: (later, open) has none, (closed, b) has two
  expect(seen(await scan.due(now, [], 1))).toEqual(['b', 'closed'])
  // from b: the end, then a second lap up to b: every due queue once
  expect(seen(await scan.due(now, [], 10))).toEqual(['b', 'backlog', 'closed', 'due'])
  // that lap went round: the next scan begins after b again and sees them all once more
  expect(seen(await scan.due(now, [], 10))).toEqual(['b', 'backlog', 'closed', 'due'])
  // a scan from the first queue needs no second lap
  expect(seen(await new QueueScan(db, 4).due(now, [], 10))).toEqual(['b', 'backlog', 'closed', 'due'])
})
