import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestServer, type TestServer } from '../helper.js'
import { address, call, expectThrottled } from '../auth/failure-helpers.js'

// PostgreSQL + Redis run only (test/multi-instance/): two servers count failed authentications in one Redis.
describe('failed authentication with Redis: two instances share the counts', () => {
  let first: TestServer
  let second: TestServer
  beforeAll(async () => {
    const config = { authFailures: { perAddress: 20, perKey: 20, windowSeconds: 60 } }
    first = await startTestServer({ config })
    second = await startTestServer({ config })
  })
  afterAll(async () => Promise.all([first.close(), second.close()]))

  it('10 failures at each instance from one address fill its 20; the next is 429 at both', async () => {
    const from = address()
    for (let i = 0; i < 10; i++) {
      expect((await call(first, from, `pk_live_${randomBytes(8).toString('hex')}`, 'sk_live_guess')).status).toBe(401)
      expect((await call(second, from, `pk_live_${randomBytes(8).toString('hex')}`, 'sk_live_guess')).status).toBe(401)
    }
    expectThrottled(await call(first, from, 'pk_live_any', 'sk_live_guess'))
    expectThrottled(await call(second, from, 'pk_live_any', 'sk_live_guess'))
  })
})

