import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FailureThrottle, type ThrottledEvent } from '../../src/auth/failure-throttle.js'
import { type GuardedDecision, MemoryRateLimiter, type PeekableRateLimiter, type RateLimitDecision } from '../../src/auth/rate-limiter.js'
import { FallbackPeekableRateLimiter } from '../../src/auth/redis-rate-limiter.js'
import { startTestServer, type TestServer } from '../helper.js'
import { address, call, expectThrottled, throttleLines, wrong } from './failure-helpers.js'


describe('failed authentication over HTTP: 20 per address and per key per minute', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ config: { authFailures: { perAddress: 20, perKey: 20, windowSeconds: 60 } } })
  })
  afterAll(async () => server.close())

  it('20 failures from one address are 401, the 21st is 429 with Retry-After, even with the right secret', async () => {
    const attacker = address()
    const key = await server.createKey()
    for (let i = 0; i < 20; i++) {
      // Different keys, so only the address counter fills.
      const res = await call(server, attacker, `pk_live_${randomBytes(8).toString('hex')}`, 'sk_live_guess')
      expect(res.status).toBe(401)
      expect(res.body.message).toBe('Invalid client app credentials')
    }
    expectThrottled(await call(server, attacker, key.clientKey, wrong(key)))
    // Refused before the secret is checked: a right guess looks like a wrong one.
    expectThrottled(await call(server, attacker, key.clientKey, key.clientSecret))
    // Another address is unaffected.
    expect((await call(server, address(), key.clientKey, key.clientSecret)).status).toBe(200)
    expect((await call(server, address(), key.clientKey, wrong(key))).status).toBe(401)
  })

  it("a key's failures from many addresses throttle wrong secrets only: its owner's right secret still succeeds", async () => {
    const key = await server.createKey()
    const other = await server.createKey()
    for (let i = 0; i < 20; i++) expect((await call(server, address(), key.clientKey, wrong(key))).status).toBe(401)
    expectThrottled(await call(server, address(), key.clientKey, wrong(key)))
    expect((await call(server, address(), key.clientKey, key.clientSecret)).status).toBe(200)
    expect((await call(server, address(), other.clientKey, wrong(other))).status).toBe(401)
    expect((await call(server, address(), other.clientKey, other.clientSecret)).status).toBe(200)
  })

  it('an unknown key is throttled like a known one, so a 429 does not reveal that a key exists', async () => {
    const unknown = `pk_live_${randomBytes(24).toString('base64url')}`
    for (let i = 0; i < 20; i++) expect((await call(server, address(), unknown, 'sk_live_guess')).status).toBe(401)
    expectThrottled(await call(server, address(), unknown, 'sk_live_guess'))
  })

  it('successes are not counted and do not reset the count', async () => {
    const from = address()
    const key = await server.createKey()
    for (let i = 0; i < 30; i++) expect((await call(server, from, key.clientKey, key.clientSecret)).status).toBe(200)
    for (let i = 0; i < 19; i++) {
      expect((await call(server, from, key.clientKey, wrong(key))).status).toBe(401)
      expect((await call(server, from, key.clientKey, key.clientSecret)).status).toBe(200)
    }
    expect((await call(server, from, key.clientKey, wrong(key))).status).toBe(401)
    expectThrottled(await call(server, from, key.clientKey, wrong(key)))
  })

  it('logs each throttled burst once, with the address and the key id, never a secret or an unknown key', async () => {
    const from = address()
    const key = await server.createKey()
    const unknown = `pk_live_${randomBytes(24).toString('base64url')}`
    const secrets = new Set<string>()
    for (let i = 0; i < 20; i++) {
      const secret = `sk_live_${randomBytes(12).toString('hex')}`
      secrets.add(secret)
      expect((await call(server, address(), key.clientKey, secret)).status).toBe(401)
    }
    for (let i = 0; i < 5; i++) expectThrottled(await call(server, address(), key.clientKey, wrong(key)))
    for (let i = 0; i < 20; i++) await call(server, from, unknown, 'sk_live_unknown_guess')
    for (let i = 0; i < 5; i++) expectThrottled(await call(server, from, unknown, 'sk_live_unknown_guess'))

    const lines = throttleLines(server)
    expect(lines.filter((line) => line.scope === 'key' && line.keyId === key.id)).toHaveLength(1)
    const fromLines = lines.filter((line) => line.clientAddress === from)
    expect(fromLines).toHaveLength(1)
    expect(fromLines[0]).toMatchObject({ scope: 'address', clientAddress: from })
    expect(fromLines[0]?.keyId).toBeUndefined()
    const text = server.logs()
    for (const secret of [...secrets, wrong(key), key.clientSecret, 'sk_live_unknown_guess', unknown]) expect(text).not.toContain(secret)
  })
})

