import { expect, it } from 'vitest'
import { consumeAfterPeek, MemoryRateLimiter, type RateLimitDecision, type RateLimiter } from '../../src/auth/rate-limiter.js'
import { waitUntil } from '../processes.js'
import { MISSING_UUID, startTestServer } from '../helper.js'

it('a request whose client hung up, still running when the server closed the database, is logged as abandoned, not as an error', async () => {
  // The rate limiter holds the request between its credentials and the route's own read.
  let reachLimiter = () => undefined as void
  const reached = new Promise<void>((resolve) => (reachLimiter = resolve))
  let release = () => undefined as void
  const held = new Promise<void>((resolve) => (release = resolve))
  const memory = new MemoryRateLimiter()
  const limiter: RateLimiter = {
    async consume(key: string, limit: number): Promise<RateLimitDecision> {
      reachLimiter()
      await held
      return memory.consume(key, limit)
    },
    consumeGuarded(key, limit, guard) {
      return consumeAfterPeek(this, key, limit, guard)
    },
  }
  const server = await startTestServer({ rateLimiter: limiter })
  try {
    const key = await server.createKey()
    const abort = new AbortController()
    const request = fetch(`${server.baseUrl}/api/v0/webhooks/${MISSING_UUID}`, { headers: key.headers, signal: abort.signal }).catch(() => 'aborted')
    await reached
    abort.abort()
    expect(await request).toBe('aborted')
    // The client's connection is gone, so the close does not wait for the request: the database closes.
    await server.app.close()
    release()
    const line = await waitUntil('the abandoned request to end', () =>
      server
        .logs()
        .split('\n')
        .filter((text) => text.includes('"reqId"') && /abandoned|unhandled/.test(text))
        .at(0),
    )
    expect(JSON.parse(line)).toMatchObject({ level: 30, msg: 'request abandoned by its client failed during shutdown', err: { message: 'driver has already been destroyed' } })
    expect(server.logs()).not.toContain('"level":50')
  } finally {
    release()
    await server.database.drop()
  }
})
