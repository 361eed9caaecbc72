import type { AttemptRecord, DueDelivery } from '../db/repositories/deliveries.js'
import { parseRetryAfter, retryDelay } from './retry.js'
import type { SendResult } from './sender.js'

/**
 * Why an attempt was aborted by its dispatcher, when it was: its webhook was deleted or
 * deactivated, the dispatcher shut down, or the database could not confirm the webhook before a
 * late connection (Dispatcher.guardConnection).
 */
export type StopReason = 'stopped' | 'shutdown' | 'unconfirmed'

const STOP_ERRORS: Record<StopReason, string> = {
  stopped: 'aborted: webhook deleted or deactivated',
  shutdown: 'aborted: dispatcher shut down',
  unconfirmed: 'aborted before connecting: the database was unavailable',
}

/** One attempt as the dispatcher knows it when it ends. */
export interface EndedAttempt {
  delivery: DueDelivery
  claimToken: string
  number: number
  startedAtMs: number
  stop: StopReason | undefined
}

/**
 * What an attempt's result means: its outcome, what becomes of the delivery, and whether the
 * webhook asked to be turned off (410). Pure: the same inputs give the same record.
 */
export function decideOutcome(
  attempt: EndedAttempt,
  result: SendResult,
  nowMs: number,
  retry: { schedule: readonly number[]; random: () => number },
): AttemptRecord {
  const base = {
    deliveryId: attempt.delivery.id,
    webhookId: attempt.delivery.webhook_id,
    claimToken: attempt.claimToken,
    attempt: attempt.number,
    startedAt: new Date(attempt.startedAtMs).toISOString(),
    durationMs: nowMs - attempt.startedAtMs,
    gone: false,
  }
  const response = result.kind === 'response' ? result : undefined
  const statusCode = response?.status ?? null
  const responseBody = response?.body ?? null
  if (attempt.stop !== undefined) {
    return {
      ...base,
      outcome: 'canceled',
      statusCode,
      error: STOP_ERRORS[attempt.stop],
      responseBody,
      // Deleted or deactivated: the delivery is already canceled. Otherwise due again at once, no attempt used.
      next: attempt.stop === 'stopped' ? { status: 'unchanged' } : { status: 'release' },
    }
  }
  if (response !== undefined && response.status >= 200 && response.status < 300) {
    return { ...base, outcome: 'succeeded', statusCode, error: null, responseBody, next: { status: 'succeeded', at: new Date(nowMs).toISOString() } }
  }
  const retryAfterMs = response !== undefined && (response.status === 429 || response.status === 503) ? parseRetryAfter(response.retryAfter, nowMs) : undefined
  const gone = response?.status === 410
  // An owner's resend is one attempt; only the automatic schedule retries.
  const delay = gone || attempt.delivery.resend === 1 ? undefined : retryDelay(attempt.number, { schedule: retry.schedule, random: retry.random, retryAfterMs })
  return {
    ...base,
    outcome: 'failed',
    statusCode,
    error: result.kind === 'error' ? result.message : `HTTP ${result.status}`,
    responseBody,
    next: delay === undefined ? { status: 'failed', at: new Date(nowMs).toISOString() } : { status: 'pending', at: new Date(nowMs + delay).toISOString() },
    gone,
  }
}
