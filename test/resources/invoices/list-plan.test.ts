import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BACKEND } from '../../backend.js'
import { startTestServer, type TestServer } from '../../helper.js'
import { planOf } from '../../helpers/query-plan.js'

/**
 * The list reads one application's invoices through invoices_app_created (app_id, created_at, id),
 * or one customer's through invoices_app_customer (app_id, customer_id, created_at, id), newest
 * first without a sort, so its cost follows that application's invoices and the page, not the
 * table's other rows.
 */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())


const APP = '00000000-0000-4000-8000-000000000001'
const CUSTOMER = '00000000-0000-4000-8000-000000000002'
const page = () => server.app.db.selectFrom('invoices').selectAll().where('app_id', '=', APP)
const newestFirst = <Q extends { orderBy: (column: 'created_at' | 'id', direction: 'desc') => Q }>(query: Q) => query.orderBy('created_at', 'desc').orderBy('id', 'desc')

describe('GET /invoices reads through its indexes', () => {
  it('the page: invoices_app_created, newest first, no sort step', async () => {
    const plan = await planOf(server, newestFirst(page()).limit(10).offset(0))
    expect(plan).toMatch(TEST_BACKEND === 'postgres' ? /Index Scan Backward using invoices_app_created on invoices/ : /SEARCH invoices USING INDEX invoices_app_created \(app_id=\?\)/)
    expect(plan).not.toMatch(/Sort|TEMP B-TREE/)
  })

  it("one customer's page: invoices_app_customer, no sort step", async () => {
    const plan = await planOf(server, newestFirst(page().where('customer_id', '=', CUSTOMER)).limit(10).offset(0))
    expect(plan).toMatch(TEST_BACKEND === 'postgres' ? /Index Scan Backward using invoices_app_customer on invoices/ : /SEARCH invoices USING INDEX invoices_app_customer \(app_id=\? AND customer_id=\?\)/)
    expect(plan).not.toMatch(/Sort|TEMP B-TREE/)
  })

  it("the total with the status filter: an index, only the application's rows", async () => {
    const count = await planOf(server, server.app.db.selectFrom('invoices').where('app_id', '=', APP).where('status', '=', 'OPEN').select((eb) => eb.fn.countAll<number>().as('total')))
    expect(count).toMatch(TEST_BACKEND === 'postgres' ? /(Index|Bitmap Index) Scan.* invoices_app_/ : /SEARCH invoices USING INDEX invoices_app_\w+ \(app_id=\?\)/)
    expect(count).not.toMatch(/Seq Scan on invoices|SCAN invoices\b(?! USING)/)
  })
})