describe('failed authentication over HTTP: the window passes', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startTestServer({ config: { authFailures: { perAddress: 3, perKey: 3, windowSeconds: 2 } } })
  })
  afterAll(async () => server.close())

  it('after the window, failures are 401 again and the next burst is logged again', async () => {
    const from = address()
    const key = await server.createKey()
    for (let i = 0; i < 3; i++) expect((await call(server, from, key.clientKey, wrong(key))).status).toBe(401)
    const refused = await call(server, from, key.clientKey, wrong(key))
    expect(refused.status).toBe(429)
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(2)
    await new Promise((resolve) => setTimeout(resolve, 2100))
    for (let i = 0; i < 3; i++) expect((await call(server, from, key.clientKey, wrong(key))).status).toBe(401)
    expect((await call(server, from, key.clientKey, wrong(key))).status).toBe(429)
    expect(throttleLines(server).filter((line) => line.clientAddress === from && line.scope === 'address')).toHaveLength(2)
  })
})

describe('FailureThrottle and its memory (injected clock)', () => {
  it('counts in this process while the shared store fails (fail-open to per-instance limits)', async () => {
    const failing: PeekableRateLimiter = {
      consume: async (): Promise<RateLimitDecision> => Promise.reject(new Error('Redis down')),
      peek: async (): Promise<RateLimitDecision> => Promise.reject(new Error('Redis down')),
      consumeGuarded: async (): Promise<GuardedDecision> => Promise.reject(new Error('Redis down')),
    }
    let outages = 0
    const counter = new FallbackPeekableRateLimiter(failing, new MemoryRateLimiter({ windowMs: 60_000 }), { onFallback: () => outages++ })
    const throttle = new FailureThrottle(counter, { perAddress: 2, perKey: 0, windowSeconds: 60 }, () => {})
    expect(await throttle.failed('10.0.0.9', 'pk_a', undefined)).toBeUndefined()
    expect(await throttle.failed('10.0.0.9', 'pk_b', undefined)).toBeUndefined()
    expect(await throttle.addressRetryAfter('10.0.0.9')).toBe(60)
    expect(outages).toBe(1)
  })

  it('refuses an address once full, until the oldest failure leaves the window; logs once per window', async () => {
    let now = 1_000_000
    const events: ThrottledEvent[] = []
    const throttle = new FailureThrottle(new MemoryRateLimiter({ windowMs: 60_000, now: () => now }), { perAddress: 2, perKey: 0, windowSeconds: 60 }, (event) => events.push(event), {
      now: () => now,
    })
    expect(await throttle.addressRetryAfter('10.0.0.1')).toBeUndefined()
    expect(await throttle.failed('10.0.0.1', 'pk_a', undefined)).toBeUndefined()
    now += 10_000
    expect(await throttle.failed('10.0.0.1', 'pk_b', 'id-b')).toBeUndefined()
    expect(await throttle.addressRetryAfter('10.0.0.1')).toBe(50)
    expect(await throttle.addressRetryAfter('10.0.0.1')).toBe(50)
    expect(await throttle.addressRetryAfter('10.0.0.2')).toBeUndefined()
    expect(events).toEqual([{ scope: 'address', clientAddress: '10.0.0.1', keyId: undefined, limit: 2, windowSeconds: 60 }])
    now += 50_000 // the first failure leaves the window
    expect(await throttle.addressRetryAfter('10.0.0.1')).toBeUndefined()
    expect(await throttle.failed('10.0.0.1', 'pk_c', undefined)).toBeUndefined()
    expect(await throttle.addressRetryAfter('10.0.0.1')).toBe(10)
    expect(events).toHaveLength(1) // 50 s after the last line: still the same window
    now += 10_000
    expect(await throttle.failed('10.0.0.1', 'pk_d', undefined)).toBeUndefined()
    expect(await throttle.addressRetryAfter('10.0.0.1')).toBe(50)
    expect(events).toHaveLength(2) // a window after the last line: a new line
  })

  it('keeps at most maxKeys entries, forgetting the oldest; a peek creates none', async () => {
    const limiter = new MemoryRateLimiter({ windowMs: 60_000, maxKeys: 3 })
    for (let i = 0; i < 1000; i++) limiter.consumeSync(`addr:${i}`, 20)
    expect(limiter.size).toBe(3)
    expect(limiter.peekSync('addr:0', 1).allowed).toBe(true) // forgotten
    expect(limiter.peekSync('addr:999', 1).allowed).toBe(false)
    for (let i = 0; i < 100; i++) limiter.peekSync(`new:${i}`, 20)
    expect(limiter.size).toBe(3)
  })
})
