import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { outcomeRetryDelay } from '../../src/delivery/outcome-writer.js'
import { TEST_BACKEND } from '../backend.js'
import { startTestServer, type TestKey, type TestServer } from '../helper.js'
import { waitUntil } from '../processes.js'
import { type Receiver, startReceiver } from '../receiver.js'

const FAILED = 'recording attempt outcomes failed'
const RECOVERED = 'recording attempt outcomes works again'

describe('outcomeRetryDelay', () => {
  it('starts at 250 ms and doubles up to 30 s', () => {
    const delays: number[] = []
    let delay = 0
    for (let i = 0; i < 10; i++) {
      delay = outcomeRetryDelay(delay)
      delays.push(delay)
    }
    expect(delays).toEqual([250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000])
  })
})

describe('a storage fault while recording outcomes', () => {
  let receiver: Receiver
  let server: TestServer
  let key: TestKey
  beforeAll(async () => {
    receiver = await startReceiver()
    // A lease (2 × timeout + 1 s = 11 s) longer than the fault, so the delivery is not claimed again meanwhile.
    server = await startTestServer({ webhooks: { dispatcher: true, timeoutMs: 5000, pollIntervalMs: 20 } })
    key = await server.createKey()
  })
  afterAll(async () => {
    await server.close()
    await receiver.close()
  })

  /** Every write of an attempt row fails, as on a full disk, until the returned function is called. */
  async function refuseAttemptRows(): Promise<() => Promise<void>> {
    if (TEST_BACKEND === 'postgres') {
      await sql.raw(`create or replace function refuse_attempt() returns trigger language plpgsql as $$ begin raise exception 'injected fault'; end $$`).execute(server.app.db)
      await sql`create trigger refuse_attempt before insert on delivery_attempts for each row execute function refuse_attempt()`.execute(server.app.db)
    } else {
      await sql`create trigger refuse_attempt before insert on delivery_attempts begin select raise(abort, 'injected fault'); end`.execute(server.app.db)
    }
    return async () => {
      await sql`drop trigger refuse_attempt${sql.raw(TEST_BACKEND === 'postgres' ? ' on delivery_attempts' : '')}`.execute(server.app.db)
    }
  }

  const lines = (text: string) => server.logs().split('\n').filter((line) => line.includes(text))

  it('retries with a growing delay, logs the incident once and its end once, and records the outcome after', async () => {
    const webhook = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'w', url: receiver.url('/fault') } })
    expect(webhook.status).toBe(201)
    await waitUntil('the webhook.created outcome recorded', async () => {
      const rows = await server.app.db.selectFrom('delivery_attempts').select('id').where('webhook_id', '=', webhook.body.id).execute()
      return rows.length === 1 ? true : undefined
    })
    const allow = await refuseAttemptRows()
    try {
      expect((await server.request('POST', '/api/v0/taxes', { key, body: { name: 'VAT', percentage: 20 } })).status).toBe(201)
      await receiver.waitFor(2, { path: '/fault' })
      // Retries at +250, +750, +1750 ms: at least three failed writes within 2 s, one log line.
      await new Promise((resolve) => setTimeout(resolve, 2000))
      expect(lines(FAILED)).toHaveLength(1)
      expect(lines(RECOVERED)).toHaveLength(0)
    } finally {
      await allow()
    }
    await waitUntil(
      'the outcome recorded once writes work',
      async () => {
        const rows = await server.app.db.selectFrom('delivery_attempts').select('outcome').where('webhook_id', '=', webhook.body.id).execute()
        return rows.length === 2 ? rows : undefined
      },
      10_000,
    )
    const recovered = lines(RECOVERED)
    expect(recovered).toHaveLength(1)
    expect((JSON.parse(recovered[0] ?? '{}') as { failures: number }).failures).toBeGreaterThanOrEqual(3)
    // The outcome was written again, not the delivery sent again.
    expect(receiver.arrivals.filter((a) => a.path === '/fault')).toHaveLength(2)
    const stats = await server.request<{ delivery_stats: { successful_deliveries: number } }>('GET', `/api/v0/webhooks/${webhook.body.id}`, { key })
    expect(stats.body.delivery_stats.successful_deliveries).toBe(2)
  })
})
