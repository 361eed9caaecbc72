// vitest: postgres project only — the Redis circuit against Redis, no database: the run that has Redis.
import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { circuitOf, REDIS_CALL_BUDGET_MS, RedisCircuit, RedisUnavailableError } from '../../src/auth/redis-circuit.js'
import { connectRedis, FallbackRateLimiter, RedisRateLimiter, redisAnswers } from '../../src/auth/redis-rate-limiter.js'
import { MemoryRateLimiter, type RateLimitDecision, type RateLimiter } from '../../src/auth/rate-limiter.js'
import { TEST_REDIS_URL } from '../backend.js'
import { TcpProxy } from '../helpers/tcp-proxy.js'

/**
 * A Redis that stalls (connections open, nothing answers) through a proxy: every wait on it is
 * bounded by the circuit's budget, the circuit opens after three failures in a row and answers
 * at once while open, and closes by itself once a background PING is answered.
 */

let proxy: TcpProxy
const clients: Redis[] = []

beforeAll(async () => {
  const target = new URL(TEST_REDIS_URL)
  proxy = await TcpProxy.start(target.hostname, Number(target.port || 6379))
})

afterAll(async () => {
  for (const client of clients) {
    circuitOf(client).close()
    client.disconnect()
  }
  await proxy.close()
})

async function throughProxy(): Promise<Redis> {
  proxy.setMode('pass')
  const client = await connectRedis(proxy.urlFor(TEST_REDIS_URL))
  clients.push(client)
  return client
}

async function failure(work: Promise<unknown>): Promise<unknown> {
  try {
    await work
  } catch (error) {
    return error
  }
  throw new Error('expected a failure')
}

describe('RedisCircuit', () => {
  it('a stalled call fails at its budget; three in a row open the circuit; open, calls fail without waiting; a PING closes it', async () => {
    const redis = await throughProxy()
    const changes: boolean[] = []
    const circuit = new RedisCircuit(redis, { budgetMs: 40, failuresToOpen: 3, probeEveryMs: 50 })
    circuit.onChange((available) => changes.push(available))
    expect(await circuit.call((client) => client.ping())).toBe('PONG')

    proxy.setMode('stall')
    for (let i = 0; i < 3; i++) {
      expect(circuit.available).toBe(true)
      const error = await failure(circuit.call((client) => client.ping()))
      expect(error).toBeInstanceOf(RedisUnavailableError)
      expect(String(error)).toContain('no answer within 40 ms')
    }
    expect(circuit.available).toBe(false)
    expect(changes).toEqual([false])
    expect(String(await failure(circuit.call((client) => client.ping())))).toContain('circuit open')

    proxy.setMode('pass')
    for (let i = 0; i < 100 && !circuit.available; i++) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(circuit.available).toBe(true)
    expect(changes).toEqual([false, true])
    expect(await circuit.call((client) => client.ping())).toBe('PONG')
    circuit.close()
  })

  it('a success between failures keeps it closed: only failures in a row open it', async () => {
    const redis = await throughProxy()
    let fail = true
    const circuit = new RedisCircuit(redis, { budgetMs: 40, failuresToOpen: 3 })
    const flaky = () => (fail ? Promise.reject(new Error('refused')) : Promise.resolve('ok'))
    await failure(circuit.call(flaky))
    await failure(circuit.call(flaky))
    fail = false
    await circuit.call(flaky)
    fail = true
    await failure(circuit.call(flaky))
    await failure(circuit.call(flaky))
    expect(circuit.available).toBe(true)
    await failure(circuit.call(flaky))
    expect(circuit.available).toBe(false)
    circuit.close()
  })

  it('the health check and the rate limiter of one client share its circuit; the default budget is small', async () => {
    expect(REDIS_CALL_BUDGET_MS).toBeLessThanOrEqual(100)
    const redis = await throughProxy()
    const limiter = new RedisRateLimiter(redis, { prefix: `devplatform:test:circuit:${randomBytes(6).toString('hex')}:` })
    expect(await redisAnswers(redis)).toBe(true)
    proxy.setMode('stall')
    for (let i = 0; i < 3; i++) await failure(limiter.consume('k', 10))
    expect(circuitOf(redis).available).toBe(false)
    // Open: the health check answers at once that Redis does not answer.
    const started = performance.now()
    expect(await redisAnswers(redis)).toBe(false)
    expect(performance.now() - started).toBeLessThan(REDIS_CALL_BUDGET_MS)
    proxy.setMode('pass')
  })
})

