import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { dropFreshDatabases, freshDatabase, TEST_REDIS_URL } from '../backend.js'
import { cleanUp, exitWithin, launch, SERVER, waitUntil } from '../processes.js'
import { VERSION } from '../../src/version.js'
import { type DevelopmentKey, type ServerProcess } from '../helpers/server-process.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'
import { call, closedPort, createKey, kill, type Reply, startServer, stringField } from './limits-helpers.js'

/** The authenticated health body of a serving instance (timestamp: any). */
function healthy(message = 'Service is up and running') {
  return { status: 'ok', timestamp: expect.any(String), version: VERSION, database: 'connected', message, authenticated: true }
}

/**
 * Several real server processes on one PostgreSQL database and one Redis: the rate limit is one
 * exact limit across instances, an outage of Redis or PostgreSQL never turns into 500s or hangs
 * (and heals by itself), and the races that SQLite's single writer made easy stay tight.
 */

const TEST_MS = 60_000
const RATE_LIMIT = /^"hour";r=(\d+);t=(\d+)$/
const RATE_LIMIT_KEY_PREFIX = 'devplatform:ratelimit:'

const proxies = new Set<TcpProxy>()
const redisClients = new Set<Redis>()

afterAll(async () => {
  cleanUp()
  await Promise.all([...proxies].map((proxy) => proxy.close()))
  for (const client of redisClients) client.disconnect()
  await dropFreshDatabases()
})

function redisClient(): Redis {
  const client = new Redis(TEST_REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1 })
  client.on('error', () => undefined)
  redisClients.add(client)
  return client
}

async function proxyTo(host: string, port: number): Promise<TcpProxy> {
  const proxy = await TcpProxy.start(host, port)
  proxies.add(proxy)
  return proxy
}

/** The remaining count of a response's RateLimit header; fails when the header is absent or malformed. */
function remainingOf(reply: Reply): number {
  const header = reply.headers.get('ratelimit') ?? ''
  const match = header.match(RATE_LIMIT)
  if (match === null) throw new Error(`no RateLimit header in the expected format: ${JSON.stringify(header)} (status ${reply.status})`)
  return Number(match[1])
}

function secondsOf(reply: Reply): number {
  return Number((reply.headers.get('ratelimit') ?? '').match(RATE_LIMIT)?.[2] ?? NaN)
}

function countBy<T>(values: T[]): Map<T, number> {
  const counts = new Map<T, number>()
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
  return counts
}

/** `n` requests at once, round-robin over `servers`. */
function spread(servers: ServerProcess[], n: number, request: (baseUrl: string, i: number) => Promise<Reply>): Promise<Reply[]> {
  return Promise.all(
    Array.from({ length: n }, (_, i) => {
      const server = servers[i % servers.length]
      if (server === undefined) throw new Error('no server')
      return request(server.baseUrl, i)
    }),
  )
}

function devKeyOf(server: ServerProcess): DevelopmentKey {
  if (server.devKey === undefined) throw new Error('the first server printed no development key')
  return server.devKey
}

/** `url` with its host and port replaced by 127.0.0.1:`port` (database name, user and the rest kept). */
function viaPort(url: string, port: number): string {
  const parsed = new URL(url)
  parsed.hostname = '127.0.0.1'
  parsed.port = String(port)
  return parsed.toString()
}

