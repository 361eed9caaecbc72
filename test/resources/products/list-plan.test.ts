import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BACKEND } from '../../backend.js'
import { startTestServer, type TestServer } from '../../helper.js'
import { planOf } from '../../helpers/query-plan.js'
import { imagesDirectory } from './fixtures.js'

/**
 * The list reads one application's products through products_app_created (app_id, created_at,
 * id), newest first without a sort, so its cost follows that application's products and the page,
 * not the table's other applications' rows.
 */

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ config: { productImagesDir: imagesDirectory() } })
})
afterAll(async () => server.close())


const APP = '00000000-0000-4000-8000-000000000001'

describe('GET /products reads through products_app_created', () => {
  it('the page: the index, newest first, no sort step', async () => {
    const page = server.app.db.selectFrom('products').selectAll().where('app_id', '=', APP).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(10).offset(0)
    const plan = await planOf(server, page)
    expect(plan).toMatch(TEST_BACKEND === 'postgres' ? /Index Scan Backward using products_app_created on products/ : /SEARCH products USING INDEX products_app_created \(app_id=\?\)/)
    expect(plan).not.toMatch(/Sort|TEMP B-TREE/)
  })

  it('the total and the filters: the index, only the application\'s rows', async () => {
    const filtered = server.app.db.selectFrom('products').where('app_id', '=', APP).where('status', '=', 'ACTIVE').where('currency', '=', 'USD')
    const count = await planOf(server, filtered.select((eb) => eb.fn.countAll<number>().as('total')))
    expect(count).toMatch(TEST_BACKEND === 'postgres' ? /(Index|Bitmap Index) Scan.* products_app_created/ : /SEARCH products USING INDEX products_app_created \(app_id=\?\)/)
    expect(count).not.toMatch(/Seq Scan on products|SCAN products\b(?! USING)/)
  })
})
