// vitest: sqlite project only — pure functions, no backend.
import { describe, expect, it } from 'vitest'
import { parseRetryAfter, RETRY_SCHEDULE_MS, retryDelay } from '../../src/delivery/retry.js'

const S = 1000
const M = 60 * S
const H = 60 * M

describe('retry schedule', () => {
  it('is 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then nothing', () => {
    expect(RETRY_SCHEDULE_MS).toEqual([5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H])
    expect(retryDelay(8)).toBeUndefined()
    expect(retryDelay(7)).toBeDefined()
  })

  it('jitters each wait by ±20 %, at both ends of the random range', () => {
    RETRY_SCHEDULE_MS.forEach((base, index) => {
      expect(retryDelay(index + 1, { random: () => 0 })).toBe(Math.round(base * 0.8))
      expect(retryDelay(index + 1, { random: () => 0.5 })).toBe(base)
      expect(retryDelay(index + 1, { random: () => 0.999999 })).toBeLessThanOrEqual(Math.round(base * 1.2))
      expect(retryDelay(index + 1, { random: () => 0.999999 })).toBeGreaterThan(Math.round(base * 1.19))
    })
    const spread = new Set(Array.from({ length: 200 }, () => retryDelay(1)))
    expect(spread.size).toBeGreaterThan(50)
    for (const wait of spread) {
      expect(wait).toBeGreaterThanOrEqual(4000)
      expect(wait).toBeLessThanOrEqual(6000)
    }
  })

  it('a Retry-After is honoured up to twice the scheduled wait', () => {
    const mid = { random: () => 0.5 }
    expect(retryDelay(1, { ...mid, retryAfterMs: 1000 })).toBe(1000)
    expect(retryDelay(1, { ...mid, retryAfterMs: 10_000 })).toBe(10_000)
    expect(retryDelay(1, { ...mid, retryAfterMs: 10_001 })).toBe(10_000)
    expect(retryDelay(1, { ...mid, retryAfterMs: 0 })).toBe(0)
    expect(retryDelay(8, { ...mid, retryAfterMs: 1000 })).toBeUndefined()
  })
})

describe('Retry-After parsing', () => {
  const now = Date.parse('2026-11-21T12:00:00Z')
  it.each([
    ['0', 0],
    ['1', 1000],
    ['120', 120_000],
    [' 7 ', 7000],
    ['Sat, 21 Nov 2026 12:00:30 GMT', 30_000],
    ['Sat, 21 Nov 2026 11:59:00 GMT', 0],
  ])('%j → %i ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected)
  })
  it.each([undefined, '', '-1', '1.5', 'soon', '12345678901'])('%j is ignored', (value) => {
    expect(parseRetryAfter(value, now)).toBeUndefined()
  })
})
