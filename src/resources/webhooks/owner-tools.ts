import type { Db } from '../../db/database.js'
import { Conflict, NotFound } from '../../errors.js'
import type { Transact, Transaction } from '../../events/transact.js'
import { DeliveryLogRepository, type LoggedDelivery, type LogOwner } from './delivery-log-repository.js'
import { toWebhook } from './objects.js'
import { type WebhookRow, WebhooksRepository } from './repository.js'

/**
 * The webhook owner's tools, as the API's routes and the console's page both use them: the log, a
 * resend, a test event and a replay of what failed. Every one is scoped to the caller's
 * application: another application's webhook or delivery is NotFound.
 */

export const WEBHOOK_NOT_FOUND = 'Webhook not found'
export const DELIVERY_NOT_FOUND = 'Delivery not found'
const WEBHOOK_INACTIVE = 'Webhook is inactive: activate it (PATCH isActive true) to send to it'
const DELIVERY_NOT_ENDED = 'Delivery is pending or being attempted: it can be retried once it has succeeded, failed or been canceled'

export type { LoggedDelivery, WebhookRow }
export type OwnerEnvironment = 'sandbox' | 'live'

/** Why nothing can be sent to a deleted webhook, while its log can still be read. */
export function webhookDeletedMessage(deletedAt: string): string {
  return `Webhook was deleted at ${deletedAt}: its delivery log stays readable, but nothing can be sent to it`
}

/** The application's webhooks that are not deleted, newest first. */
export async function webhooksOf(db: Db, appId: string, take = 100): Promise<WebhookRow[]> {
  return new WebhooksRepository(db).list(appId, { skip: 0, take })
}

/** The application's webhook (not deleted), or NotFound. */
export async function ownedWebhook(db: Db, appId: string, webhookId: string): Promise<WebhookRow> {
  const webhook = await new WebhooksRepository(db).find(appId, webhookId)
  if (webhook === undefined) throw new NotFound(WEBHOOK_NOT_FOUND)
  return webhook
}

/** A webhook's deliveries with their attempts, newest first; an environment's (and the application's own events) when named. */
export async function deliveryLogOf(db: Db, appId: string, webhookId: string, filter: { take: number; environment?: OwnerEnvironment }): Promise<LoggedDelivery[]> {
  return new DeliveryLogRepository(db).forOwner(appId, webhookId, { skip: 0, take: filter.take, environment: filter.environment })
}

/** Attempts per UTC day since `sinceDay` (YYYY-MM-DD), succeeded and not: the success rate's figures. */
export async function attemptsPerDayOf(db: Db, appId: string, webhookId: string, sinceDay: string, environment: OwnerEnvironment): Promise<Map<string, { succeeded: number; failed: number }>> {
  const days = new Map<string, { succeeded: number; failed: number }>()
  for (const row of await new DeliveryLogRepository(db).attemptsPerDay(appId, webhookId, sinceDay, environment)) {
    const day = days.get(row.day) ?? { succeeded: 0, failed: 0 }
    if (row.outcome === 'succeeded') day.succeeded += row.attempts
    else day.failed += row.attempts
    days.set(row.day, day)
  }
  return days
}

/** The webhook a send is for, locked against a concurrent DELETE or deactivation; Conflict when it is deleted or inactive. */
async function sendableWebhook(tx: Transaction, appId: string, webhookId: string): Promise<WebhookRow> {
  const webhook = await new WebhooksRepository(tx.db, tx.unit).lockForDelivery(appId, webhookId)
  if (webhook === undefined) throw new Conflict(webhookDeletedMessage(await deletedAtOf(tx.db, appId, webhookId)))
  if (webhook.is_active === 0) throw new Conflict(WEBHOOK_INACTIVE)
  return webhook
}

/**
 * One more attempt of an ended delivery, now (a failure ends it again). NotFound for another
 * application's webhook or delivery; Conflict while it is pending or the webhook inactive or deleted.
 */
export async function resendDelivery(transact: Transact, appId: string, webhookId: string, deliveryId: string): Promise<void> {
  await transact(async (tx) => {
    const webhook = await new WebhooksRepository(tx.db, tx.unit).lockForDelivery(appId, webhookId)
    if (webhook === undefined) {
      const deletedAt = await deletedAtOf(tx.db, appId, webhookId)
      if (!(await tx.deliveries.belongsTo(deliveryId, webhookId.toLowerCase()))) throw new NotFound(DELIVERY_NOT_FOUND)
      throw new Conflict(webhookDeletedMessage(deletedAt))
    }
    if (!(await tx.deliveries.belongsTo(deliveryId, webhook.id))) throw new NotFound(DELIVERY_NOT_FOUND)
    if (webhook.is_active === 0) throw new Conflict(WEBHOOK_INACTIVE)
    if (!(await tx.deliveries.resend(deliveryId))) throw new Conflict(DELIVERY_NOT_ENDED)
    await tx.deliveries.circuitAttemptNow(webhook.id)
  })
}

/** A `webhook.test` event to this webhook only; the id of its delivery. */
export async function sendTestEvent(transact: Transact, appId: string, webhookId: string): Promise<string> {
  return transact(async (tx) => {
    const webhook = await sendableWebhook(tx, appId, webhookId)
    await tx.deliveries.circuitAttemptNow(webhook.id)
    return (await tx.events.emitTo(appId, webhook.id, 'webhook.test', toWebhook(webhook))).deliveryId
  })
}

/**
 * Svix's recover: every delivery of the webhook that ended failed since `since` (of the
 * environment's events and the application's own) is attempted once more, now. One transaction:
 * all or none. Returns how many.
 */
export async function replayFailedSince(transact: Transact, appId: string, webhookId: string, since: string, environment: OwnerEnvironment): Promise<number> {
  return transact(async (tx) => {
    const webhook = await sendableWebhook(tx, appId, webhookId)
    let resent = 0
    for (const id of await new DeliveryLogRepository(tx.db).failedSince(appId, webhook.id, since, environment)) if (await tx.deliveries.resend(id)) resent += 1
    if (resent > 0) await tx.deliveries.circuitAttemptNow(webhook.id)
    return resent
  })
}

/** The application's webhook whose log is asked for, deleted or not; 404 when it has none by that id. */
export async function requireLogOwner(log: DeliveryLogRepository, appId: string, webhookId: string): Promise<LogOwner> {
  const owner = await log.ownerOf(appId, webhookId)
  if (owner === undefined) throw new NotFound(WEBHOOK_NOT_FOUND)
  return owner
}

/**
 * When the application's webhook was deleted, for a send that found no live webhook by that id:
 * NotFound when the application never had it (or it is another application's).
 */
export async function deletedAtOf(db: Db, appId: string, webhookId: string): Promise<string> {
  const owner = await requireLogOwner(new DeliveryLogRepository(db), appId, webhookId)
  // lockForDelivery found no live webhook, and a deletion is never undone.
  if (owner.deleted_at === null) throw new Error(`webhook ${webhookId} is neither live nor deleted`)
  return owner.deleted_at
}
