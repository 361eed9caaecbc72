// vitest: sqlite project only — pure functions, no backend.
import { describe, expect, it } from 'vitest'
import { isoOf, newId, nowIso } from '../../src/db/time.js'

describe('newId', () => {
  it('makes RFC 9562 version-7 UUIDs carrying the current time', () => {
    const before = Date.now()
    const id = newId()
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const ms = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)
    expect(ms).toBeGreaterThanOrEqual(before)
    expect(ms).toBeLessThanOrEqual(Date.now() + 1)
  })

  it('is strictly increasing within one process, even for thousands of ids in one millisecond', () => {
    const ids = Array.from({ length: 20_000 }, () => newId())
    for (let i = 1; i < ids.length; i++) expect((ids[i] ?? '') > (ids[i - 1] ?? '')).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('gives every id random bits of its own, across the random pool’s refills (4 KB, about 250 ids)', () => {
    const random = Array.from({ length: 2_000 }, () => newId().slice(-12))
    expect(new Set(random).size).toBe(random.length)
  })
})

describe('isoOf', () => {
  const same = (ms: number) => expect(isoOf(ms)).toBe(new Date(ms).toISOString())

  it('writes every millisecond and second of a minute as toISOString does: 0, 9, 10, 99, 100, 999 ms; 0, 9, 10, 59 s', () => {
    const minute = Date.UTC(2026, 10, 23, 6, 14)
    for (const seconds of [0, 1, 9, 10, 11, 59]) for (const millis of [0, 1, 9, 10, 11, 99, 100, 101, 999]) same(minute + seconds * 1000 + millis)
    for (let ms = minute; ms < minute + 60_000; ms += 7) same(ms)
  })

  it('follows the time across minutes, hours, days, years, forwards and backwards', () => {
    const edges = [Date.UTC(2026, 10, 23, 6, 14, 59, 999), Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2028, 1, 28, 23, 59, 59, 999), Date.UTC(2000, 0, 1) - 1]
    for (const edge of edges) {
      for (let ms = edge - 3; ms <= edge + 3; ms++) same(ms)
      for (let ms = edge + 3; ms >= edge - 3; ms--) same(ms)
      same(edge + 60_000)
      same(edge - 60_000)
    }
  })

  it('is toISOString at the ends of the format and beyond: before 1970, years 0000 and 9999, six-digit years, fractions', () => {
    for (const ms of [-1, 0, -60_000, -60_001, Date.UTC(1969, 11, 31, 23, 59, 30), -62167219200000, -62167219200001, 253402300799999, 253402300800000, 8.64e15, -8.64e15]) {
      same(ms)
      same(ms) // the second time from the kept minute, where it was kept
    }
    const minute = Date.UTC(2026, 0, 1)
    same(minute)
    same(minute + 1.5)
    same(minute + 0.999)
  })

  it('throws for an invalid time, as toISOString does', () => {
    expect(() => isoOf(Number.NaN)).toThrow(RangeError)
    expect(() => isoOf(8.64e15 + 1)).toThrow(RangeError)
  })

  it('agrees with toISOString on 20,000 random times; nowIso is the current time', () => {
    const start = Date.UTC(1990, 0, 1)
    for (let i = 0; i < 20_000; i++) same(start + Math.floor(Math.random() * 2e12))
    const before = Date.now()
    const now = Date.parse(nowIso())
    expect(now).toBeGreaterThanOrEqual(before)
    expect(now).toBeLessThanOrEqual(Date.now())
  })
})
