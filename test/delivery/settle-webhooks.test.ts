import type { KyselyPlugin } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { AppsRepository } from '../../src/apps/repository.js'
import { DeliveriesRepository, type WebhookBatchCounts } from '../../src/events/deliveries-repository.js'
import { EventsRepository } from '../../src/events/events-repository.js'
import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { runUnitOfWork } from '../../src/db/unit-of-work.js'
import { DeliveryNotifier } from '../../src/delivery/notifier.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'

// The end of an outcome batch (settleWebhooks): every webhook of the batch counted in one update,
// whatever the batch's size, each with its own figures.
let fresh: FreshDatabase
let db: Db
let appId = ''
const notifier = new DeliveryNotifier()
const SECRET = 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q='

beforeAll(async () => {
  fresh = await freshDatabase()
  db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 3))
  appId = (await new AppsRepository(db).createApp('A')).id
})
afterAll(async () => {
  await db.destroy()
  await dropFreshDatabases()
})

async function webhook(name: string): Promise<string> {
  return (await new WebhooksRepository(db).create(appId, { name, url: 'http://127.0.0.1:9/w', isActive: true, encrypted: false, signingSecret: SECRET })).id
}

/** Runs settleWebhooks in a unit of work; returns how many statements it sent. */
async function settle(batch: Map<string, WebhookBatchCounts | undefined>, circuitRetryAt: (failures: number) => string | undefined = () => undefined): Promise<number> {
  let statements = 0
  const counting: KyselyPlugin = {
    transformQuery: (args) => {
      statements++
      return args.node
    },
    transformResult: async (args) => args.result,
  }
  await runUnitOfWork(db, notifier, (unit) => new DeliveriesRepository(unit.tx.withPlugin(counting), unit).settleWebhooks(batch, circuitRetryAt))
  return statements
}

const statsOf = async (id: string) =>
  (
    await fresh.query<{ successful_deliveries: number; failed_deliveries: number; consecutive_failures: number; last_delivery: string | null; circuit_retry_at: string | null }>(
      'select successful_deliveries, failed_deliveries, consecutive_failures, last_delivery, circuit_retry_at from webhooks where id = ?',
      id,
    )
  )[0]

it('counts each webhook of the batch with its own figures: successes, failures after the last success, the latest start, the circuit', async () => {
  const [recovered, failing, older] = [await webhook('recovered'), await webhook('failing'), await webhook('older')]
  await db.updateTable('webhooks').set({ consecutive_failures: 4, circuit_retry_at: '2026-01-01T00:00:00.000Z', last_delivery: '2026-05-05T00:00:00.000Z' }).where('id', 'in', [recovered, failing, older]).execute()
  const retryAt = '2099-01-01T00:00:00.000Z'
  const asked: number[] = []
  await settle(
    new Map([
      [recovered, { succeeded: 2, failed: 3, failedSinceSuccess: 1, lastStartedAt: '2026-06-01T00:00:00.000Z' }],
      [failing, { succeeded: 0, failed: 3, failedSinceSuccess: 3, lastStartedAt: '2026-06-02T00:00:00.000Z' }],
      [older, { succeeded: 1, failed: 0, failedSinceSuccess: 0, lastStartedAt: '2026-01-01T00:00:00.000Z' }],
    ]),
    (failures) => {
      asked.push(failures)
      return failures >= 5 ? retryAt : undefined
    },
  )
  // A success closes the circuit: only the failures after it count.
  expect(await statsOf(recovered)).toEqual({ successful_deliveries: 2, failed_deliveries: 3, consecutive_failures: 1, last_delivery: '2026-06-01T00:00:00.000Z', circuit_retry_at: null })
  // Failures only: added to those before; the open circuit's next attempt is set.
  expect(await statsOf(failing)).toEqual({ successful_deliveries: 0, failed_deliveries: 3, consecutive_failures: 7, last_delivery: '2026-06-02T00:00:00.000Z', circuit_retry_at: retryAt })
  // An attempt older than the last delivery recorded does not move it back.
  expect(await statsOf(older)).toEqual({ successful_deliveries: 1, failed_deliveries: 0, consecutive_failures: 0, last_delivery: '2026-05-05T00:00:00.000Z', circuit_retry_at: null })
  // Asked only for the webhooks whose batch ended on a failure.
  expect(asked.sort()).toEqual([1, 7])
})

it('a webhook deleted or deactivated meanwhile has its pending deliveries canceled, counted or not', async () => {
  const [deleted, deactivated, live] = [await webhook('deleted'), await webhook('deactivated'), await webhook('live')]
  await runUnitOfWork(db, notifier, (unit) => new EventsRepository(unit.tx, unit).emit(appId, 'tax.created', { n: 1 }))
  // Stopped behind the repositories' back, as another process's commit would look to this batch.
  await db.updateTable('webhooks').set({ deleted_at: new Date().toISOString() }).where('id', '=', deleted).execute()
  await db.updateTable('webhooks').set({ is_active: 0 }).where('id', '=', deactivated).execute()
  await settle(
    new Map([
      [deleted, undefined],
      [deactivated, { succeeded: 1, failed: 0, failedSinceSuccess: 0, lastStartedAt: new Date().toISOString() }],
      [live, { succeeded: 1, failed: 0, failedSinceSuccess: 0, lastStartedAt: new Date().toISOString() }],
    ]),
  )
  const pending = (id: string) => fresh.count("select count(*) from deliveries where webhook_id = ? and status = 'pending'", id)
  expect(await pending(deleted)).toBe(0)
  expect(await pending(deactivated)).toBe(0)
  expect(await pending(live)).toBe(1)
  expect(await fresh.count("select count(*) from deliveries where webhook_id in (?, ?) and status = 'canceled'", deleted, deactivated)).toBe(2)
})

it('settles 60 webhooks in as many statements as 1', async () => {
  const ids: string[] = []
  for (let i = 0; i < 60; i++) ids.push(await webhook(`many ${i}`))
  const counts = (id: string): [string, WebhookBatchCounts] => [id, { succeeded: 1, failed: 0, failedSinceSuccess: 0, lastStartedAt: new Date().toISOString() }]
  const one = await settle(new Map([counts(ids[0] ?? '')]))
  expect(await settle(new Map(ids.slice(1).map(counts)))).toBe(one)
  for (const id of ids) expect(await statsOf(id)).toMatchObject({ successful_deliveries: 1 })
})
