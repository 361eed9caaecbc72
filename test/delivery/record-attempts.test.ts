import { afterAll, beforeAll, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db, writeTransaction } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { AppsRepository } from '../../src/apps/repository.js'
import { type AttemptRecord, DeliveriesRepository } from '../../src/events/deliveries-repository.js'
import { EventsRepository } from '../../src/events/events-repository.js'
import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { runUnitOfWork } from '../../src/db/unit-of-work.js'
import { DeliveryNotifier } from '../../src/delivery/notifier.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'

// The outcome writer's batch (recordAll): one UPDATE and one INSERT per 500 attempts, each attempt
// written only while its delivery still carries its claim.
let fresh: FreshDatabase
let db: Db
let appId = ''
let webhookId = ''
const notifier = new DeliveryNotifier()

beforeAll(async () => {
  fresh = await freshDatabase()
  db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 3))
  appId = (await new AppsRepository(db).createApp('A')).id
  webhookId = (await new WebhooksRepository(db).create(appId, { name: 'w', url: 'http://127.0.0.1:9/w', isActive: true, encrypted: false, signingSecret: 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=' })).id
})
afterAll(async () => {
  await db.destroy()
  await dropFreshDatabases()
})

/** `n` new deliveries, claimed under `token`, the owner's resend flag set on each. */
async function claimedDeliveries(n: number, token: string): Promise<string[]> {
  const ids: string[] = []
  await runUnitOfWork(db, notifier, async (unit) => {
    for (let i = 0; i < n; i++) {
      const eventId = await new EventsRepository(unit.tx, unit).emit(appId, 'tax.created', { i })
      for (const row of await unit.tx.selectFrom('deliveries').select('id').where('event_id', '=', eventId).execute()) ids.push(row.id)
    }
  })
  await db.updateTable('deliveries').set({ claim_token: token, resend: 1 }).where('id', 'in', ids).execute()
  return ids
}

function attempt(deliveryId: string, claimToken: string, next: AttemptRecord['next'], outcome: AttemptRecord['outcome'] = 'succeeded'): AttemptRecord {
  return { deliveryId, webhookId, claimToken, attempt: 3, startedAt: new Date().toISOString(), durationMs: 12, outcome, statusCode: 200, error: null, responseBody: 'ok', next, gone: false }
}

const recordAll = (attempts: AttemptRecord[]) => writeTransaction(db, (tx) => new DeliveriesRepository(tx).recordAll(attempts))
const stateOf = async (id: string) =>
  (await fresh.query<{ status: string; attempts: number; claim_token: string | null; next_attempt_at: string; resend: number }>('select status, attempts, claim_token, next_attempt_at, resend from deliveries where id = ?', id))[0]
const attemptRows = (id: string) => fresh.query<{ attempt: number; duration_ms: number; outcome: string; status_code: number | null; error: string | null; response_body: string | null }>('select attempt, duration_ms, outcome, status_code, error, response_body from delivery_attempts where delivery_id = ?', id)

it('writes each kind of outcome in one batch: an end, a retry, a release and no change, with one attempt row each', async () => {
  const [ended = '', retried = '', released = '', unchanged = ''] = await claimedDeliveries(4, 'c1')
  const later = new Date(Date.now() + 60_000).toISOString()
  const before = await stateOf(released)
  const batch = [
    attempt(ended, 'c1', { status: 'succeeded', at: later }),
    { ...attempt(retried, 'c1', { status: 'pending', at: later }, 'failed'), statusCode: null, error: 'connection refused', responseBody: null },
    attempt(released, 'c1', { status: 'release' }, 'canceled'),
    attempt(unchanged, 'c1', { status: 'unchanged' }, 'canceled'),
  ]
  expect(await recordAll(batch)).toEqual(batch)
  // An end drops the owner's resend with the token; a retry keeps it; a release gives the delivery back due now, its attempts unchanged.
  expect(await stateOf(ended)).toEqual({ status: 'succeeded', attempts: 3, claim_token: null, next_attempt_at: later, resend: 0 })
  expect(await stateOf(retried)).toEqual({ status: 'pending', attempts: 3, claim_token: null, next_attempt_at: later, resend: 1 })
  const afterRelease = await stateOf(released)
  expect(afterRelease).toMatchObject({ status: 'pending', attempts: before?.attempts, claim_token: null, resend: 1 })
  expect(Date.parse(afterRelease?.next_attempt_at ?? '')).toBeLessThanOrEqual(Date.now())
  // No change: the row still carries the claim, so the attempt is recorded and the delivery left as it was.
  expect(await stateOf(unchanged)).toMatchObject({ status: 'pending', claim_token: 'c1' })
  expect(await attemptRows(ended)).toEqual([{ attempt: 3, duration_ms: 12, outcome: 'succeeded', status_code: 200, error: null, response_body: 'ok' }])
  expect(await attemptRows(retried)).toEqual([{ attempt: 3, duration_ms: 12, outcome: 'failed', status_code: null, error: 'connection refused', response_body: null }])
  expect(await attemptRows(released)).toHaveLength(1)
  expect(await attemptRows(unchanged)).toHaveLength(1)
})

it('records nothing for an attempt whose claim is no longer on the delivery, and the rest of the batch all the same', async () => {
  const [taken = '', kept = ''] = await claimedDeliveries(2, 'c2')
  const at = new Date().toISOString()
  expect(await recordAll([attempt(taken, 'lapsed', { status: 'succeeded', at }), attempt(kept, 'c2', { status: 'succeeded', at })])).toEqual([attempt(kept, 'c2', { status: 'succeeded', at })].map((a) => expect.objectContaining({ deliveryId: a.deliveryId })))
  expect(await stateOf(taken)).toMatchObject({ status: 'pending', claim_token: 'c2' })
  expect(await attemptRows(taken)).toEqual([])
})

it.each([
  ['the lapsed claim first', ['lapsed', 'current']],
  ['the current claim first', ['current', 'lapsed']],
])('a delivery twice in a batch (%s): only the attempt of the claim it carries is recorded', async (_, order) => {
  const [id = ''] = await claimedDeliveries(1, 'current')
  const at = new Date().toISOString()
  const recorded = await recordAll(order.map((token) => attempt(id, token ?? '', { status: token === 'current' ? 'succeeded' : 'failed', at }, token === 'current' ? 'succeeded' : 'failed')))
  expect(recorded.map((a) => a.claimToken)).toEqual(['current'])
  expect(await stateOf(id)).toMatchObject({ status: 'succeeded', claim_token: null })
  expect((await attemptRows(id)).map((row) => row.outcome)).toEqual(['succeeded'])
})

it.each([500, 501])('a batch of %i attempts (one statement holds 500) records every one', async (n) => {
  const ids = await claimedDeliveries(n, `c${n}`)
  const at = new Date().toISOString()
  expect(await recordAll(ids.map((id) => attempt(id, `c${n}`, { status: 'succeeded', at })))).toHaveLength(n)
  expect(await fresh.count(`select count(*) from deliveries where claim_token = ? or (status = 'succeeded' and id in (${ids.map(() => '?').join(',')}))`, `c${n}`, ...ids)).toBe(n)
  expect(await fresh.count(`select count(*) from delivery_attempts where delivery_id in (${ids.map(() => '?').join(',')})`, ...ids)).toBe(n)
  expect(await fresh.count('select count(*) from deliveries where claim_token = ?', `c${n}`)).toBe(0)
})
