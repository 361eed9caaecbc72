import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_UUID, randomEvmAddress, startTestServer, type TestServer } from '../helper.js'
import { TEST_BACKEND } from '../backend.js'
import { QUEUE_STATE } from '../../src/metrics/deliveries.js'
import { parseExposition, type Sample, sampleOf } from './exposition.js'

const WEBHOOK_ROUTE = '/api/v0/webhooks/:id'

let server: TestServer
let metricsUrl: string

async function scrape(): Promise<Sample[]> {
  const response = await fetch(metricsUrl)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return parseExposition(await response.text())
}

function requestsOf(samples: readonly Sample[], method: string, route: string, status: number): number {
  return sampleOf(samples, 'devplatform_http_requests_total', { method, route, status: String(status) })?.value ?? 0
}

async function pendingInDatabase(): Promise<number> {
  const result = await sql<{ n: number | string }>`select count(*) as n from deliveries where status = 'pending'`.execute(server.app.db)
  return Number(result.rows[0]?.n)
}

beforeAll(async () => {
  // The failed-authentication throttle per key only, so the deliberate 401s from 127.0.0.1 don't pause the address.
  server = await startTestServer({ config: { metricsPort: 0, authFailures: { perAddress: 0, perKey: 2, windowSeconds: 60 } } })
  const address = server.app.metricsAddress?.()
  if (address === undefined || address === null) throw new Error('no metrics listener')
  metricsUrl = `http://127.0.0.1:${address.port}/metrics`
})

afterAll(async () => {
  await server.close()
})

