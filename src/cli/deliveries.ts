import type { Db } from '../db/database.js'
import { deliveryStatsOf } from '../db/repositories/webhooks.js'
import type { Webhook } from '../schemas/webhooks.js'
import type { Selectable } from 'kysely'
import type { DeliveryAttemptsTable, DeliveryStatus } from '../db/schema.js'

/** A webhook as the operator's audit view shows it: never its signing secret. */
export interface AuditWebhook {
  id: string
  app_id: string
  name: string
  url: string
  isActive: boolean
  encrypted: boolean
  deleted_at: string | null
  delivery_stats: Webhook['delivery_stats']
}

/** One attempt as stored, without the keys that tie it to its delivery. */
export type AuditAttempt = Omit<Selectable<DeliveryAttemptsTable>, 'id' | 'delivery_id' | 'webhook_id'>

export interface AuditDelivery {
  id: string
  event_id: string
  event_type: string
  event_created_at: string
  status: DeliveryStatus
  attempts: number
  /** when the next attempt is due (or a claim lapses); null once the delivery has ended */
  next_attempt_at: string | null
  created_at: string
  updated_at: string
  /** oldest first */
  attempt_log: AuditAttempt[]
}

/**
 * Any webhook by id, in any application, deleted or not (deleted rows stay for audit). The
 * signing secret is not even selected.
 */
export async function findWebhookForAudit(db: Db, id: string): Promise<AuditWebhook | undefined> {
  const row = await db
    .selectFrom('webhooks')
    .select([
      'id',
      'app_id',
      'name',
      'url',
      'is_active',
      'encrypted',
      'deleted_at',
      'total_events',
      'successful_deliveries',
      'failed_deliveries',
      'last_delivery',
    ])
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst()
  if (row === undefined) return undefined
  return {
    id: row.id,
    app_id: row.app_id,
    name: row.name,
    url: row.url,
    isActive: row.is_active === 1,
    encrypted: row.encrypted === 1,
    deleted_at: row.deleted_at,
    delivery_stats: deliveryStatsOf(row),
  }
}

/** The webhook's newest `limit` deliveries (newest first), each with its attempts (oldest first). */
export async function listDeliveriesForAudit(db: Db, webhookId: string, limit: number): Promise<AuditDelivery[]> {
  const rows = await db
    .selectFrom('deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.event_id',
      'e.type as event_type',
      'e.created_at as event_created_at',
      'd.status',
      'd.attempts',
      'd.next_attempt_at',
      'd.created_at',
      'd.updated_at',
    ])
    .where('d.webhook_id', '=', webhookId)
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit)
    .execute()
  if (rows.length === 0) return []

  const attempts = await db
    .selectFrom('delivery_attempts')
    .select(['delivery_id', 'attempt', 'started_at', 'duration_ms', 'outcome', 'status_code', 'error', 'response_body'])
    .where(
      'delivery_id',
      'in',
      rows.map((row) => row.id),
    )
    // An attempt given back at shutdown is tried again under the same number: time decides.
    .orderBy('started_at')
    .orderBy('attempt')
    .orderBy('id')
    .execute()
  const log = new Map<string, AuditAttempt[]>()
  for (const { delivery_id: deliveryId, ...attempt } of attempts) {
    let list = log.get(deliveryId)
    if (list === undefined) {
      list = []
      log.set(deliveryId, list)
    }
    list.push(attempt)
  }

  return rows.map((row) => ({
    ...row,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    attempt_log: log.get(row.id) ?? [],
  }))
}