const CUSTOMER = { first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15555550100' }

describe('several instances on one PostgreSQL + Redis', () => {
  it(
    'Rate limits stay exact across instances',
    async () => {
      const db = await freshDatabase('postgres')
      const first = await startServer({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL }, true)
      const key = devKeyOf(first)
      const others = await Promise.all([1, 2].map(() => startServer({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL }, false)))
      const servers = [first, ...others]
      try {
        const keyRows = await db.query<{ id: string }>('select id from api_keys where client_key = ?', key['x-client-key'])
        const keyId = keyRows[0]?.id
        expect(keyId).toBeDefined()
        const redisKey = RATE_LIMIT_KEY_PREFIX + String(keyId)
        const redis = redisClient()
        expect(await redis.zcard(redisKey)).toBe(0)

        const replies = await spread(servers, 300, (baseUrl) => call(baseUrl, 'GET', '/api/v0/health', { key }))
        const statuses = countBy(replies.map((reply) => reply.status))
        expect(Object.fromEntries(statuses)).toEqual({ 200: 100, 429: 200 })

        const admitted = replies.filter((reply) => reply.status === 200)
        // One shared sliding log: the 100 admissions saw remaining 99, 98, …, 0, each exactly once,
        // whichever instance served them.
        const remaining = admitted.map(remainingOf).sort((a, b) => a - b)
        expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i))
        for (const reply of admitted) {
          expect(reply.headers.get('ratelimit-policy')).toBe('"hour";q=100;w=3600')
          expect(secondsOf(reply)).toBeGreaterThanOrEqual(1)
          expect(secondsOf(reply)).toBeLessThanOrEqual(3600)
          expect(reply.body).toEqual(healthy())
        }
        for (const reply of replies.filter((r) => r.status === 429)) {
          expect(remainingOf(reply)).toBe(0)
          expect(reply.body).toEqual({
            statusCode: 429,
            error: 'Too Many Requests',
            message: 'Rate limit exceeded',
            details: expect.stringMatching(/^This API key may make 100 requests per hour; retry in \d+ seconds$/),
          })
          expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
        }

        // Every instance refuses the next one too, and the log stays bounded by the limit.
        for (const server of servers) {
          const reply = await call(server.baseUrl, 'GET', '/api/v0/health', { key })
          expect(reply.status).toBe(429)
        }
        const members = await redis.zcard(redisKey)
        expect(members).toBeLessThanOrEqual(100)
        expect(members).toBe(100)
        const ttl = await redis.pttl(redisKey)
        expect(ttl).toBeGreaterThan(0)
        expect(ttl).toBeLessThanOrEqual(3_600_000)
        await redis.del(redisKey)
      } finally {
        await Promise.all(servers.map(kill))
      }
    },
    TEST_MS,
  )

  it(
    'Redis down: fail-open to per-instance limits, never a 500',
    async () => {
      const db = await freshDatabase('postgres')
      const redisUrl = new URL(TEST_REDIS_URL)
      const proxy = await proxyTo(redisUrl.hostname, Number(redisUrl.port || 6379))
      const server = await startServer({ DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${proxy.port}` }, true)
      try {
        const devKey = devKeyOf(server)
        const small = await createKey(db.url, 'small limit', 5)
        const redis = redisClient()
        const smallRedisKey = RATE_LIMIT_KEY_PREFIX + small.id

        // Up: Redis counts.
        const up = await call(server.baseUrl, 'GET', '/api/v0/health', { key: devKey })
        expect(up.status).toBe(200)
        expect(up.body).toEqual(healthy())
        const firstSmall = await call(server.baseUrl, 'GET', '/api/v0/webhooks', { key: small })
        expect(firstSmall.status).toBe(200)
        expect(firstSmall.headers.get('ratelimit-policy')).toBe('"hour";q=5;w=3600')
        expect(remainingOf(firstSmall)).toBe(4)
        expect(await redis.zcard(smallRedisKey)).toBe(1)

        // Down: every connection to Redis is cut, and new ones are closed at once.
        proxy.setMode('refuse')
        const degraded = await call(server.baseUrl, 'GET', '/api/v0/health', { key: devKey })
        expect(degraded.ms).toBeLessThan(2_000)
        expect(degraded.status).toBe(200)
        expect(degraded.body).toEqual(healthy('Service is up and running; Redis is degraded (not answering): rate limits are counted per instance'))
        expect(degraded.headers.get('ratelimit')).toMatch(RATE_LIMIT)

        // The instance's own exact limit (5/hour) still applies, going on from the count it last saw in Redis (1).
        const fallback: Reply[] = []
        for (let i = 0; i < 7; i++) fallback.push(await call(server.baseUrl, 'GET', '/api/v0/webhooks', { key: small }))
        for (const reply of fallback) {
          expect(reply.ms).toBeLessThan(2_000)
          expect(reply.status).toBeLessThan(500)
          expect(reply.headers.get('ratelimit-policy')).toBe('"hour";q=5;w=3600')
        }
        expect(fallback.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 429, 429, 429])
        expect(fallback.map(remainingOf)).toEqual([3, 2, 1, 0, 0, 0, 0])
        expect(fallback[4]?.body).toMatchObject({ statusCode: 429, message: 'Rate limit exceeded' })
        // Nothing of it reached Redis.
        expect(await redis.zcard(smallRedisKey)).toBe(1)
        await waitUntil('the outage logged once', () => (server.stdout().includes('Redis is unavailable') ? true : undefined), 5_000)

        const writes = await call(server.baseUrl, 'POST', '/api/v0/customers', { key: devKey, body: { ...CUSTOMER, email: 'redis-down@example.com' } })
        expect(writes.ms).toBeLessThan(2_000)
        expect(writes.status).toBe(201)

        // Back: the proxy passes again; the client reconnects by itself.
        proxy.setMode('pass')
        const probes: Reply[] = []
        const healed = await waitUntil(
          'health to say redis ok',
          async () => {
            const reply = await call(server.baseUrl, 'GET', '/api/v0/health', { key: devKey })
            probes.push(reply)
            return reply.body !== null && typeof reply.body === 'object' && Reflect.get(reply.body, 'message') === 'Service is up and running' ? reply : undefined
          },
          10_000,
          250,
        )
        expect(probes.map((reply) => reply.status)).toEqual(probes.map(() => 200))
        for (const reply of probes) expect(reply.ms).toBeLessThan(2_000)
        expect(healed.body).toEqual(healthy())
        // Shared counting again: the four admissions of the outage were added to the one Redis held, so the hour is full.
        await waitUntil('the outage\'s admissions restored to Redis', async () => ((await redis.zcard(smallRedisKey)) === 5 ? true : undefined), 5_000)
        const shared = await call(server.baseUrl, 'GET', '/api/v0/webhooks', { key: small })
        expect(shared.status).toBe(429)
        expect(await redis.zcard(smallRedisKey)).toBe(5)
        await waitUntil('the recovery logged', () => (server.stdout().includes('Redis answers again') ? true : undefined), 5_000)
        expect(server.child.exitCode).toBeNull()
        await redis.del(smallRedisKey)
      } finally {
        await kill(server)
      }
    },
    TEST_MS,
  )

  it(
    'PostgreSQL unreachable: 503 with the contract\'s body, and it recovers by itself',
    async () => {
      const db = await freshDatabase('postgres')
      const target = new URL(db.url)
      const proxy = await proxyTo(target.hostname, Number(target.port || 5432))
      const server = await startServer({ DATABASE_URL: proxy.urlFor(db.url), REDIS_URL: TEST_REDIS_URL }, true)
      try {
        const key = devKeyOf(server)
        const up = await call(server.baseUrl, 'GET', '/api/v0/webhooks', { key })
        expect(up.status).toBe(200)
        expect(up.body).toEqual([])

        proxy.setMode('refuse')
        const unavailable = {
          statusCode: 503,
          error: 'Service Unavailable',
          message: 'The database is unavailable',
          details: 'Retry the request shortly',
        }
        // Twice: the pool's broken connections first, then fresh connection attempts.
        for (let round = 0; round < 2; round++) {
          const replies = await Promise.all([
            call(server.baseUrl, 'GET', '/api/v0/webhooks', { key }),
            call(server.baseUrl, 'POST', '/api/v0/customers', { key, body: { ...CUSTOMER, email: `pg-down-${round}@example.com` } }),
            call(server.baseUrl, 'GET', '/api/v0/health', { key }),
          ])
          for (const reply of replies) {
            expect(reply.ms).toBeLessThan(10_000)
            expect(reply.status).toBe(503)
            expect(reply.headers.get('retry-after')).toMatch(/^\d+$/)
          }
          expect(replies[0]?.body).toEqual(unavailable)
          expect(replies[1]?.body).toEqual(unavailable)
          // The readiness route answers in its own shape; the key could not be checked.
          expect(replies[2]?.body).toEqual({ ...healthy('The database is unavailable'), status: 'error', database: 'error', authenticated: false })
        }
        const liveness = await call(server.baseUrl, 'GET', '/api/v0/health/public')
        expect(liveness.status).toBe(200)
        expect(liveness.body).toEqual({ status: 'ok', timestamp: expect.any(String), version: VERSION })

        // Back on the same port: the pool reconnects; no restart.
        proxy.setMode('pass')
        const probes: Reply[] = []
        await waitUntil(
          'requests to succeed again',
          async () => {
            const reply = await call(server.baseUrl, 'GET', '/api/v0/webhooks', { key })
            probes.push(reply)
            return reply.status === 200 ? reply : undefined
          },
          10_000,
          250,
        )
        // Until then only 503s, never a 500.
        expect(probes.slice(0, -1).map((reply) => reply.status)).toEqual(probes.slice(0, -1).map(() => 503))
        const created = await call(server.baseUrl, 'POST', '/api/v0/customers', { key, body: { ...CUSTOMER, email: 'pg-back@example.com' } })
        expect(created.status).toBe(201)
        const health = await call(server.baseUrl, 'GET', '/api/v0/health', { key })
        expect(health.status).toBe(200)
        expect(health.body).toEqual(healthy())
        expect(server.child.exitCode).toBeNull()
        // Nothing written while the database was away.
        expect(await db.count("select count(*) from customers where email like 'pg-down-%'")).toBe(0)
      } finally {
        await kill(server)
      }

      // Unreachable at start: exit 1 within 10 s, with one line naming the variable.
      const noDatabase = launch(SERVER, [], {
        PORT: '0',
        HOST: '127.0.0.1',
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        WEBHOOK_DISPATCHER: 'off',
        DATABASE_URL: viaPort(db.url, await closedPort()),
        REDIS_URL: TEST_REDIS_URL,
      })
      expect(await exitWithin(noDatabase, 10_000)).toEqual({ code: 1, signal: null })
      const dbLines = noDatabase.stderr().trimEnd().split('\n')
      expect(dbLines).toHaveLength(1)
      expect(dbLines[0]).toMatch(/^devplatform: .*DATABASE_URL/)

      const noRedis = launch(SERVER, [], {
        PORT: '0',
        HOST: '127.0.0.1',
        NODE_ENV: 'development',
        LOG_LEVEL: 'info',
        WEBHOOK_DISPATCHER: 'off',
        DATABASE_URL: db.url,
        REDIS_URL: `redis://127.0.0.1:${await closedPort()}`,
      })
      expect(await exitWithin(noRedis, 10_000)).toEqual({ code: 1, signal: null })
      const redisLines = noRedis.stderr().trimEnd().split('\n')
      expect(redisLines).toHaveLength(1)
      expect(redisLines[0]).toMatch(/^devplatform: .*REDIS_URL/)
    },
    TEST_MS,
  )

  it(
    'Concurrency on PostgreSQL is as tight as on SQLite',
    async () => {
      const db = await freshDatabase('postgres')
      const first = await startServer({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL }, true)
      const others = await Promise.all([1, 2].map(() => startServer({ DATABASE_URL: db.url, REDIS_URL: TEST_REDIS_URL }, false)))
      const servers = [first, ...others]
      try {
        // A development key: a live liquidation address (c) takes only a receiving address of the platform (docs/chains.md).
        const key = await createKey(db.url, 'races', 1_000_000, 'development')

        // (a) 30 deletes of one webhook: one 200, the rest 404.
        const webhook = await call(first.baseUrl, 'POST', '/api/v0/webhooks', { key, body: { name: 'race', url: 'https://example.com/hook' } })
        expect(webhook.status).toBe(201)
        const webhookId = stringField(webhook.body, 'id')
        const deletes = await spread(servers, 30, (baseUrl) => call(baseUrl, 'DELETE', `/api/v0/webhooks/${webhookId}`, { key }))
        expect(Object.fromEntries(countBy(deletes.map((reply) => reply.status)))).toEqual({ 200: 1, 404: 29 })
        expect(deletes.find((reply) => reply.status === 200)?.body).toMatchObject({ id: webhookId })
        for (const reply of deletes.filter((r) => r.status === 404)) {
          expect(reply.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'Webhook not found' })
        }
        expect(await db.count('select count(*) from webhooks where id = ? and deleted_at is not null', webhookId)).toBe(1)

        // (b) 30 creations with one email in different cases: one 201, the rest 409.
        const emails = ['Dup@Example.com', 'dup@example.com', 'DUP@EXAMPLE.COM']
        const customers = await spread(servers, 30, (baseUrl, i) =>
          call(baseUrl, 'POST', '/api/v0/customers', { key, body: { ...CUSTOMER, email: emails[i % emails.length] } }),
        )
        expect(Object.fromEntries(countBy(customers.map((reply) => reply.status)))).toEqual({ 201: 1, 409: 29 })
        for (const reply of customers.filter((r) => r.status === 409)) {
          expect(reply.body).toEqual({ statusCode: 409, error: 'Conflict', message: 'Customer with this email already exists' })
        }
        expect(await db.count("select count(*) from customers where lower(email) = 'dup@example.com'")).toBe(1)
        // The losers' transactions left no event behind.
        expect(await db.count("select count(*) from events where type = 'customer.created'")).toBe(1)

        // (c) 30 liquidation addresses with one (chain, address), in two cases: one 201, the rest 409.
        const owner = await call(first.baseUrl, 'POST', '/api/v0/customers', { key, body: { ...CUSTOMER, email: 'owner@example.com' } })
        expect(owner.status).toBe(201)
        const customerId = stringField(owner.body, 'id')
        const hex = Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => b.toString(16).padStart(2, '0')).join('')
        const addresses = [`0x${hex}`, `0x${hex.toUpperCase()}`]
        const liquidation = await spread(servers, 30, (baseUrl, i) =>
          call(baseUrl, 'POST', `/api/v0/customers/${customerId}/liquidation_addresses`, {
            key,
            body: { chain: 'ethereum', currency: 'usdc', address: addresses[i % addresses.length], external_account_id: 'ext_acct_1' },
          }),
        )
        expect(Object.fromEntries(countBy(liquidation.map((reply) => reply.status)))).toEqual({ 201: 1, 409: 29 })
        for (const reply of liquidation.filter((r) => r.status === 409)) {
          expect(reply.body).toEqual({ statusCode: 409, error: 'Conflict', message: 'Liquidation address already exists' })
        }
        expect(await db.count('select count(*) from liquidation_addresses where customer_id = ?', customerId)).toBe(1)
        expect(await db.count("select count(*) from events where type = 'liquidation_address.created'")).toBe(1)
      } finally {
        await Promise.all(servers.map(kill))
      }
    },
    TEST_MS,
  )
})
