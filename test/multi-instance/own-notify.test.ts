import { afterAll, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db, openDatabase } from '../../src/db/database.js'
import { DeliveryNotifier, PostgresSignalListener } from '../../src/webhooks/notifier.js'
import { dropFreshDatabases, freshDatabase } from '../backend.js'
import { waitUntil } from '../processes.js'

// PostgreSQL only (this folder runs on the PostgreSQL + Redis half).
const silent = { error: () => undefined, warn: () => undefined, info: () => undefined }
afterAll(async () => {
  await dropFreshDatabases()
})

it("a process's LISTEN ignores its own commits' NOTIFY (its dispatcher was told directly) and hears other processes'", async () => {
  const fresh = await freshDatabase()
  const db: Db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 2))
  const own = new DeliveryNotifier()
  const other = new DeliveryNotifier()
  let heard = 0
  const stopped: string[] = []
  const listener = new PostgresSignalListener(fresh.url, { deliveriesCommitted: () => void heard++, webhookStopped: (id) => void stopped.push(id) }, silent, own.origin)
  try {
    await listener.start()
    await waitUntil('the first look after connecting', () => (heard === 1 ? true : undefined))
    const signals = { deliveries: true, stoppedWebhooks: [] }
    await db.transaction().execute((tx) => own.publishInTransaction(tx, signals))
    await db.transaction().execute((tx) => other.publishInTransaction(tx, signals))
    // Notifications arrive in commit order: once this last one is heard, the two before it were too.
    await db.transaction().execute((tx) => other.publishInTransaction(tx, { deliveries: false, stoppedWebhooks: ['barrier'] }))
    await waitUntil('the last commit', () => (stopped.includes('barrier') ? true : undefined))
    expect(heard).toBe(2)
  } finally {
    await listener.close()
    await db.destroy()
  }
})
