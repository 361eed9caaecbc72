import type { Db } from '../db/database.js'
import { deliveryStatsOf } from '../resources/webhooks/objects.js'
import { TOTAL_EVENTS } from '../resources/webhooks/repository.js'
import type { Webhook } from '../resources/webhooks/schemas.js'
import { isCircuitOpen } from '../db/circuit.js'
import { DeliveryLogRepository, type LoggedAttempt, type LoggedDelivery } from '../resources/webhooks/delivery-log-repository.js'

/** A webhook as the operator's audit view shows it: never its signing secret. */
export interface AuditWebhook {
  id: string
  app_id: string
  name: string
  url: string
  /** false once deleted: a deleted webhook receives nothing, whatever it was set to before */
  isActive: boolean
  encrypted: boolean
  deleted_at: string | null
  delivery_stats: Webhook['delivery_stats']
  /** open after CIRCUIT_THRESHOLD (db/circuit.ts) failed attempts in a row: one attempt at a time, none before retry_at */
  circuit: { state: 'open' | 'closed'; consecutive_failures: number; retry_at: string | null }
}

export type AuditAttempt = LoggedAttempt
export type AuditDelivery = Omit<LoggedDelivery, 'webhook_id'>

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
      'successful_deliveries',
      'failed_deliveries',
      'last_delivery',
      'consecutive_failures',
      'circuit_retry_at',
    ])
    .select(TOTAL_EVENTS)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst()
  if (row === undefined) return undefined
  return {
    id: row.id,
    app_id: row.app_id,
    name: row.name,
    url: row.url,
    isActive: row.is_active === 1 && row.deleted_at === null,
    encrypted: row.encrypted === 1,
    deleted_at: row.deleted_at,
    delivery_stats: deliveryStatsOf(row),
    circuit: isCircuitOpen(row.consecutive_failures)
      ? { state: 'open', consecutive_failures: row.consecutive_failures, retry_at: row.circuit_retry_at }
      : { state: 'closed', consecutive_failures: row.consecutive_failures, retry_at: null },
  }
}

/** The webhook's newest `limit` deliveries (newest first), each with its attempts (oldest first). */
export async function listDeliveriesForAudit(db: Db, webhookId: string, limit: number): Promise<AuditDelivery[]> {
  const entries = await new DeliveryLogRepository(db).forOperator(webhookId, { skip: 0, take: limit })
  return entries.map(({ webhook_id: _webhookId, ...entry }) => entry)
}
