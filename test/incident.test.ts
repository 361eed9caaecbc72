// vitest: sqlite project only — pure functions, no backend.
import { describe, expect, it } from 'vitest'
import { Incident } from '../src/incident.js'

describe('Incident', () => {
  it('reports the first failure, then at most once per period with the count not reported, and its end once', () => {
    let now = 1_000
    const incident = new Incident(60_000, () => now)
    expect(incident.ended()).toBeUndefined()
    expect(incident.failed()).toEqual({ failures: 1, unlogged: 0 })
    now += 59_999
    expect(incident.failed()).toBeUndefined()
    expect(incident.failed()).toBeUndefined()
    now += 1
    expect(incident.failed()).toEqual({ failures: 4, unlogged: 2 })
    now += 500
    expect(incident.ended()).toEqual({ failedForMs: 60_500, failures: 4 })
    expect(incident.ended()).toBeUndefined()
    // A new incident is reported at once.
    expect(incident.failed()).toEqual({ failures: 1, unlogged: 0 })
  })
})
