// vitest: postgres project only — the Redis limiter against Redis, no database: the run that has Redis.
import { circuitOf } from '../../src/auth/redis-circuit.js'
import { randomBytes } from 'node:crypto'
import { createServer, type Server, type Socket } from 'node:net'
import type { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  FallbackPeekableRateLimiter,
  FallbackRateLimiter,
  RedisRateLimiter,
  connectRedis,
  createRedisClient,
  redisAnswers,
} from '../../src/auth/redis-rate-limiter.js'
import { consumeAfterPeek, MemoryRateLimiter, type RateLimitDecision, type RateLimiter } from '../../src/auth/rate-limiter.js'

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const CLOSED_URL = 'redis://127.0.0.1:6390'

let redis: Redis
const extraClients: Redis[] = []
let prefix = ''

function newPrefix(): string {
  prefix = `devplatform:test:ratelimit:${randomBytes(6).toString('hex')}:`
  return prefix
}

async function deleteKeys(pattern: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = next
    if (keys.length > 0) await redis.del(...keys)
  } while (cursor !== '0')
}

beforeAll(async () => {
  redis = await connectRedis(REDIS_URL)
  // These tests are about the limiter's counts, not the budget: a loaded machine must not make a call "late".
  circuitOf(redis, { budgetMs: 2_000 })
})

afterEach(async () => {
  if (prefix !== '') await deleteKeys(`${prefix}*`)
  prefix = ''
  for (const client of extraClients.splice(0)) client.disconnect()
})

afterAll(() => {
  redis.disconnect()
})

describe('RedisRateLimiter', () => {
  it('admits `limit` requests with remaining counting down, then refuses', async () => {
    const limiter = new RedisRateLimiter(redis, { prefix: newPrefix() })
    const decisions: RateLimitDecision[] = []
    for (let i = 0; i < 6; i++) decisions.push(await limiter.consume('key', 5))
    expect(decisions.slice(0, 5).map((d) => d.allowed)).toEqual([true, true, true, true, true])
    expect(decisions.slice(0, 5).map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0])
    for (const d of decisions) {
      expect(d.limit).toBe(5)
      expect(d.windowSeconds).toBe(3600)
    }
    const refused = decisions[5]
    expect(refused?.allowed).toBe(false)
    expect(refused?.remaining).toBe(0)
    expect(refused?.resetSeconds).toBeGreaterThanOrEqual(1)
    expect(refused?.resetSeconds).toBeLessThanOrEqual(3600)
  })

  it('is exact under concurrency across three clients', async () => {
    const p = newPrefix()
    const clients = await Promise.all([connectRedis(REDIS_URL), connectRedis(REDIS_URL), connectRedis(REDIS_URL)])
    extraClients.push(...clients)
    const limiters = clients.map((client) => new RedisRateLimiter(client, { prefix: p }))
    const decisions = await Promise.all(
      Array.from({ length: 300 }, (_, i) => (limiters[i % 3] as RedisRateLimiter).consume('shared', 100)),
    )
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100)
    expect(await redis.zcard(`${p}shared`)).toBe(100)
  })

  it('keeps memory bounded by the limit whatever the refused traffic', async () => {
    const p = newPrefix()
    const limiter = new RedisRateLimiter(redis, { prefix: p })
    const decisions = await Promise.all(Array.from({ length: 1010 }, () => limiter.consume('busy', 10)))
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10)
    expect(decisions.filter((d) => !d.allowed)).toHaveLength(1000)
    expect(await redis.zcard(`${p}busy`)).toBe(10)
  })

  it('slides: a request is admitted again once the oldest leaves the window', async () => {
    const limiter = new RedisRateLimiter(redis, { prefix: newPrefix(), windowMs: 1000 })
    for (let i = 0; i < 3; i++) expect((await limiter.consume('k', 3)).allowed).toBe(true)
    const refused = await limiter.consume('k', 3)
    expect(refused.allowed).toBe(false)
    expect(refused.resetSeconds).toBe(1)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const again = await limiter.consume('k', 3)
    expect(again.allowed).toBe(true)
    expect(again.remaining).toBe(2)
  })

  it('trims to the newest `limit` entries when the limit is lowered', async () => {
    const p = newPrefix()
    const limiter = new RedisRateLimiter(redis, { prefix: p })
    for (let i = 0; i < 20; i++) expect((await limiter.consume('k', 20)).allowed).toBe(true)
    const newest = await redis.zrange(`${p}k`, '-5', '-1')
    const lowered = await limiter.consume('k', 5)
    expect(lowered.allowed).toBe(false)
    expect(lowered.remaining).toBe(0)
    expect(await redis.zcard(`${p}k`)).toBe(5)
    expect(await redis.zrange(`${p}k`, '0', '-1')).toEqual(newest)
  })

  it('sets a TTL no longer than the window on the key', async () => {
    const p = newPrefix()
    const limiter = new RedisRateLimiter(redis, { prefix: p, windowMs: 60_000 })
    await limiter.consume('ttl', 3)
    const ttl = await redis.pttl(`${p}ttl`)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(60_000)
  })

  it('uses the default prefix', async () => {
    const key = `test-${randomBytes(6).toString('hex')}`
    const limiter = new RedisRateLimiter(redis)
    try {
      await limiter.consume(key, 1)
      expect(await redis.zcard(`devplatform:ratelimit:${key}`)).toBe(1)
    } finally {
      await redis.del(`devplatform:ratelimit:${key}`)
    }
  })
})

