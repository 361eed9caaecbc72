import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Db } from '../../src/db/database.js'
import { CANCEL_PENDING } from '../../src/events/deliveries-repository.js'
import { openPlanDatabase, queryPlanOf } from './plan.js'

// A deletion cancels its webhook's pending deliveries through deliveries_queue, named (INDEXED
// BY): with ANALYZE's statistics SQLite chose deliveries_webhook_id_created_at, which holds every
// delivery the webhook ever had.

let db: Db
beforeAll(async () => {
  db = await openPlanDatabase('cancel-plan-')
  // Statistics as bench/query-plans.ts's 1,000,000 rows gave them: a webhook's deliveries look few
  // through (webhook_id, created_at), its pending ones many through the queue.
  await sql`analyze`.execute(db)
  await sql`delete from sqlite_stat1 where tbl = 'deliveries'`.execute(db)
  await sql`insert into sqlite_stat1 (tbl, idx, stat) values ('deliveries', 'deliveries_webhook_id_created_at', '1000000 2 1'), ('deliveries', 'deliveries_queue', '1000000 500000 1'), ('deliveries', 'deliveries', '1000000')`.execute(db)
  await sql`analyze sqlite_schema`.execute(db)
})
afterAll(async () => {
  await db.destroy()
})

it('the cancel of a webhook’s pending deliveries reads deliveries_queue', async () => {
  for (const cancel of [CANCEL_PENDING.skip, CANCEL_PENDING.wait]) {
    const statement = cancel.compiledOn(db)
    const plan = await queryPlanOf(db, { sql: statement.sql, parameters: statement.parameters.map(() => 'x') })
    expect(plan).toMatch(/SEARCH deliveries USING INDEX deliveries_queue \(webhook_id=\?\)/)
  }
})
