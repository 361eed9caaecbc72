import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type Config, loadConfig, parseDatabaseUrl } from '../../src/config.js'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { AppsRepository } from '../../src/apps/repository.js'
import { EventsRepository } from '../../src/events/events-repository.js'
import { WebhooksRepository } from '../../src/resources/webhooks/repository.js'
import { runUnitOfWork } from '../../src/db/unit-of-work.js'
import { createDispatcher, type Dispatcher } from '../../src/delivery/dispatcher.js'
import { DeliveryNotifier } from '../../src/delivery/notifier.js'
import { dropFreshDatabases, type FreshDatabase, freshDatabase } from '../backend.js'
import { waitUntil } from '../processes.js'
import { type Receiver, startReceiver } from '../receiver.js'

const silent = { error: () => undefined, warn: () => undefined, info: () => undefined }

let receiver: Receiver
beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
  await dropFreshDatabases()
})

interface Setup {
  fresh: FreshDatabase
  db: Db
  /** a second connection pool, to look at the database from outside the dispatcher's transaction */
  observer: Db
  notifier: DeliveryNotifier
  config: Config
  appId: string
  webhookId: string
  emit: () => Promise<string>
}

const opened: Db[] = []
const dispatchers: Dispatcher[] = []
afterEach(async () => {
  for (const dispatcher of dispatchers.splice(0)) await dispatcher.stop(0)
  for (const db of opened.splice(0)) await db.destroy()
})

