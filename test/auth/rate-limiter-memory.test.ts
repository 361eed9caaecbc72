// vitest: sqlite project only — the in-memory limiter, no backend.
import { describe, expect, it } from 'vitest'
import { HOUR_MS, MemoryRateLimiter } from '../../src/auth/rate-limiter.js'

/** Seconds until an admission made at `admittedAt` leaves the hour window, as the limiter reports it. */
const secondsUntilLeaves = (admittedAt: number, now: number) => Math.max(1, Math.ceil((admittedAt + HOUR_MS - now) / 1000))

describe('MemoryRateLimiter memory follows use, not the limit', () => {
  it('a key with one admission at limit 999,999,999 holds the initial 4 slots; a peek holds none', () => {
    const limiter = new MemoryRateLimiter({ now: () => 0 })
    expect(limiter.peekSync('k', 999_999_999)).toMatchObject({ allowed: true, remaining: 999_999_999 })
    expect(limiter.capacityOf('k')).toBe(0)
    expect(limiter.consumeSync('k', 999_999_999)).toMatchObject({ allowed: true, remaining: 999_999_998, resetSeconds: 3600 })
    expect(limiter.capacityOf('k')).toBe(4)
    for (let i = 0; i < 100; i++) limiter.consumeSync('k', 999_999_999)
    expect(limiter.capacityOf('k')).toBe(128) // 101 admissions: doubled from 4, nowhere near the limit
  })

  for (const limit of [10, 37]) {
    it(`limit ${limit} (above the initial 4 slots): capacity doubles with admissions up to the limit, enforced exactly, also after the ring wraps`, () => {
      let now = 0
      const limiter = new MemoryRateLimiter({ now: () => now })
      for (let i = 1; i <= limit; i++) {
        // i − 1 admissions in the window: the i-th is admitted (the last one with remaining 0)
        expect(limiter.consumeSync('k', limit)).toMatchObject({ allowed: true, remaining: limit - i, resetSeconds: secondsUntilLeaves(0, now) })
        expect(limiter.capacityOf('k')).toBe(Math.min(limit, 2 ** Math.max(2, Math.ceil(Math.log2(i)))))
        now += 1000
      }
      // `limit` admissions in the window: refused until the first (at 0) leaves
      expect(limiter.consumeSync('k', limit)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: secondsUntilLeaves(0, now) })
      expect(limiter.capacityOf('k')).toBe(limit)

      // The admissions at 0, 1 s and 2 s leave; three new ones take their slots at the ring's start.
      now = HOUR_MS + 2500
      for (let i = 1; i <= 3; i++) expect(limiter.consumeSync('k', limit)).toMatchObject({ allowed: true, remaining: 3 - i })
      expect(limiter.consumeSync('k', limit)).toMatchObject({ allowed: false, resetSeconds: secondsUntilLeaves(3000, now) })
      expect(limiter.capacityOf('k')).toBe(limit)
      // The rest leave oldest first, the wrapped ones last: each leaving frees exactly one slot.
      for (let j = 3; j < limit; j++) {
        now = HOUR_MS + j * 1000
        expect(limiter.consumeSync('k', limit)).toMatchObject({ allowed: true, remaining: 0 })
        const next = j + 1 < limit ? (j + 1) * 1000 : HOUR_MS + 2500
        expect(limiter.consumeSync('k', limit)).toMatchObject({ allowed: false, resetSeconds: secondsUntilLeaves(next, now) })
      }
      expect(limiter.capacityOf('k')).toBe(limit)

      // Everything leaves: the next request finds the ring empty and cuts it back to 4 slots.
      now += 2 * HOUR_MS
      expect(limiter.consumeSync('k', limit)).toMatchObject({ allowed: true, remaining: limit - 1, resetSeconds: 3600 })
      expect(limiter.capacityOf('k')).toBe(4)
    })
  }

  it('resetSeconds after growth is the time until the oldest counted admission leaves', () => {
    let now = 0
    const limiter = new MemoryRateLimiter({ now: () => now })
    for (let i = 0; i < 9; i++) {
      limiter.consumeSync('k', 100)
      now += 10_000
    }
    expect(limiter.capacityOf('k')).toBe(16)
    expect(limiter.peekSync('k', 100)).toMatchObject({ remaining: 91, resetSeconds: 3600 - 90 })
    now = HOUR_MS // the admission at 0 leaves; the next one (10 s) is now the oldest
    expect(limiter.peekSync('k', 100)).toMatchObject({ remaining: 92, resetSeconds: 10 })
    expect(limiter.consumeSync('k', 100)).toMatchObject({ allowed: true, remaining: 91, resetSeconds: 10 })
  })

  it('a limit change keeps the newest admissions of a grown ring, and a raised limit allocates nothing up front', () => {
    let now = 0
    const limiter = new MemoryRateLimiter({ now: () => now })
    for (let i = 0; i < 20; i++) {
      limiter.consumeSync('k', 37)
      now += 1000
    }
    expect(limiter.capacityOf('k')).toBe(32)
    // Lowered to 5: the admissions at 15 s to 19 s are kept, so the key is full until 15 s leaves.
    expect(limiter.consumeSync('k', 5)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: secondsUntilLeaves(15_000, now) })
    expect(limiter.capacityOf('k')).toBe(5)
    // Raised to 37 again: the five kept count, the 15 forgotten do not.
    expect(limiter.consumeSync('k', 37)).toMatchObject({ allowed: true, remaining: 31, resetSeconds: secondsUntilLeaves(15_000, now) })
    expect(limiter.capacityOf('k')).toBe(10)
    expect(limiter.consumeSync('k', 999_999_999)).toMatchObject({ allowed: true, remaining: 999_999_992 })
    expect(limiter.capacityOf('k')).toBe(10)
  })

  it('cutting a mostly empty ring keeps the newest admissions in order', () => {
    let now = 0
    const limiter = new MemoryRateLimiter({ now: () => now })
    for (let i = 0; i < 100; i++) {
      limiter.consumeSync('k', 1000)
      now += 1000
    }
    expect(limiter.capacityOf('k')).toBe(128)
    // 0 s to 80 s leave; 19 remain (81 s to 99 s), under a quarter of 128: cut to 2 × 19.
    now = HOUR_MS + 80_500
    expect(limiter.consumeSync('k', 1000)).toMatchObject({ allowed: true, remaining: 980, resetSeconds: secondsUntilLeaves(81_000, now) })
    expect(limiter.capacityOf('k')).toBe(38)
    for (let j = 81; j < 100; j++) {
      now = HOUR_MS + j * 1000 // the admission at j s leaves
      const next = j + 1 < 100 ? (j + 1) * 1000 : HOUR_MS + 80_500
      expect(limiter.peekSync('k', 1000)).toMatchObject({ remaining: 1000 - (100 - j), resetSeconds: secondsUntilLeaves(next, now) })
    }
    now = HOUR_MS + 80_500 + HOUR_MS - 1
    expect(limiter.peekSync('k', 1000)).toMatchObject({ remaining: 999, resetSeconds: 1 })
  })

  it('the periodic sweep cuts the ring of a key gone quiet and still forgets idle keys', () => {
    let now = 0
    const limiter = new MemoryRateLimiter({ now: () => now })
    limiter.consumeSync('idle', 1000)
    for (let i = 0; i < 200; i++) {
      limiter.consumeSync('quiet', 1000)
      now += 1000
    }
    expect(limiter.capacityOf('quiet')).toBe(256)
    // 0 s to 190 s leave; 9 remain. 'quiet' makes no request: the sweep (every 10,000 requests) cuts it.
    now = HOUR_MS + 190_500
    for (let i = 0; i < 9_798; i++) limiter.consumeSync('busy', 20_000)
    expect(limiter.capacityOf('quiet')).toBe(256)
    limiter.consumeSync('busy', 20_000) // the 10,000th request
    expect(limiter.capacityOf('quiet')).toBe(18)
    expect(limiter.capacityOf('idle')).toBe(0)
    expect(limiter.size).toBe(2)
    expect(limiter.peekSync('quiet', 1000)).toMatchObject({ remaining: 991, resetSeconds: secondsUntilLeaves(191_000, now) })
  })

  it('decides exactly as a plain list of admissions under random traffic, limit changes and peeks, holding at most 4 slots per admission', () => {
    const windowMs = 60_000
    let now = 0
    const limiter = new MemoryRateLimiter({ windowMs, now: () => now })
    // The reference: every key's admissions in the window, oldest first, and its last limit.
    const model = new Map<string, { times: number[]; limit: number }>()
    const limits = [0, 1, 3, 10, 37, 1000]
    const keys = ['a', 'b', 'c']
    const keyLimit = new Map(keys.map((key) => [key, 37]))
    let seed = 7
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
    const pick = <T>(values: T[]): T => values[Math.floor(random() * values.length)] as T
    const expected = (times: number[], limit: number, allowed: boolean) => ({
      allowed,
      limit,
      remaining: limit - Math.min(times.length, limit),
      resetSeconds: times.length === 0 ? 0 : Math.max(1, Math.ceil(((times[0] ?? 0) + windowMs - now) / 1000)),
    })
    let refused = 0
    for (let step = 0; step < 30_000; step++) {
      // Bursts (many requests in the same millisecond) and lulls (whole windows without any).
      now += random() < 0.001 ? windowMs * 2 : Math.floor(random() * random() * 400)
      const key = pick(keys)
      if (random() < 0.005) keyLimit.set(key, pick(limits))
      const limit = keyLimit.get(key) ?? 37
      const entry = model.get(key)
      const live = (entry?.times ?? []).filter((t) => now - t < windowMs)
      if (random() < 0.1) {
        if (entry !== undefined) entry.times = live
        expect(limiter.peekSync(key, limit)).toMatchObject(expected(live, limit, Math.min(live.length, limit) < limit))
        continue
      }
      // A changed limit keeps the newest admissions, as many as the new limit.
      const kept = entry !== undefined && entry.limit !== limit ? live.slice(Math.max(0, live.length - limit)) : live
      const allowed = kept.length < limit
      if (allowed) kept.push(now)
      else refused++
      model.set(key, { times: kept, limit })
      expect(limiter.consumeSync(key, limit)).toMatchObject(expected(kept, limit, allowed))
      const capacity = limiter.capacityOf(key)
      expect(capacity).toBeGreaterThanOrEqual(kept.length)
      expect(capacity).toBeLessThanOrEqual(Math.max(4, 4 * kept.length))
      expect(capacity).toBeLessThanOrEqual(Math.max(1, limit))
    }
    expect(refused).toBeGreaterThan(1000) // the limits were reached, not only approached
  })
})