describe('GET /metrics on METRICS_PORT', () => {
  it('counts a request under its route pattern and status, with its latency', async () => {
    const key = await server.createKey()
    const created = await server.request<{ id: string }>('POST', '/api/v0/webhooks', { key, body: { name: 'w', url: 'https://example.com/h' } })
    expect(created.status).toBe(201)
    const before = await scrape()
    expect((await server.request('GET', `/api/v0/webhooks/${created.body.id}`, { key })).status).toBe(200)
    expect((await server.request('GET', `/api/v0/webhooks/${created.body.id}`, { key })).status).toBe(200)
    expect((await server.request('GET', `/api/v0/webhooks/${MISSING_UUID}`, { key })).status).toBe(404)

    const after = await scrape()
    expect(requestsOf(after, 'GET', WEBHOOK_ROUTE, 200) - requestsOf(before, 'GET', WEBHOOK_ROUTE, 200)).toBe(2)
    expect(requestsOf(after, 'GET', WEBHOOK_ROUTE, 404) - requestsOf(before, 'GET', WEBHOOK_ROUTE, 404)).toBe(1)
    expect(requestsOf(after, 'POST', '/api/v0/webhooks', 201)).toBe(1)
    // Never the raw URL.
    expect(after.some((sample) => Object.values(sample.labels).some((value) => value.includes(created.body.id)))).toBe(false)
    const count = sampleOf(after, 'devplatform_http_request_duration_seconds_count', { method: 'GET', route: WEBHOOK_ROUTE })
    expect(count?.value).toBe(3)
    const slowest = sampleOf(after, 'devplatform_http_request_duration_seconds_bucket', { method: 'GET', route: WEBHOOK_ROUTE, le: '+Inf' })
    expect(slowest?.value).toBe(3)
    // Cumulative: each bucket holds those below it; all three took under 10 s.
    const buckets = after.filter((sample) => sample.name === 'devplatform_http_request_duration_seconds_bucket' && sample.labels.route === WEBHOOK_ROUTE && sample.labels.method === 'GET')
    expect(buckets).toHaveLength(15)
    expect(buckets.map((sample) => sample.value)).toEqual([...buckets.map((sample) => sample.value)].sort((a, b) => a - b))
    expect(sampleOf(after, 'devplatform_http_request_duration_seconds_bucket', { method: 'GET', route: WEBHOOK_ROUTE, le: '10' })?.value).toBe(3)
    expect(sampleOf(after, 'devplatform_http_request_duration_seconds_sum', { method: 'GET', route: WEBHOOK_ROUTE })?.value).toBeGreaterThan(0)
  })

  it('puts every unmatched path under one route label', async () => {
    const before = await scrape()
    expect((await server.request('GET', '/nowhere/1')).status).toBe(404)
    expect((await server.request('GET', '/nowhere/2')).status).toBe(404)
    const after = await scrape()
    expect(requestsOf(after, 'GET', 'unmatched', 404) - requestsOf(before, 'GET', 'unmatched', 404)).toBe(2)
    expect(after.some((sample) => sample.labels.route?.startsWith('/nowhere') === true)).toBe(false)
  })

  it('the queue depth is the number of pending deliveries in the database; the oldest due age is a non-negative number of seconds', async () => {
    const key = await server.createKey()
    for (const name of ['a', 'b']) {
      expect((await server.request('POST', '/api/v0/webhooks', { key, body: { name, url: 'https://example.com/h' } })).status).toBe(201)
    }
    // The dispatcher is off in route tests: each customer's event leaves one pending delivery per webhook.
    for (let i = 0; i < 3; i++) {
      const customer = await server.request('POST', '/api/v0/customers', { key, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '1' } })
      expect(customer.status).toBe(201)
    }
    const pending = await pendingInDatabase()
    expect(pending).toBeGreaterThanOrEqual(6)
    const samples = await scrape()
    expect(sampleOf(samples, 'devplatform_deliveries_pending')?.value).toBe(pending)
    const age = sampleOf(samples, 'devplatform_deliveries_oldest_due_age_seconds')?.value
    expect(age).toBeGreaterThanOrEqual(0)
    expect(age).toBeLessThan(60)
    // No attempt was made: the totals are there, at 0.
    expect(sampleOf(samples, 'devplatform_webhook_attempts_total', { outcome: 'succeeded' })?.value).toBe(0)
    expect(sampleOf(samples, 'devplatform_webhook_attempts_total', { outcome: 'failed' })?.value).toBe(0)
  })

  it('counts drains in flight, the state changes and ledger entries this process committed', async () => {
    const key = await server.createKey({ environment: 'development' })
    const customer = await server.request<{ id: string }>('POST', '/api/v0/customers', { key, body: { first_name: 'Ada', last_name: 'Lovelace', phone_number: '1' } })
    const address = await server.request<{ id: string }>('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses`, {
      key,
      body: { chain: 'ethereum', currency: 'usdc', address: randomEvmAddress(), external_account_id: 'ext_1' },
    })
    expect(address.status).toBe(201)
    const before = await scrape()
    const deposit = await server.request('POST', `/api/v0/customers/${customer.body.id}/liquidation_addresses/${address.body.id}/simulate_deposit`, { key, body: { amount: '5' } })
    expect(deposit.status).toBe(201)
    const after = await scrape()
    const inFlight = await server.database.count('select count(*) as n from drains where next_step_at is not null')
    expect(sampleOf(after, 'devplatform_drains_in_flight')?.value).toBe(inFlight)
    expect(inFlight).toBeGreaterThanOrEqual(1)
    expect(sampleOf(after, 'devplatform_drains_oldest_due_age_seconds')?.value).toBeGreaterThanOrEqual(0)
    const counted = (samples: readonly Sample[], name: string, labels: Record<string, string>) => sampleOf(samples, name, labels)?.value ?? 0
    expect(counted(after, 'devplatform_drain_state_changes_total', { state: 'funds_received' }) - counted(before, 'devplatform_drain_state_changes_total', { state: 'funds_received' })).toBe(1)
    expect(counted(after, 'devplatform_ledger_entries_total', { status: 'posted' }) - counted(before, 'devplatform_ledger_entries_total', { status: 'posted' })).toBe(1)
  })

  it('counts transfers in flight and the states they entered', async () => {
    const key = await server.createKey({ environment: 'development' })
    const wallets = await server.request<{ data: { id: string; chain: string }[] }>('GET', '/api/v0/wallets', { key })
    const walletId = wallets.body.data.find((wallet) => wallet.chain === 'base')?.id ?? ''
    const before = await scrape()
    const created = await server.request<{ id: string }>('POST', '/api/v0/transfers/direct-wallet', { key, body: { walletId, network: 'base', stableCoinCurrency: 'usdc', amount: 5 } })
    expect(created.status).toBe(201)
    const arrived = await server.request('POST', `/api/v0/transfers/${created.body.id}/simulate_funds`, { key })
    expect(arrived.status).toBe(200)
    const after = await scrape()
    const inFlight = await server.database.count('select count(*) as n from transfers where next_step_at is not null')
    expect(sampleOf(after, 'devplatform_transfers_in_flight')?.value).toBe(inFlight)
    expect(sampleOf(after, 'devplatform_transfers_oldest_due_age_seconds')?.value).toBeGreaterThanOrEqual(0)
    const counted = (samples: readonly Sample[], state: string) => sampleOf(samples, 'devplatform_transfer_state_changes_total', { state })?.value ?? 0
    expect(counted(after, 'awaiting_funds') - counted(before, 'awaiting_funds')).toBe(1)
    expect(counted(after, 'funds_received') - counted(before, 'funds_received')).toBe(1)
  })

  it('can read the drains not yet ended through the partial index drains_due alone', async () => {
    // PostgreSQL prefers a sequential scan of a table this small; with it off, the plan shows the index answers alone.
    const plan =
      TEST_BACKEND === 'postgres'
        ? await server.app.db.transaction().execute(async (tx) => {
            await sql`set local enable_seqscan = off`.execute(tx)
            return (await sql<Record<string, string>>`explain ${QUEUE_STATE}`.execute(tx)).rows.map((row) => row['QUERY PLAN']).join('\n')
          })
        : (await sql<Record<string, string>>`explain query plan ${QUEUE_STATE}`.execute(server.app.db)).rows.map((row) => row.detail).join('\n')
    expect(plan).toMatch(TEST_BACKEND === 'postgres' ? /(Index Only Scan using|Bitmap Index Scan on) drains_due/ : /SEARCH drains USING COVERING INDEX drains_due/)
  })

  it('reads the queue through the partial index deliveries_queue, never the deliveries table', async () => {
    const explain = TEST_BACKEND === 'postgres' ? sql<Record<string, string>>`explain ${QUEUE_STATE}` : sql<Record<string, string>>`explain query plan ${QUEUE_STATE}`
    const plan = (await explain.execute(server.app.db)).rows.map((row) => (TEST_BACKEND === 'postgres' ? row['QUERY PLAN'] : row.detail)).join('\n')
    expect(plan).toMatch(TEST_BACKEND === 'postgres' ? /Index Only Scan using deliveries_queue on deliveries/ : /SCAN deliveries USING COVERING INDEX deliveries_queue/)
    expect(plan).not.toMatch(/Seq Scan on deliveries|SCAN deliveries\n|SCAN deliveries$/)
  })

  it("counts the authentication hook's refusals and the rate limit's", async () => {
    const before = await scrape()
    const refusals = (samples: Sample[], status: number) => sampleOf(samples, 'devplatform_auth_refusals_total', { status: String(status) })?.value ?? 0
    const rateLimited = (samples: Sample[]) => sampleOf(samples, 'devplatform_rate_limit_refusals_total')?.value ?? 0

    expect((await server.request('GET', '/api/v0/webhooks')).status).toBe(401)
    const reader = await server.createKey({ scopes: ['webhook:read'] })
    expect((await server.request('POST', '/api/v0/webhooks', { key: reader, body: { name: 'w', url: 'https://example.com/h' } })).status).toBe(403)
    const limited = await server.createKey({ rateLimit: 1 })
    expect((await server.request('GET', '/api/v0/webhooks', { key: limited })).status).toBe(200)
    expect((await server.request('GET', '/api/v0/webhooks', { key: limited })).status).toBe(429)
    // Two wrong secrets fill the key's failures: the third attempt is the throttle's 429, not the rate limit's.
    const guessed = await server.createKey()
    const wrong = { ...guessed, headers: { ...guessed.headers, 'x-client-secret': 'wrong' } }
    expect((await server.request('GET', '/api/v0/webhooks', { key: wrong })).status).toBe(401)
    expect((await server.request('GET', '/api/v0/webhooks', { key: wrong })).status).toBe(401)
    expect((await server.request('GET', '/api/v0/webhooks', { key: wrong })).status).toBe(429)
    // A 404 after authentication is no refusal.
    expect((await server.request('GET', `/api/v0/webhooks/${MISSING_UUID}`, { key: guessed })).status).toBe(404)

    const after = await scrape()
    expect(refusals(after, 401) - refusals(before, 401)).toBe(3)
    expect(refusals(after, 403) - refusals(before, 403)).toBe(1)
    expect(refusals(after, 429) - refusals(before, 429)).toBe(1)
    expect(rateLimited(after) - rateLimited(before)).toBe(1)
  })

  it('has the default process metrics, and Redis availability where Redis is configured', async () => {
    const samples = await scrape()
    expect(sampleOf(samples, 'process_cpu_user_seconds_total')?.value).toBeGreaterThan(0)
    expect(sampleOf(samples, 'nodejs_heap_size_used_bytes')?.value).toBeGreaterThan(0)
    // The PostgreSQL run uses the Redis rate limiter; the SQLite run has no Redis.
    expect(sampleOf(samples, 'devplatform_redis_available')?.value).toBe(TEST_BACKEND === 'postgres' ? 1 : undefined)
  })

  it('answers nothing else on its port, and is not served on the API port', async () => {
    const base = new URL(metricsUrl).origin
    const other = await fetch(`${base}/api/v0/health/public`)
    expect(other.status).toBe(404)
    expect(await other.json()).toEqual({ statusCode: 404, error: 'Not Found', message: 'Cannot GET /api/v0/health/public' })
    const onApiPort = await server.request('GET', '/metrics')
    expect(onApiPort.status).toBe(404)
    expect(onApiPort.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Cannot GET /metrics' })
  })
})

describe('without METRICS_PORT', () => {
  it('opens no metrics listener, and /metrics is an unknown route', async () => {
    const plain = await startTestServer()
    try {
      expect(plain.app.metricsAddress).toBeUndefined()
      const response = await plain.request('GET', '/metrics')
      expect(response.status).toBe(404)
      expect(response.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Cannot GET /metrics' })
    } finally {
      await plain.close()
    }
  })
})
