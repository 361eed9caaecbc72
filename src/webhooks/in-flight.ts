import type { DueDelivery } from '../db/repositories/deliveries.js'
import type { StopReason } from './outcome.js'

/** An attempt on the wire (or about to be). */
export interface Attempt {
  delivery: DueDelivery
  claimToken: string
  number: number
  startedAtMs: number
  controller: AbortController
  /** why it was aborted, when it was */
  stop: StopReason | undefined
  /**
   * Settles once the claim's transaction has ended: true when it committed. The outcome is
   * written only after that: on PostgreSQL a write that started before the claim's commit was
   * visible would not see the claim's token and would record nothing.
   */
  claimCommitted: Promise<boolean>
  /** settles when the request has been written to its socket (or ended without being written) */
  written: Promise<void>
}

/**
 * The attempts this dispatcher has on the wire, by webhook (and counted by application): what
 * the caps count and what a stopped webhook's abort reaches. An attempt is added before its claim commits, so a deletion
 * that waited for that commit always finds it here.
 */
export class InFlightRegistry {
  private readonly byWebhook = new Map<string, Set<Attempt>>()
  private readonly perApp = new Map<string, number>()
  private total = 0
  private idle: (() => void)[] = []

  get size(): number {
    return this.total
  }

  countFor(webhookId: string): number {
    return this.byWebhook.get(webhookId)?.size ?? 0
  }

  countForApp(appId: string): number {
    return this.perApp.get(appId) ?? 0
  }

  webhooks(): string[] {
    return [...this.byWebhook.keys()]
  }

  has(attempt: Attempt): boolean {
    return this.byWebhook.get(attempt.delivery.webhook_id)?.has(attempt) ?? false
  }

  add(attempt: Attempt): void {
    let attempts = this.byWebhook.get(attempt.delivery.webhook_id)
    if (attempts === undefined) {
      attempts = new Set()
      this.byWebhook.set(attempt.delivery.webhook_id, attempts)
    }
    attempts.add(attempt)
    this.perApp.set(attempt.delivery.app_id, this.countForApp(attempt.delivery.app_id) + 1)
    this.total++
  }

  remove(attempt: Attempt): void {
    const attempts = this.byWebhook.get(attempt.delivery.webhook_id)
    if (attempts === undefined || !attempts.delete(attempt)) return
    if (attempts.size === 0) this.byWebhook.delete(attempt.delivery.webhook_id)
    const ofApp = this.countForApp(attempt.delivery.app_id) - 1
    if (ofApp === 0) this.perApp.delete(attempt.delivery.app_id)
    else this.perApp.set(attempt.delivery.app_id, ofApp)
    this.total--
    if (this.total === 0) for (const resolve of this.idle.splice(0)) resolve()
  }

  /** Aborts the webhook's attempts (or all, without an id), keeping the first reason given. */
  abort(reason: StopReason, webhookId?: string): void {
    const groups = webhookId === undefined ? [...this.byWebhook.values()] : [this.byWebhook.get(webhookId) ?? new Set<Attempt>()]
    for (const attempts of groups) {
      for (const attempt of attempts) {
        attempt.stop ??= reason
        attempt.controller.abort()
      }
    }
  }

  whenIdle(): Promise<void> {
    if (this.total === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }
}
