import { sql } from 'kysely'
import { chunks } from '../chunks.js'
import type { Db } from '../database.js'
import type { AttemptOutcome, DeliveryStatus } from '../schema.js'
import { newId, nowIso } from '../time.js'

/** A due delivery with what its attempt needs: the event's payload and the webhook's settings now. */
export interface DueDelivery {
  id: string
  event_id: string
  webhook_id: string
  attempts: number
  payload: string
  url: string
  signing_secret: string
  encrypted: number
}

export interface AttemptRecord {
  deliveryId: string
  webhookId: string
  claimToken: string
  attempt: number
  startedAt: string
  durationMs: number
  outcome: AttemptOutcome
  statusCode: number | null
  error: string | null
  responseBody: string | null
  /** what becomes of the delivery; `release` gives it back, due now, without using up an attempt */
  next: { status: Exclude<DeliveryStatus, 'canceled'>; at: string } | { status: 'release' } | { status: 'unchanged' }
  /** 410 Gone: deactivate the webhook and cancel its pending deliveries */
  gone: boolean
}

/**
 * The delivery queue. Operator-level (no application scope): the dispatcher and the CLI use it,
 * never a route. Every write runs inside the caller's `writeTransaction`.
 */
export class DeliveriesRepository {
  constructor(private readonly db: Db) {}

  /**
   * Pending deliveries due by `now` (a lapsed claim is due again), oldest first. Deleting or
   * deactivating a webhook cancels its pending deliveries, so the webhook filter only guards.
   */
  async due(now: string, excludeWebhooks: readonly string[], limit: number): Promise<DueDelivery[]> {
    let query = this.db
      .selectFrom('deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.id', 'd.event_id', 'd.webhook_id', 'd.attempts', 'e.payload', 'w.url', 'w.signing_secret', 'w.encrypted'])
      // A literal, not a parameter: only then can SQLite use the partial index `deliveries_due`
      // (a bound value made every claim scan the whole table and sort it).
      .where('d.status', '=', sql.lit('pending'))
      .where('w.deleted_at', 'is', null)
      .where('w.is_active', '=', 1)
      .where('d.next_attempt_at', '<=', now)
    if (excludeWebhooks.length > 0) query = query.where('d.webhook_id', 'not in', excludeWebhooks)
    return query.orderBy('d.next_attempt_at').limit(limit).execute()
  }

  async claim(ids: readonly string[], token: string, until: string): Promise<void> {
    const now = nowIso()
    for (const part of chunks(ids)) {
      await this.db.updateTable('deliveries').set({ claim_token: token, next_attempt_at: until, updated_at: now }).where('id', 'in', part).execute()
    }
  }

  /** A deleted or inactive webhook gets nothing more: its pending deliveries (claimed ones too) end here. */
  async cancelPendingOf(webhookId: string): Promise<void> {
    await this.db
      .updateTable('deliveries')
      .set({ status: 'canceled', claim_token: null, updated_at: nowIso() })
      .where('webhook_id', '=', webhookId)
      .where('status', '=', 'pending')
      .execute()
  }

  /**
   * Writes one attempt: its row, the delivery's new state (only while the claim is still ours)
   * and the webhook's statistics, all in the caller's transaction.
   */
  async record(attempt: AttemptRecord): Promise<void> {
    const now = nowIso()
    await this.db
      .insertInto('delivery_attempts')
      .values({
        id: newId(),
        delivery_id: attempt.deliveryId,
        webhook_id: attempt.webhookId,
        attempt: attempt.attempt,
        started_at: attempt.startedAt,
        duration_ms: attempt.durationMs,
        outcome: attempt.outcome,
        status_code: attempt.statusCode,
        error: attempt.error,
        response_body: attempt.responseBody,
      })
      .execute()

    const next = attempt.next
    if (next.status !== 'unchanged') {
      const changes =
        next.status === 'release'
          ? { claim_token: null, next_attempt_at: now, updated_at: now }
          : { status: next.status, attempts: attempt.attempt, claim_token: null, next_attempt_at: next.at, updated_at: now }
      await this.db
        .updateTable('deliveries')
        .set(changes)
        .where('id', '=', attempt.deliveryId)
        .where('claim_token', '=', attempt.claimToken)
        .where('status', '=', 'pending')
        .execute()
    }

    if (attempt.outcome !== 'canceled') {
      const startedAt = attempt.startedAt
      await this.db
        .updateTable('webhooks')
        .set((eb) => ({
          ...(attempt.outcome === 'succeeded'
            ? { successful_deliveries: eb('successful_deliveries', '+', 1) }
            : { failed_deliveries: eb('failed_deliveries', '+', 1) }),
          // the latest attempt, even when attempts finish out of order
          last_delivery: sql<string>`case when last_delivery is null or last_delivery < ${startedAt} then ${startedAt} else last_delivery end`,
        }))
        .where('id', '=', attempt.webhookId)
        .execute()
    }

    if (!attempt.gone) return
    await this.db
      .updateTable('webhooks')
      .set({ is_active: 0, updated_at: now })
      .where('id', '=', attempt.webhookId)
      .where('is_active', '=', 1)
      .where('deleted_at', 'is', null)
      .execute()
    await this.cancelPendingOf(attempt.webhookId)
  }

  /** Of these webhooks, the ones deleted or deactivated (by any process). */
  async stoppedAmong(webhookIds: readonly string[]): Promise<string[]> {
    if (webhookIds.length === 0) return []
    const rows = await this.db
      .selectFrom('webhooks')
      .select('id')
      .where('id', 'in', webhookIds)
      .where((eb) => eb.or([eb('deleted_at', 'is not', null), eb('is_active', '=', 0)]))
      .execute()
    return rows.map((row) => row.id)
  }
}
