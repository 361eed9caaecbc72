import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BACKEND } from '../../backend.js'
import { startTestServer, type TestServer } from '../../helper.js'
import { planOf } from '../../helpers/query-plan.js'

/**
 * The lists of transfers and payment intents read one application's rows of one environment
 * through transfers_app_created (app_id, environment, created_at, id), or one wallet's through
 * transfers_wallet (app_id, wallet_id, created_at, id), newest first without a sort, so their cost
 * follows that application's transfers and the page, not the other applications' rows.
 */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(async () => server.close())


const APP = '00000000-0000-4000-8000-000000000001'
const WALLET = '00000000-0000-4000-8000-000000000002'
const owned = () => server.app.db.selectFrom('transfers').selectAll().where('app_id', '=', APP).where('environment', '=', 'sandbox').where('kind', 'in', ['direct_bank', 'direct_wallet'])
const newestFirst = <Q extends { orderBy: (column: 'created_at' | 'id', direction: 'desc') => Q }>(query: Q) => query.orderBy('created_at', 'desc').orderBy('id', 'desc')

describe('GET /transfers and /payment-intents read through their indexes', () => {
  it('the page: transfers_app_created, newest first, no sort step', async () => {
    const plan = await planOf(server, newestFirst(owned()).limit(10).offset(0))
    expect(plan).toMatch(TEST_BACKEND === 'postgres' ? /Index Scan Backward using transfers_app_created on transfers/ : /SEARCH transfers USING INDEX transfers_app_created \(app_id=\? AND environment=\?\)/)
    expect(plan).not.toMatch(/Sort|TEMP B-TREE/)
  })

  it("one wallet's page: transfers_wallet, no sort step", async () => {
    const plan = await planOf(server, newestFirst(owned().where('wallet_id', '=', WALLET)).limit(10).offset(0))
    expect(plan).toMatch(TEST_BACKEND === 'postgres' ? /Index Scan Backward using transfers_wallet on transfers/ : /SEARCH transfers USING INDEX transfers_wallet \(app_id=\? AND wallet_id=\?\)/)
    expect(plan).not.toMatch(/Sort|TEMP B-TREE/)
  })
})