/** A primary that answers like Redis with a count the test sets, or fails. */
function scriptedPrimary(state: { down: boolean; count: number; resetSeconds: number }): RateLimiter {
  const decide = (limit: number): RateLimitDecision => {
    if (state.down) throw new Error('down')
    const allowed = state.count < limit
    if (allowed) state.count++
    return { allowed, limit, remaining: limit - state.count, resetSeconds: state.resetSeconds, windowSeconds: 3600 }
  }
  return {
    consume: async (_key, limit) => decide(limit),
    consumeGuarded: async (_key, limit) => ({ guardFull: false, decision: decide(limit) }),
  }
}

describe('FallbackRateLimiter during an outage', () => {
  it('goes on from the count it last saw: one instance never admits more than the limit in the window', async () => {
    const state = { down: false, count: 0, resetSeconds: 3600 }
    const primary = scriptedPrimary(state)
    const limiter = new FallbackRateLimiter(primary, new MemoryRateLimiter(), { onFallback: () => undefined })
    // Other instances have used 6 of 10; this one admits one more through Redis (7).
    state.count = 6
    expect((await limiter.consume('key', 10)).remaining).toBe(3)
    state.down = true
    const during = []
    for (let i = 0; i < 5; i++) during.push(await limiter.consume('key', 10))
    expect(during.map((decision) => decision.allowed)).toEqual([true, true, true, false, false])
    expect(during.map((decision) => decision.remaining)).toEqual([2, 1, 0, 0, 0])
  })

  it('a key it never saw starts from zero; the boundary is the limit itself', async () => {
    const limiter = new FallbackRateLimiter(scriptedPrimary({ down: true, count: 0, resetSeconds: 0 }), new MemoryRateLimiter(), { onFallback: () => undefined })
    const decisions = []
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume('unseen', 3))
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false])
  })

  it('the admissions of the outage are given to the primary once it answers again, each key once', async () => {
    const state = { down: false, count: 2, resetSeconds: 3600 }
    const restored: [string, readonly number[]][] = []
    let nowMs = 1_000_000
    const primary = {
      ...scriptedPrimary(state),
      restore: async (key: string, times: readonly number[]) => {
        restored.push([key, times])
      },
    }
    const limiter = new FallbackRateLimiter(primary, new MemoryRateLimiter({ now: () => nowMs }), { onFallback: () => undefined, now: () => nowMs })
    await limiter.consume('a', 10)
    state.down = true
    nowMs += 1_000
    await limiter.consume('a', 10)
    nowMs += 1_000
    await limiter.consume('a', 10)
    await limiter.consume('b', 1)
    await limiter.consume('b', 1)
    expect(restored).toEqual([])
    state.down = false
    await limiter.consume('c', 10)
    expect(restored).toEqual([
      ['a', [1_001_000, 1_002_000]],
      ['b', [1_002_000]],
    ])
    await limiter.consume('c', 10)
    expect(restored).toHaveLength(2)
  })

  it('restored admissions count in Redis: the shared log holds them', async () => {
    const redis = await throughProxy()
    const prefix = `devplatform:test:restore:${randomBytes(6).toString('hex')}:`
    const limiter = new RedisRateLimiter(redis, { prefix })
    await limiter.consume('key', 5)
    const nowMs = Date.now()
    await limiter.restore('key', [nowMs - 2_000, nowMs - 1_000])
    // Restoring the same admissions again adds nothing.
    await limiter.restore('key', [nowMs - 2_000, nowMs - 1_000])
    expect(await redis.zcard(`${prefix}key`)).toBe(3)
    const next = await limiter.consume('key', 5)
    expect(next.remaining).toBe(1)
    await redis.del(`${prefix}key`)
  })
})