describe('RedisRateLimiter.consumeGuarded (the rate limit guarded by the address failure count)', () => {
  /** a rate limiter and a failure counter (one-minute window) in the same Redis, under one test prefix */
  function pair(client: Redis = redis): { limiter: RedisRateLimiter; failures: RedisRateLimiter; p: string } {
    const p = newPrefix()
    return { limiter: new RedisRateLimiter(client, { prefix: `${p}limit:` }), failures: new RedisRateLimiter(client, { prefix: `${p}fail:`, windowMs: 60_000 }), p }
  }

  it('consumes while the guard has room (up to its last slot), recording nothing in the guard', async () => {
    const { limiter, failures, p } = pair()
    for (let i = 0; i < 2; i++) await failures.consume('addr', 3)
    const guard = { counter: failures, key: 'addr', limit: 3 }
    const first = await limiter.consumeGuarded('key', 5, guard)
    const second = await limiter.consumeGuarded('key', 5, guard)
    expect(first).toEqual({ guardFull: false, decision: { allowed: true, limit: 5, remaining: 4, resetSeconds: 3600, windowSeconds: 3600 } })
    expect(second.guardFull === false && second.decision.remaining).toBe(3)
    expect(await redis.zcard(`${p}fail:addr`)).toBe(2)
    expect(await redis.zcard(`${p}limit:key`)).toBe(2)
  })

  it("a full guard refuses with the guard's own decision and consumes nothing", async () => {
    const { limiter, failures, p } = pair()
    for (let i = 0; i < 3; i++) await failures.consume('addr', 3)
    await limiter.consume('key', 5)
    const refused = await limiter.consumeGuarded('key', 5, { counter: failures, key: 'addr', limit: 3 })
    expect(refused).toEqual({ guardFull: true, guard: { allowed: false, limit: 3, remaining: 0, resetSeconds: 60, windowSeconds: 60 } })
    expect(await redis.zcard(`${p}limit:key`)).toBe(1)
    expect(await redis.zcard(`${p}fail:addr`)).toBe(3)
  })

  it('the rate limit still refuses at its own limit behind a guard with room', async () => {
    const { limiter, failures } = pair()
    const guard = { counter: failures, key: 'addr', limit: 3 }
    expect((await limiter.consumeGuarded('key', 1, guard)).guardFull).toBe(false)
    const refused = await limiter.consumeGuarded('key', 1, guard)
    expect(refused.guardFull === false && refused.decision.allowed).toBe(false)
  })

  it('is one command to Redis: both keys in one script', async () => {
    const { limiter, failures, p } = pair()
    const guard = { counter: failures, key: 'addr', limit: 3 }
    await limiter.consumeGuarded('key', 5, guard) // the script is cached in Redis from here on
    const monitor = await redis.duplicate().monitor()
    const seen: string[][] = []
    // MONITOR also shows the script's own calls: only commands sent by clients count.
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (/^eval/i.test(args[0] ?? '') && args.some((arg) => arg.startsWith(p))) seen.push(args)
    })
    try {
      await limiter.consumeGuarded('key', 5, guard)
      await limiter.consume('marker', 1)
      await waitFor(() => seen.some((args) => args.includes(`${p}limit:marker`)))
      const guarded = seen.filter((args) => !args.includes(`${p}limit:marker`))
      expect(guarded).toHaveLength(1)
      expect(guarded[0]?.slice(2, 5)).toEqual(['2', `${p}limit:key`, `${p}fail:addr`])
    } finally {
      monitor.disconnect()
    }
  })

  it('with a guard counted elsewhere (this process), peeks it first, then consumes', async () => {
    const { limiter, p } = pair()
    const memory = new MemoryRateLimiter({ windowMs: 60_000 })
    const guard = { counter: memory, key: 'addr', limit: 1 }
    expect((await limiter.consumeGuarded('key', 5, guard)).guardFull).toBe(false)
    await memory.consume('addr', 1)
    expect(await limiter.consumeGuarded('key', 5, guard)).toMatchObject({ guardFull: true, guard: { allowed: false, limit: 1 } })
    expect(await redis.zcard(`${p}limit:key`)).toBe(1)
  })

  it('behind the fallback wrappers: one script while Redis answers; from memory, each outage noted once per wrapper, while it is down', async () => {
    const { limiter, failures, p } = pair()
    let outages = 0
    const wrappedLimiter = new FallbackRateLimiter(limiter, new MemoryRateLimiter(), { onFallback: () => outages++ })
    const wrappedFailures = new FallbackPeekableRateLimiter(failures, new MemoryRateLimiter({ windowMs: 60_000 }), { onFallback: () => outages++ })
    const guard = { counter: wrappedFailures, key: 'addr', limit: 2 }
    expect((await wrappedLimiter.consumeGuarded('key', 5, guard)).guardFull).toBe(false)
    expect(await redis.zcard(`${p}limit:key`)).toBe(1)

    const dead = createRedisClient(CLOSED_URL)
    extraClients.push(dead)
    const down = pair(dead)
    const memoryFailures = new MemoryRateLimiter({ windowMs: 60_000 })
    const downLimiter = new FallbackRateLimiter(down.limiter, new MemoryRateLimiter(), { onFallback: () => outages++ })
    const downFailures = new FallbackPeekableRateLimiter(down.failures, memoryFailures, { onFallback: () => outages++ })
    const downGuard = { counter: downFailures, key: 'addr', limit: 2 }
    const answered = await downLimiter.consumeGuarded('key', 5, downGuard)
    expect(answered).toMatchObject({ guardFull: false, decision: { allowed: true, remaining: 4 } })
    expect(outages).toBe(2)
    expect(downLimiter.degraded && downFailures.degraded).toBe(true)
    for (let i = 0; i < 2; i++) await memoryFailures.consume('addr', 2)
    expect(await downLimiter.consumeGuarded('key', 5, downGuard)).toMatchObject({ guardFull: true, guard: { allowed: false, limit: 2 } })
    expect(outages).toBe(2)
  })
})

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('FallbackRateLimiter', () => {
  it('answers from the fallback while Redis is unreachable, signalling the outage once', async () => {
    const dead = createRedisClient(CLOSED_URL)
    extraClients.push(dead)
    const errors: unknown[] = []
    const limiter = new FallbackRateLimiter(new RedisRateLimiter(dead), new MemoryRateLimiter(), {
      onFallback: (error) => errors.push(error),
    })
    const decisions: RateLimitDecision[] = []
    for (let i = 0; i < 5; i++) {
      const started = Date.now()
      decisions.push(await limiter.consume('k', 3))
      expect(Date.now() - started).toBeLessThan(1000)
      expect(limiter.degraded).toBe(true)
    }
    // The fallback still enforces the limit (per instance): never unlimited.
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false])
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(Error)
  })

  it('is not degraded with a working primary', async () => {
    let fellBack = 0
    const limiter = new FallbackRateLimiter(new RedisRateLimiter(redis, { prefix: newPrefix() }), new MemoryRateLimiter(), {
      onFallback: () => fellBack++,
    })
    const decision = await limiter.consume('k', 2)
    expect(decision.allowed).toBe(true)
    expect(decision.remaining).toBe(1)
    expect(limiter.degraded).toBe(false)
    expect(fellBack).toBe(0)
  })

  it('recovers: onRecover after a failure followed by a success, onFallback again on the next outage', async () => {
    let failing = true
    const primary: RateLimiter = {
      async consume(_key, limit) {
        if (failing) throw new Error('primary down')
        return { allowed: true, limit, remaining: limit - 1, resetSeconds: 3600, windowSeconds: 3600 }
      },
      consumeGuarded(key, limit, guard) {
        return consumeAfterPeek(this, key, limit, guard)
      },
    }
    let fellBack = 0
    let recovered = 0
    const limiter = new FallbackRateLimiter(primary, new MemoryRateLimiter(), {
      onFallback: () => fellBack++,
      onRecover: () => recovered++,
    })
    await limiter.consume('k', 10)
    await limiter.consume('k', 10)
    expect(limiter.degraded).toBe(true)
    expect(fellBack).toBe(1)
    expect(recovered).toBe(0)

    failing = false
    expect((await limiter.consume('k', 10)).remaining).toBe(9)
    expect(limiter.degraded).toBe(false)
    expect(recovered).toBe(1)
    await limiter.consume('k', 10)
    expect(recovered).toBe(1)

    failing = true
    await limiter.consume('k', 10)
    expect(fellBack).toBe(2)
    expect(limiter.degraded).toBe(true)
  })

  it('never lets a throwing hook fail the request', async () => {
    const primary: RateLimiter = {
      consume: () => Promise.reject(new Error('down')),
      consumeGuarded: () => Promise.reject(new Error('down')),
    }
    const limiter = new FallbackRateLimiter(primary, new MemoryRateLimiter(), {
      onFallback: () => {
        throw new Error('logger broke')
      },
    })
    expect((await limiter.consume('k', 1)).allowed).toBe(true)
  })
})

