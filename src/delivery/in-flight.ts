import type { DueDelivery } from '../events/deliveries-repository.js'
import type { StopReason } from './outcome.js'
import type { AttemptAbort } from './sender.js'

/** An attempt on the wire (or about to be). */
export interface Attempt {
  delivery: DueDelivery
  claimToken: string
  number: number
  startedAtMs: number
  abort: AttemptAbort
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
 * The attempts this dispatcher has on the wire, by webhook: what a stopped webhook's abort
 * reaches and what shutdown waits for. An attempt is added before its claim commits, so a
 * deletion that waited for that commit always finds it here. The caps count an attempt from its
 * start until its outcome is written (`release`): until then its webhook's circuit and the
 * delivery's state are not yet updated, so another attempt must not take its place.
 */
export class InFlightRegistry {
  private readonly onWire = new Map<string, Set<Attempt>>()
  private readonly heldByWebhook = new Map<string, number>()
  private readonly heldByApp = new Map<string, number>()
  private total = 0
  private idle: (() => void)[] = []

  /** attempts on the wire */
  get size(): number {
    return this.total
  }

  /** the webhook's attempts on the wire or not yet recorded */
  countFor(webhookId: string): number {
    return this.heldByWebhook.get(webhookId) ?? 0
  }

  /** the application's attempts on the wire or not yet recorded */
  countForApp(appId: string): number {
    return this.heldByApp.get(appId) ?? 0
  }

  /** applications holding at least `cap` attempts (on the wire or not yet recorded) */
  appsAt(cap: number): string[] {
    const full: string[] = []
    for (const [appId, held] of this.heldByApp) if (held >= cap) full.push(appId)
    return full
  }

  /** webhooks with attempts on the wire */
  webhooks(): string[] {
    return [...this.onWire.keys()]
  }

  add(attempt: Attempt): void {
    let attempts = this.onWire.get(attempt.delivery.webhook_id)
    if (attempts === undefined) {
      attempts = new Set()
      this.onWire.set(attempt.delivery.webhook_id, attempts)
    }
    attempts.add(attempt)
    bump(this.heldByWebhook, attempt.delivery.webhook_id, 1)
    bump(this.heldByApp, attempt.delivery.app_id, 1)
    this.total++
  }

  /** The attempt's request has ended; it still counts against the caps until `release`. */
  remove(attempt: Attempt): void {
    const attempts = this.onWire.get(attempt.delivery.webhook_id)
    if (attempts === undefined || !attempts.delete(attempt)) return
    if (attempts.size === 0) this.onWire.delete(attempt.delivery.webhook_id)
    this.total--
    if (this.total === 0) for (const resolve of this.idle.splice(0)) resolve()
  }

  /** The attempt's outcome is written (or will never be): it no longer counts against the caps. */
  release(attempt: Attempt): void {
    bump(this.heldByWebhook, attempt.delivery.webhook_id, -1)
    bump(this.heldByApp, attempt.delivery.app_id, -1)
  }

  /** Aborts the webhook's attempts on the wire (or all, without an id), keeping the first reason given. */
  abort(reason: StopReason, webhookId?: string): void {
    const groups = webhookId === undefined ? [...this.onWire.values()] : [this.onWire.get(webhookId) ?? new Set<Attempt>()]
    for (const attempts of groups) {
      for (const attempt of attempts) {
        attempt.stop ??= reason
        attempt.abort.abort()
      }
    }
  }

  /** Settles once no attempt is on the wire. */
  whenIdle(): Promise<void> {
    if (this.total === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const count = (counts.get(key) ?? 0) + by
  if (count <= 0) counts.delete(key)
  else counts.set(key, count)
}
