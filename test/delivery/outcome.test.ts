// vitest: sqlite project only — a pure function, no backend.
import { expect, it } from 'vitest'
import type { DueDelivery } from '../../src/events/deliveries-repository.js'
import { decideOutcome, type StopReason } from '../../src/delivery/outcome.js'

const delivery: DueDelivery = {
  id: 'd1',
  event_id: 'e1',
  webhook_id: 'w1',
  app_id: 'a1',
  attempts: 0,
  payload: '{}',
  url: 'http://127.0.0.1/',
  signing_secret: 'whsec_x',
  previous_signing_secret: null,
  previous_secret_expires_at: null,
  encrypted: 0,
  resend: 0,
  consecutive_failures: 0,
}
const retry = { schedule: [5_000], random: () => 0.5 }

it.each<[StopReason, string, string]>([
  ['stopped', 'aborted: webhook deleted or deactivated', 'unchanged'],
  ['shutdown', 'aborted: dispatcher shut down', 'release'],
  ['unconfirmed', 'aborted before connecting: the database was unavailable', 'release'],
])('an attempt aborted (%s) is canceled with "%s"; its delivery: %s', (stop, error, next) => {
  const record = decideOutcome({ delivery, claimToken: 't', number: 1, startedAtMs: 1_000, stop }, { kind: 'error', message: 'aborted' }, 1_010, retry)
  expect(record).toMatchObject({ outcome: 'canceled', error, next: { status: next }, durationMs: 10 })
})