describe('connectRedis / redisAnswers', () => {
  it('rejects quickly with the reason when nothing listens', async () => {
    const started = Date.now()
    await expect(connectRedis(CLOSED_URL)).rejects.toThrow(/ECONNREFUSED/)
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it('rejects within the timeout when the server never answers', async () => {
    const sockets = new Set<Socket>()
    const silent: Server = createServer((socket) => {
      sockets.add(socket)
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const address = silent.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    try {
      const started = Date.now()
      await expect(connectRedis(`redis://127.0.0.1:${address.port}`, 1500)).rejects.toThrow(/no answer within 1500 ms/)
      expect(Date.now() - started).toBeLessThan(2500)
    } finally {
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it('resolves against a running Redis', async () => {
    const client = await connectRedis(REDIS_URL)
    extraClients.push(client)
    expect(await client.ping()).toBe('PONG')
    expect(client.status).toBe('ready')
  })

  it('redisAnswers: true for a running Redis, false (quickly) for a dead one', async () => {
    expect(await redisAnswers(redis)).toBe(true)
    const dead = createRedisClient(CLOSED_URL)
    extraClients.push(dead)
    const started = Date.now()
    expect(await redisAnswers(dead)).toBe(false)
    expect(Date.now() - started).toBeLessThan(1000)
  })
})
