import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { AppsRepository } from '../../src/apps/repository.js'
import { DeliveriesRepository } from '../../src/events/deliveries-repository.js'
import { EVENT_COUNT_SLOTS, EventsRepository } from '../../src/events/events-repository.js'
import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { nowIso } from '../../src/db/time.js'
import { runUnitOfWork, type SignalSink } from '../../src/db/unit-of-work.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'

// PostgreSQL only (this folder runs on the PostgreSQL + Redis half). A write that emits an event
// locks its application's active webhooks FOR KEY SHARE and adds to their event counts in rows of
// their own: two writes of one application do not wait for each other, nor does the outcome
// writer's update of the webhook row wait for a write; a DELETE (FOR UPDATE first) still waits for
// the write, and then cancels what it wrote.

const quiet: SignalSink = { signalStatements: () => undefined, committed: () => undefined }
/** Long enough for a statement that is not waiting for a lock to finish on a loaded machine. */
const NOT_WAITING_MS = 5_000
/** How long a statement that waits for a lock is watched to still be waiting. */
const WAITING_MS = 400

let fresh: FreshDatabase
const opened: Db[] = []
/** Two pools of one connection each, whose connections add to different count slots. */
let first: Db
let second: Db

async function open(): Promise<Db> {
  const db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 1))
  opened.push(db)
  return db
}

async function slotOf(db: Db): Promise<number> {
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)
  return (rows[0]?.pid ?? 0) % EVENT_COUNT_SLOTS
}

beforeAll(async () => {
  fresh = await freshDatabase('postgres')
  first = await open()
  const taken = await slotOf(first)
  for (;;) {
    second = await open()
    if ((await slotOf(second)) !== taken) break
  }
})
afterAll(async () => {
  await Promise.all(opened.splice(0).map((db) => db.destroy().catch(() => undefined)))
  await dropFreshDatabases()
})

async function appWithWebhook(name: string): Promise<{ appId: string; webhookId: string }> {
  const appId = (await new AppsRepository(first).createApp(name)).id
  const webhook = await new WebhooksRepository(first).create(appId, { name, url: `https://example.com/${name}`, isActive: true, encrypted: false, signingSecret: 'whsec_x' })
  return { appId, webhookId: webhook.id }
}

/** A promise, and the function that resolves it. */
function signal(): { reached: Promise<void>; fire: () => void } {
  let fire: () => void = () => undefined
  const reached = new Promise<void>((resolve) => {
    fire = resolve
  })
  return { reached, fire }
}

/** Emits an event in a transaction on `first` that stays open until the returned release is called. */
async function openWrite(appId: string): Promise<{ release: () => void; committed: Promise<string> }> {
  const held = signal()
  const written = signal()
  const committed = runUnitOfWork(first, quiet, async (unit) => {
    const eventId = await new EventsRepository(unit.tx, unit).emit(appId, 'tax.created', { n: 1 })
    written.fire()
    await held.reached
    return eventId
  })
  await written.reached
  return { release: held.fire, committed }
}

/** What `work` settled to within `ms`: 'pending' when it had not. */
async function within<T>(ms: number, work: Promise<T>): Promise<T | 'pending'> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** delivery_stats.total_events as the API reads it. */
const totalEvents = async (appId: string, webhookId: string) => (await new WebhooksRepository(first).find(appId, webhookId))?.total_events

describe("a write's webhook rows (PostgreSQL)", () => {
  it('two writes of one application do not wait for each other: both commit, each counted, in two count rows', async () => {
    const { appId, webhookId } = await appWithWebhook('two writes')
    const open1 = await openWrite(appId)
    try {
      const secondWrite = runUnitOfWork(second, quiet, (unit) => new EventsRepository(unit.tx, unit).emit(appId, 'tax.created', { n: 2 }))
      expect(await within(NOT_WAITING_MS, secondWrite)).toEqual(expect.any(String))
    } finally {
      open1.release()
    }
    await open1.committed
    expect(await totalEvents(appId, webhookId)).toBe(2)
    expect(await fresh.count('select count(*) from deliveries where webhook_id = ?', webhookId)).toBe(2)
    expect(await fresh.count('select count(*) from webhook_event_counts where webhook_id = ?', webhookId)).toBe(2)
  })

  it("the outcome writer's update of the webhook row does not wait for an open write", async () => {
    const { appId, webhookId } = await appWithWebhook('outcome')
    const open1 = await openWrite(appId)
    try {
      const settle = runUnitOfWork(second, quiet, (unit) =>
        new DeliveriesRepository(unit.tx, unit).settleWebhooks(new Map([[webhookId, { succeeded: 1, failed: 0, failedSinceSuccess: 0, lastStartedAt: nowIso() }]]), () => undefined),
      )
      expect(await within(NOT_WAITING_MS, settle)).toBeUndefined()
    } finally {
      open1.release()
    }
    await open1.committed
    expect(await fresh.query('select successful_deliveries from webhooks where id = ?', webhookId)).toEqual([{ successful_deliveries: 1 }])
    expect(await totalEvents(appId, webhookId)).toBe(1)
  })

  it('a DELETE still waits for an open write, then cancels the delivery it wrote', async () => {
    const { appId, webhookId } = await appWithWebhook('delete')
    const open1 = await openWrite(appId)
    let deletion: Promise<unknown>
    try {
      deletion = runUnitOfWork(second, quiet, (unit) => new WebhooksRepository(unit.tx, unit).delete(appId, webhookId))
      expect(await within(WAITING_MS, deletion)).toBe('pending')
    } finally {
      open1.release()
    }
    await open1.committed
    expect(await within(NOT_WAITING_MS, deletion)).toMatchObject({ id: webhookId, total_events: 1 })
    expect(await fresh.query('select status from deliveries where webhook_id = ?', webhookId)).toEqual([{ status: 'canceled' }])
  })

  it('a DELETE cancels a pending delivery that another transaction holds (as a claim may) once that one ends, and answers then', async () => {
    const { appId, webhookId } = await appWithWebhook('held delivery')
    await runUnitOfWork(first, quiet, (unit) => new EventsRepository(unit.tx, unit).emit(appId, 'tax.created', { n: 1 }))
    const held = signal()
    const locked = signal()
    const holder = first.transaction().execute(async (tx) => {
      await sql`select id from deliveries where webhook_id = ${webhookId} for update`.execute(tx)
      locked.fire()
      await held.reached
    })
    await locked.reached
    let deletion: Promise<unknown>
    try {
      deletion = runUnitOfWork(second, quiet, (unit) => new WebhooksRepository(unit.tx, unit).delete(appId, webhookId))
      expect(await within(WAITING_MS, deletion)).toBe('pending')
      // The deletion itself committed, skipping the held row; its follow-up waits for the row.
      expect(await fresh.count('select count(*) from webhooks where id = ? and deleted_at is not null', webhookId)).toBe(1)
      expect(await fresh.query('select status from deliveries where webhook_id = ?', webhookId)).toEqual([{ status: 'pending' }])
    } finally {
      held.fire()
    }
    await holder
    expect(await within(NOT_WAITING_MS, deletion)).toMatchObject({ id: webhookId })
    expect(await fresh.query('select status from deliveries where webhook_id = ?', webhookId)).toEqual([{ status: 'canceled' }])
  })
})
