import type { CompiledQuery, KyselyPlugin } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Db } from '../../src/db/database.js'
import { DeliveryLogRepository } from '../../src/resources/webhooks/delivery-log-repository.js'
import { openPlanDatabase, queryPlanOf } from './plan.js'

// SQLite uses a partial index only when the statement's WHERE names the index's own condition: the
// log filtered by an ended status says `status <> 'pending'` so that it reads
// deliveries_webhook_ended in its order, never every delivery of that status sorted.

let db: Db
beforeAll(async () => {
  db = await openPlanDatabase('delivery-log-plan-')
})
afterAll(async () => {
  await db.destroy()
})

/** The statements a call runs, compiled as they are sent. */
async function statementsOf(call: (recording: Db) => Promise<unknown>): Promise<CompiledQuery[]> {
  const statements: CompiledQuery[] = []
  const recorder: KyselyPlugin = {
    transformQuery: (args) => {
      statements.push(db.getExecutor().compileQuery(args.node, args.queryId))
      return args.node
    },
    transformResult: async (args) => args.result,
  }
  await call(db.withPlugin(recorder))
  return statements
}

function planOf(statement: CompiledQuery): Promise<string> {
  return queryPlanOf(db, statement)
}

describe("the owner's delivery log on SQLite", () => {
  for (const status of ['succeeded', 'failed', 'canceled'] as const) {
    it(`filtered by ${status}: deliveries_webhook_ended, in the log's order (no sort)`, async () => {
      const [page] = await statementsOf((recording) => new DeliveryLogRepository(recording).forOwner('app', 'hook', { status, skip: 0, take: 10 }))
      if (page === undefined) throw new Error('no statement ran')
      const plan = await planOf(page)
      expect(plan).toMatch(/SEARCH d USING INDEX deliveries_webhook_ended \(webhook_id=\? AND status=\?\)/)
      expect(plan).not.toMatch(/TEMP B-TREE/)
    })
  }

  it('filtered by pending: the queue of pending deliveries', async () => {
    const [page] = await statementsOf((recording) => new DeliveryLogRepository(recording).forOwner('app', 'hook', { status: 'pending', skip: 0, take: 10 }))
    if (page === undefined) throw new Error('no statement ran')
    expect(await planOf(page)).toMatch(/SEARCH d USING INDEX (deliveries_queue|deliveries_webhook_id_created_at) \(webhook_id=\?\)/)
  })
})
