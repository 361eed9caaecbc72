import { chunks } from '../chunks.js'
import type { Db } from '../database.js'
import { newId, nowIso } from '../time.js'

export const EVENT_TYPES = [
  'customer.created',
  'customer.updated',
  'liquidation_address.created',
  'tax.created',
  'tax.updated',
  'tax.deleted',
  'webhook.created',
  'webhook.updated',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** The transactional outbox. Only meaningful on a transaction (`writeTransaction`'s `tx`). */
export class EventsRepository {
  /** deliveries written by this repository; the caller wakes the dispatcher after commit when > 0 */
  deliveriesWritten = 0

  constructor(private readonly db: Db) {}

  /**
   * Writes the event and one pending delivery per active webhook of the application, and counts
   * it in each webhook's total_events. Run it in the transaction that makes the change, so the
   * change, its event and its deliveries commit together or not at all.
   */
  async emit(appId: string, type: EventType, data: unknown): Promise<string> {
    const id = newId()
    const now = nowIso()
    const payload = JSON.stringify({ id, type, created_at: now, data })
    await this.db.insertInto('events').values({ id, app_id: appId, type, payload, created_at: now }).execute()
    const webhooks = await this.db
      .selectFrom('webhooks')
      .select('id')
      .where('app_id', '=', appId)
      .where('deleted_at', 'is', null)
      .where('is_active', '=', 1)
      .execute()
    if (webhooks.length === 0) return id
    for (const part of chunks(webhooks)) {
      await this.db
        .insertInto('deliveries')
        .values(
          part.map((webhook) => ({
            id: newId(),
            event_id: id,
            webhook_id: webhook.id,
            app_id: appId,
            status: 'pending' as const,
            attempts: 0,
            next_attempt_at: now,
            claim_token: null,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute()
      await this.db
        .updateTable('webhooks')
        .set((eb) => ({ total_events: eb('total_events', '+', 1) }))
        .where(
          'id',
          'in',
          part.map((webhook) => webhook.id),
        )
        .execute()
    }
    this.deliveriesWritten += webhooks.length
    return id
  }
}
