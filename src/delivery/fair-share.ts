import { isCircuitOpen } from '../db/circuit.js'

/** A webhook with due deliveries, as the claim sees it. */
export interface DueQueue {
  webhookId: string
  appId: string
  /** its circuit is open: one attempt at a time */
  circuitOpen: boolean
}

/** A queue as DeliveriesRepository.dueQueues reads it, as FairShare plans with it. */
export function toDueQueue(row: { webhook_id: string; app_id: string; consecutive_failures: number }): DueQueue {
  return { webhookId: row.webhook_id, appId: row.app_id, circuitOpen: isCircuitOpen(row.consecutive_failures) }
}

/** The caps on attempts in flight, in this dispatcher. */
export interface Caps {
  /** slots free in all */
  free: number
  perApp: number
  perWebhook: number
}

/** What this dispatcher has on the wire now. */
export interface InFlightCounts {
  countForApp(appId: string): number
  countFor(webhookId: string): number
}

/** Attempts the application may still start now: its cap less what it holds. */
export function appRoom(appId: string, caps: Pick<Caps, 'perApp'>, inFlight: InFlightCounts): number {
  return caps.perApp - inFlight.countForApp(appId)
}

/** Attempts the webhook may still start now: its cap (1 while its circuit is open) less what it holds. */
export function webhookRoom(queue: DueQueue, caps: Pick<Caps, 'perWebhook'>, inFlight: InFlightCounts): number {
  return (queue.circuitOpen ? 1 : caps.perWebhook) - inFlight.countFor(queue.webhookId)
}

/**
 * Shares the free slots among the webhooks with due deliveries: round-robin over applications,
 * and within each application round-robin over its webhooks, one slot per turn, within the caps
 * (per application, per webhook, one for an open circuit). Applications and webhooks that were
 * served least recently go first, so when slots are short every one gets its turn across claims.
 * Returns how many deliveries to take from each webhook (at most: a webhook may have fewer due).
 */
export class FairShare {
  /** when each application and webhook was last given a slot (a claim counter) */
  private readonly lastServed = new Map<string, number>()
  private claims = 0

  plan(queues: readonly DueQueue[], caps: Caps, inFlight: InFlightCounts): Map<string, number> {
    const byApp = new Map<string, DueQueue[]>()
    for (const queue of queues) {
      let webhooks = byApp.get(queue.appId)
      if (webhooks === undefined) {
        webhooks = []
        byApp.set(queue.appId, webhooks)
      }
      webhooks.push(queue)
    }

    const turns: { room: number; webhooks: { id: string; room: number }[]; next: number }[] = []
    for (const appId of this.leastRecentFirst([...byApp.keys()], (id) => id)) {
      const room = appRoom(appId, caps, inFlight)
      if (room <= 0) continue
      const webhooks = this.leastRecentFirst(byApp.get(appId) ?? [], (queue) => queue.webhookId)
        .map((queue) => ({ id: queue.webhookId, room: webhookRoom(queue, caps, inFlight) }))
        .filter((webhook) => webhook.room > 0)
      if (webhooks.length > 0) turns.push({ room, webhooks, next: 0 })
    }

    const plan = new Map<string, number>()
    let free = caps.free
    let active = turns
    while (free > 0 && active.length > 0) {
      for (const turn of active) {
        if (free === 0) break
        // this application's next webhook that still has room
        const webhook = turn.webhooks[turn.next % turn.webhooks.length]
        if (webhook === undefined) continue
        plan.set(webhook.id, (plan.get(webhook.id) ?? 0) + 1)
        webhook.room--
        turn.room--
        free--
        if (webhook.room === 0) turn.webhooks.splice(turn.next % turn.webhooks.length, 1)
        else turn.next++
      }
      active = active.filter((turn) => turn.room > 0 && turn.webhooks.length > 0)
    }

    this.claims++
    const present = new Set(queues.flatMap((queue) => [queue.appId, queue.webhookId]))
    for (const key of this.lastServed.keys()) if (!present.has(key)) this.lastServed.delete(key)
    for (const [webhookId] of plan) this.lastServed.set(webhookId, this.claims)
    for (const queue of queues) if (plan.has(queue.webhookId)) this.lastServed.set(queue.appId, this.claims)
    return plan
  }

  private leastRecentFirst<T>(items: T[], idOf: (item: T) => string): T[] {
    const served = (item: T) => this.lastServed.get(idOf(item)) ?? -1
    return items.sort((a, b) => served(a) - served(b) || (idOf(a) < idOf(b) ? -1 : idOf(a) > idOf(b) ? 1 : 0))
  }
}