/** A database with one application, one webhook to the receiver, and a way to emit events to it. */
async function setUp(path: string): Promise<Setup> {
  const fresh = await freshDatabase()
  const config: Config = { ...loadConfig({ NODE_ENV: 'test' }), database: parseDatabaseUrl(fresh.url, 'DATABASE_URL', 3) }
  config.webhooks = { ...config.webhooks, timeoutMs: 2_000, pollIntervalMs: 20 }
  const db = await openDatabase(config.database)
  const observer = await openDatabase(config.database)
  opened.push(db, observer)
  const app = await new AppsRepository(db).createApp('claims')
  const webhook = await new WebhooksRepository(db).create(app.id, { name: 'hook', url: receiver.url(path), isActive: true, encrypted: false, signingSecret: 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=' })
  const notifier = new DeliveryNotifier()
  const emit = () => runUnitOfWork(db, notifier, (unit) => new EventsRepository(unit.tx, unit).emit(app.id, 'tax.created', { n: 1 }))
  return { fresh, db, observer, notifier, config, appId: app.id, webhookId: webhook.id, emit }
}

describe('the claim: attempts are registered before their claim commits', () => {
  it('inside the claim transaction the attempt is already in flight, while another connection still sees the delivery unclaimed', async () => {
    const setup = await setUp('/registered')
    const eventId = await setup.emit()
    const seen: { started: number; inFlight: number; claimedOutside: number }[] = []
    const dispatcher: Dispatcher = createDispatcher(setup.config, setup.db, setup.notifier, silent, {
      beforeClaimCommit: async (started) => {
        const inFlight = dispatcher.inFlightCount
        const claimedOutside = await setup.fresh.count('select count(*) as n from deliveries where claim_token is not null')
        seen.push({ started, inFlight, claimedOutside })
      },
    })
    dispatchers.push(dispatcher)
    setup.notifier.attach(dispatcher)
    dispatcher.start()
    const [arrival] = await receiver.waitFor(1, { path: '/registered' })
    expect(arrival?.headers['webhook-id']).toBe(eventId)
    await waitUntil('the claim transaction to reach its commit', () => seen[0])
    expect(seen[0]).toEqual({ started: 1, inFlight: 1, claimedOutside: 0 })
    await waitUntil('the outcome to be written', async () => ((await setup.fresh.count("select count(*) as n from deliveries where status = 'succeeded'")) === 1 ? true : undefined))
  })

  it('a claim that fails to commit aborts the attempts it started and records nothing under it; the delivery is claimed again and recorded once', async () => {
    const setup = await setUp('/claim-fails')
    await setup.emit()
    let failures = 0
    const dispatcher = createDispatcher(setup.config, setup.db, setup.notifier, silent, {
      beforeClaimCommit: async (started) => {
        if (started > 0 && failures === 0) {
          failures++
          throw new Error('injected: the claim does not commit')
        }
      },
    })
    dispatchers.push(dispatcher)
    setup.notifier.attach(dispatcher)
    dispatcher.start()
    await waitUntil('the delivery to succeed', async () => ((await setup.fresh.count("select count(*) as n from deliveries where status = 'succeeded'")) === 1 ? true : undefined))
    expect(failures).toBe(1)
    const attempts = await setup.fresh.query<{ attempt: number; outcome: string }>('select attempt, outcome from delivery_attempts where webhook_id = ?', setup.webhookId)
    expect(attempts).toEqual([{ attempt: 1, outcome: 'succeeded' }])
    const webhook = await setup.fresh.query<{ successful_deliveries: number; failed_deliveries: number }>(
      'select successful_deliveries, failed_deliveries from webhooks where id = ?',
      setup.webhookId,
    )
    expect(webhook).toEqual([{ successful_deliveries: 1, failed_deliveries: 0 }])
  })

  it('an outcome whose claim was taken over (lease lapsed, new token) is not recorded', async () => {
    const setup = await setUp('/taken-over')
    await setup.emit()
    const dispatcher = createDispatcher(setup.config, setup.db, setup.notifier, silent, {
      // Another dispatcher takes the delivery over just after this claim commits.
      beforeClaimCommit: async () => undefined,
    })
    receiver.setAnswer((arrival) => (arrival.path === '/taken-over' ? 'hang' : { status: 200 }))
    try {
      dispatchers.push(dispatcher)
      setup.notifier.attach(dispatcher)
      dispatcher.start()
      await receiver.waitFor(1, { path: '/taken-over' })
      await setup.observer.updateTable('deliveries').set({ claim_token: 'someone-else' }).execute()
      receiver.setAnswer(() => ({ status: 200 }))
      await dispatcher.stop(0)
      expect(await setup.fresh.count('select count(*) as n from delivery_attempts')).toBe(0)
      expect(await setup.fresh.query('select status, claim_token from deliveries')).toEqual([{ status: 'pending', claim_token: 'someone-else' }])
    } finally {
      receiver.setAnswer(() => ({ status: 200 }))
    }
  })
})

describe('the claim reads the waiting webhooks a window at a time', () => {
  it('with windows of 2, one claim goes on past windows with nothing due until it has seen every waiting webhook, and takes the due deliveries of the first and the last', async () => {
    const setup = await setUp('/windows')
    const later: string[] = []
    for (let i = 0; i < 6; i++) {
      const webhook = await new WebhooksRepository(setup.db).create(setup.appId, { name: `w${i}`, url: receiver.url('/windows'), isActive: true, encrypted: false, signingSecret: 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3Q=' })
      later.push(webhook.id)
    }
    await setup.emit()
    // webhooks 2 to 6 (of 7, in webhook order) wait an hour: only the first and the last are due
    const waiting = later.slice(0, 5)
    await setup.db.updateTable('deliveries').set({ next_attempt_at: new Date(Date.now() + 3_600_000).toISOString() }).where('webhook_id', 'in', waiting).execute()
    const claims: number[] = []
    const dispatcher = createDispatcher(setup.config, setup.db, setup.notifier, silent, { queueWindow: 2, beforeClaimCommit: async (started) => void claims.push(started) })
    dispatchers.push(dispatcher)
    dispatcher.start()
    const arrivals = await receiver.waitFor(2, { path: '/windows' })
    expect(arrivals).toHaveLength(2)
    expect(claims[0]).toBe(2)
  })
})
