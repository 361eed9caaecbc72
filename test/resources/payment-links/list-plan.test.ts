import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BACKEND } from '../../backend.js'
import { startTestServer, type TestServer } from '../../helper.js'
import { planOf } from '../../helpers/query-plan.js'

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


const APP = '00000000-0000-4000-8000-000000000001'
const owned = () => server.app.db.selectFrom('payment_links').where('app_id', '=', APP)

describe('GET /payment-links reads through its index', () => {
  it('the page, filtered or not: payment_links_app_created, newest first, no sort step', async () => {
    for (const query of [owned(), owned().where('link_type', '=', 'DONATION').where('currency', '=', 'usdc')]) {
      const plan = await planOf(server, query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(10).offset(0))
      expect(plan).toMatch(TEST_BACKEND === 'postgres' ? /Index Scan Backward using payment_links_app_created on payment_links/ : /SEARCH payment_links USING INDEX payment_links_app_created \(app_id=\?\)/)
      expect(plan).not.toMatch(/Sort|TEMP B-TREE/)
    }
  })

  it("the total: an index, only the application's rows", async () => {
    const count = await planOf(server, owned().select((eb) => eb.fn.countAll<number>().as('total')))
    expect(count).toMatch(TEST_BACKEND === 'postgres' ? /(Index|Bitmap Index|Index Only) Scan.* payment_links_app_/ : /SEARCH payment_links USING (COVERING )?INDEX payment_links_app_\w+ \(app_id=\?\)/)
    expect(count).not.toMatch(/Seq Scan on payment_links|SCAN payment_links\b(?! USING)/)
  })
})
