import { afterAll, expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { type Db, writeTransaction } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { sql } from 'kysely'
import { DeliveryNotifier, PostgresSignalListener } from '../../src/delivery/notifier.js'
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
    await writeTransaction(db, async () => undefined, { withCommit: () => own.signalStatements(signals) })
    await writeTransaction(db, async () => undefined, { withCommit: () => other.signalStatements(signals) })
    // Notifications arrive in commit order: once this last one is heard, the two before it were too.
    await writeTransaction(db, async () => undefined, { withCommit: () => other.signalStatements({ deliveries: false, stoppedWebhooks: ['barrier'] }) })
    await waitUntil('the last commit', () => (stopped.includes('barrier') ? true : undefined))
    expect(heard).toBe(2)
  } finally {
    await listener.close()
    await db.destroy()
  }
})

it('the NOTIFYs go with the COMMIT: sent only when it commits, payloads quoted, and a failing one undoes the change', async () => {
  const fresh = await freshDatabase()
  const db: Db = await openDatabase(parseDatabaseUrl(fresh.url, 'DATABASE_URL', 2))
  const notifier = new DeliveryNotifier()
  const stopped: string[] = []
  const listener = new PostgresSignalListener(fresh.url, { deliveriesCommitted: () => undefined, webhookStopped: (id) => void stopped.push(id) }, silent, 'another process')
  const signal = (id: string) => () => notifier.signalStatements({ deliveries: false, stoppedWebhooks: [id] })
  try {
    await sql`create table marks (id text primary key)`.execute(db)
    await listener.start()
    // Rolled back: neither the change nor its signal.
    await expect(
      writeTransaction(db, async (tx) => {
        await sql`insert into marks values ('rolled back')`.execute(tx)
        throw new Error('work failed')
      }, { withCommit: signal('rolled back') }),
    ).rejects.toThrow('work failed')
    // A statement sent with the COMMIT fails: PostgreSQL skips the COMMIT, the change is undone.
    await expect(
      writeTransaction(db, async (tx) => {
        await sql`insert into marks values ('failed signal')`.execute(tx)
      }, { withCommit: () => 'select 1 / 0' }),
    ).rejects.toThrow(/division by zero/)
    // Committed, with a payload that needs quoting, then a barrier: commit order is arrival order.
    const quoted = "it's \\ a 'payload'"
    await writeTransaction(db, async (tx) => {
      await sql`insert into marks values ('committed')`.execute(tx)
    }, { withCommit: signal(quoted) })
    await writeTransaction(db, async () => undefined, { withCommit: signal('barrier') })
    await waitUntil('the barrier', () => (stopped.includes('barrier') ? true : undefined))
    expect(stopped).toEqual([quoted, 'barrier'])
    const marks = await sql<{ id: string }>`select id from marks order by id`.execute(db)
    expect(marks.rows.map((row) => row.id)).toEqual(['committed'])
    // The pooled connection is usable afterwards, outside any transaction.
    const after = await sql<{ n: number }>`select 1 as n`.execute(db)
    expect(after.rows).toEqual([{ n: 1 }])
  } finally {
    await listener.close()
    await db.destroy()
  }
})
