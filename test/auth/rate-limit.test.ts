import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HOUR_MS, MemoryRateLimiter } from '../../src/auth/rate-limiter.js'
import { startTestServer, type TestServer } from '../helper.js'

describe('MemoryRateLimiter (rolling window, injectable clock)', () => {
  it('admits exactly the limit, then refuses until the oldest admission leaves the window', () => {
    let now = 1_000_000
    const limiter = new MemoryRateLimiter({ now: () => now })
    for (let i = 0; i < 100; i++) {
      const decision = limiter.consumeSync('k', 100)
      expect(decision.allowed).toBe(true)
      expect(decision.remaining).toBe(99 - i)
      now += 1000 // one per second
    }
    const refused = limiter.consumeSync('k', 100)
    expect(refused).toMatchObject({ allowed: false, remaining: 0 })
    // The first admission was at 1_000_000; it leaves the window at 1_000_000 + 1 h.
    now = 1_000_000 + HOUR_MS - 1
    expect(limiter.consumeSync('k', 100).allowed).toBe(false)
    now = 1_000_000 + HOUR_MS
    expect(limiter.consumeSync('k', 100).allowed).toBe(true)
    expect(limiter.consumeSync('k', 100).allowed).toBe(false) // the second admission is still inside
  })

  it('does not let twice the limit through at a window edge (unlike a fixed window)', () => {
    let now = 0
    const limiter = new MemoryRateLimiter({ now: () => now })
    now = HOUR_MS - 1000 // late in the first hour: use the whole quota
    for (let i = 0; i < 100; i++) expect(limiter.consumeSync('k', 100).allowed).toBe(true)
    now = HOUR_MS + 1000 // just after a fixed window would have reset
    expect(limiter.consumeSync('k', 100).allowed).toBe(false)
  })

  it('never admits more than the limit in any 60-minute interval under random traffic', () => {
    let now = 0
    const limiter = new MemoryRateLimiter({ now: () => now })
    const admitted: number[] = []
    let seed = 42
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    for (let i = 0; i < 5000; i++) {
      now += Math.floor(random() * 4000)
      if (limiter.consumeSync('k', 50).allowed) admitted.push(now)
    }
    for (let i = 0; i + 50 < admitted.length; i++) {
      // the 51st admission after any admission is at least one hour later
      expect((admitted[i + 50] ?? 0) - (admitted[i] ?? 0)).toBeGreaterThanOrEqual(HOUR_MS)
    }
    expect(admitted.length).toBeGreaterThan(50)
  })

  it('keeps keys apart and reports seconds until the next free slot', () => {
    let now = 0
    const limiter = new MemoryRateLimiter({ now: () => now })
    expect(limiter.consumeSync('a', 1).allowed).toBe(true)
    expect(limiter.consumeSync('b', 1).allowed).toBe(true)
    now = 600_000
    const refused = limiter.consumeSync('a', 1)
    expect(refused).toMatchObject({ allowed: false, resetSeconds: 3000 })
  })
})

describe('rate limit over HTTP', () => {
  let server: TestServer
  let now = Date.parse('2026-01-01T00:00:00Z')
  beforeAll(async () => {
    server = await startTestServer({ rateLimiter: new MemoryRateLimiter({ now: () => now }) })
  })
  afterAll(async () => server.close())

  it('development key: 100 per rolling hour; the 101st is 429 with Retry-After; admitted again at the window edge', async () => {
    const key = await server.createKey({ environment: 'development', rateLimit: null })
    const start = now
    for (let i = 1; i <= 100; i++) {
      const res = await server.request('GET', '/api/v0/webhooks', { key })
      expect(res.status).toBe(200)
      expect(res.headers.get('ratelimit-policy')).toBe('"hour";q=100;w=3600')
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"hour";r=${100 - i};t=\\d+$`))
      now += 1000
    }
    const refused = await server.request('GET', '/api/v0/webhooks', { key })
    expect(refused.status).toBe(429)
    // the first request leaves the window 3600 s after it was made; 100 s have passed
    expect(refused.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: 'Rate limit exceeded',
      details: 'This API key may make 100 requests per hour; retry in 3500 seconds',
    })
    expect(refused.headers.get('retry-after')).toBe('3500')
    expect(refused.headers.get('ratelimit')).toBe('"hour";r=0;t=3500')

    now = start + HOUR_MS - 1
    expect((await server.request('GET', '/api/v0/webhooks', { key })).status).toBe(429)
    now = start + HOUR_MS
    expect((await server.request('GET', '/api/v0/webhooks', { key })).status).toBe(200)
    expect((await server.request('GET', '/api/v0/webhooks', { key })).status).toBe(429)
  })

  it('production key: 1000 per hour', async () => {
    const key = await server.createKey({ environment: 'production', rateLimit: null })
    const res = await server.request('GET', '/api/v0/health', { key })
    expect(res.headers.get('ratelimit-policy')).toBe('"hour";q=1000;w=3600')
    expect(res.headers.get('ratelimit')).toBe('"hour";r=999;t=3600')
  })

  it('an operator override replaces the environment limit for that key', async () => {
    const key = await server.createKey({ environment: 'development', rateLimit: 2 })
    expect((await server.request('GET', '/api/v0/health', { key })).status).toBe(200)
    expect((await server.request('GET', '/api/v0/health', { key })).status).toBe(200)
    const refused = await server.request('GET', '/api/v0/health', { key })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('ratelimit-policy')).toBe('"hour";q=2;w=3600')
  })

  it('a refused request does not consume quota, and failed authentication is not counted against the key', async () => {
    const key = await server.createKey({ environment: 'development', rateLimit: 1 })
    for (let i = 0; i < 5; i++) {
      const bad = await server.request('GET', '/api/v0/health', { headers: { 'x-client-key': key.clientKey, 'x-client-secret': 'sk_test_wrong' } })
      expect(bad.status).toBe(401)
    }
    expect((await server.request('GET', '/api/v0/health', { key })).status).toBe(200)
    expect((await server.request('GET', '/api/v0/health', { key })).status).toBe(429)
    now += HOUR_MS // the one admission leaves; the refusals never counted
    expect((await server.request('GET', '/api/v0/health', { key })).status).toBe(200)
  })
})
