import { describe, expect, it } from 'vitest'
import { newId } from '../../src/db/time.js'

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
