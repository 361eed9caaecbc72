import { chunks } from '../chunks.js'
import { backendOf, type Db } from '../database.js'
import type { UnitOfWork } from '../unit-of-work.js'
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
  'webhook.test',
] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** The transactional outbox: only meaningful inside a unit of work. */
export class EventsRepository {
  constructor(
    private readonly db: Db,
    private readonly unit: UnitOfWork,
  ) {}

  /**
   * Writes the event and one pending delivery per active webhook of the application, and counts
   * it in each webhook's total_events. Run it in the transaction that makes the change, so the
   * change, its event and its deliveries commit together or not at all.
   *
   * The webhooks are locked (PostgreSQL; in id order, as every multi-webhook writer does) before
   * their deliveries are written: a concurrent DELETE or deactivation either committed first (the
   * row no longer matches: no delivery) or waits for this commit and then cancels what it wrote.
   * Reading them without the lock would let a DELETE commit in between and leave a pending
   * delivery no dispatcher would ever claim.
   */
  async emit(appId: string, type: EventType, data: unknown): Promise<string> {
    return (await this.write(appId, type, data, undefined)).eventId
  }

  /**
   * An event for one webhook only (`webhook.test`): the same outbox, one delivery. The caller has
   * locked the webhook (WebhooksRepository.lockForDelivery) and checked it is active.
   */
  async emitTo(appId: string, webhookId: string, type: EventType, data: unknown): Promise<{ eventId: string; deliveryId: string }> {
    const written = await this.write(appId, type, data, webhookId)
    const deliveryId = written.deliveryIds[0]
    if (deliveryId === undefined) throw new Error(`webhook ${webhookId} took no delivery of its own event`)
    return { eventId: written.eventId, deliveryId }
  }

  private async write(appId: string, type: EventType, data: unknown, only: string | undefined): Promise<{ eventId: string; deliveryIds: string[] }> {
    const id = newId()
    const now = nowIso()
    const payload = JSON.stringify({ id, type, created_at: now, data })
    await this.db.insertInto('events').values({ id, app_id: appId, type, payload, created_at: now }).execute()
    let active = this.db
      .selectFrom('webhooks')
      .select('id')
      .where('app_id', '=', appId)
      .where('deleted_at', 'is', null)
      .where('is_active', '=', 1)
      .orderBy('id')
    if (only !== undefined) active = active.where('id', '=', only)
    if (backendOf(this.db) === 'postgres') active = active.forNoKeyUpdate()
    const webhooks = await active.execute()
    const deliveryIds: string[] = []
    if (webhooks.length === 0) return { eventId: id, deliveryIds }
    for (const part of chunks(webhooks)) {
      const rows = part.map((webhook) => ({
        id: newId(),
        event_id: id,
        webhook_id: webhook.id,
        app_id: appId,
        status: 'pending' as const,
        attempts: 0,
        next_attempt_at: now,
        claim_token: null,
        resend: 0,
        created_at: now,
        updated_at: now,
      }))
      await this.db.insertInto('deliveries').values(rows).execute()
      for (const row of rows) deliveryIds.push(row.id)
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
    this.unit.deliveriesWritten()
    return { eventId: id, deliveryIds }
  }
}
