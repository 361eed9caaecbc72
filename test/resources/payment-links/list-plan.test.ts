import { type Compilable, CompiledQuery, sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BACKEND } from '../../backend.js'
import { startTestServer, type TestServer } from '../../helper.js'

/**
 * The list of payment links reads one application's links through payment_links_app_created
 * (app_id, created_at, id), newest first without a sort, so its cost follows that application's
 * links and the page, not the other applications' rows; its total counts only the application's.
 */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())

async function planOf(query: Compilable): Promise<string> {
  const { sql: text, parameters } = query.compile()
  const lines = (rows: Array<Record<string, string>>) => rows.map((row) => row['QUERY PLAN'] ?? row.detail).join('\n')
  if (TEST_BACKEND === 'sqlite') return lines((await server.app.db.executeQuery<Record<string, string>>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]))).rows)
  return server.app.db.transaction().execute(async (tx) => {
    // PostgreSQL scans a table this small whole by choice; with that off, the plan shows the index serves the query.
    await sql`set local enable_seqscan = off`.execute(tx)
    return lines((await tx.executeQuery<Record<string, string>>(CompiledQuery.raw(`explain ${text}`, [...parameters]))).rows)
  })
}

const APP = '00000000-0000-4000-8000-000000000001'
const owned = () => server.app.db.selectFrom('payment_links').where('app_id', '=', APP)

describe('GET /payment-links reads through its index', () => {
  it('the page, filtered or not: payment_links_app_created, newest first, no sort step', async () => {
    for (const query of [owned(), owned().where('link_type', '=', 'DONATION').where('currency', '=', 'usdc')]) {
      const plan = await planOf(query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(10).offset(0))
      expect(plan).toMatch(TEST_BACKEND === 'postgres' ? /Index Scan Backward using payment_links_app_created on payment_links/ : /SEARCH payment_links USING INDEX payment_links_app_created \(app_id=\?\)/)
      expect(plan).not.toMatch(/Sort|TEMP B-TREE/)
    }
  })

  it("the total: an index, only the application's rows", async () => {
    const count = await planOf(owned().select((eb) => eb.fn.countAll<number>().as('total')))
    expect(count).toMatch(TEST_BACKEND === 'postgres' ? /(Index|Bitmap Index|Index Only) Scan.* payment_links_app_/ : /SEARCH payment_links USING (COVERING )?INDEX payment_links_app_\w+ \(app_id=\?\)/)
    expect(count).not.toMatch(/Seq Scan on payment_links|SCAN payment_links\b(?! USING)/)
  })
})
