import type { FastifyBaseLogger } from 'fastify'
import type { Config } from '../config.js'
import { type Db, writeTransaction } from '../db/database.js'
import { type AttemptRecord, DeliveriesRepository, type DueDelivery } from '../db/repositories/deliveries.js'
import { newId } from '../db/time.js'
import { type ResolveHost, systemResolver } from './address-guard.js'
import type { DeliveryListener } from './notifier.js'
import { parseRetryAfter, RETRY_SCHEDULE_MS, retryDelay } from './retry.js'
import { type SendResult, WebhookSender } from './sender.js'
import { signedRequest } from './signing.js'

/** pino's logger, as Fastify types it (the worker passes a plain pino logger) */
export type DispatcherLog = Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>

export interface DispatcherOptions {
  db: Db
  log: DispatcherLog
  /** an attempt that has no 2xx by then has failed */
  timeoutMs: number
  /** attempts on the wire at once, in all */
  concurrency: number
  /** attempts on the wire at once to one webhook, so one slow receiver can't take every slot */
  perWebhookConcurrency: number
  /** how often to look for work nobody told this process about: retries falling due, other processes' commits */
  pollIntervalMs: number
  /** loopback receivers are allowed outside production */
  allowLoopback: boolean
  resolveHost?: ResolveHost
  retrySchedule?: readonly number[]
  random?: () => number
}

interface Attempt {
  delivery: DueDelivery
  claimToken: string
  number: number
  startedAtMs: number
  controller: AbortController
  /** why it was aborted, when it was */
  stop: 'stopped' | 'shutdown' | undefined
}

/**
 * Delivers pending deliveries: claims due ones in a write transaction, starts their requests
 * inside that same transaction (so a webhook deletion, which needs the write lock too, commits
 * either before the claim — and the delivery is canceled, never started — or after the request
 * began, and aborts it), and records each outcome with the webhook's statistics in one
 * transaction per batch of outcomes.
 */
export class Dispatcher implements DeliveryListener {
  private readonly deliveries: DeliveriesRepository
  private readonly sender: WebhookSender
  private readonly schedule: readonly number[]
  private readonly random: () => number
  /** attempts on the wire, by webhook id */
  private readonly inFlight = new Map<string, Set<Attempt>>()
  private inFlightCount = 0
  private outcomes: AttemptRecord[] = []
  private flushScheduled = false
  /** the outcome write under way, if any */
  private flushing: Promise<void> | undefined
  /** when in-flight webhooks were last checked for deletion by another process */
  private lastStopCheckMs = 0
  private running = false
  private rerun = false
  private kickScheduled = false
  private stopping = false
  private pollTimer: NodeJS.Timeout | undefined
  private idle: (() => void)[] = []

  constructor(private readonly options: DispatcherOptions) {
    this.deliveries = new DeliveriesRepository(options.db)
    this.sender = new WebhookSender({ resolveHost: options.resolveHost ?? systemResolver, allowLoopback: options.allowLoopback })
    this.schedule = options.retrySchedule ?? RETRY_SCHEDULE_MS
    this.random = options.random ?? Math.random
  }

  /** the lease on a claimed delivery: if this process dies, another claims it once this passes */
  private get leaseMs(): number {
    return 2 * this.options.timeoutMs + 1000
  }

  start(): void {
    this.kick()
  }

  deliveriesCommitted(): void {
    this.kick()
  }

  webhookStopped(webhookId: string): void {
    const attempts = this.inFlight.get(webhookId)
    if (attempts === undefined) return
    for (const attempt of attempts) {
      attempt.stop ??= 'stopped'
      attempt.controller.abort()
    }
  }

  /** Stops claiming, lets attempts on the wire finish for up to `graceMs`, aborts the rest, writes every outcome. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true
    clearTimeout(this.pollTimer)
    if (this.inFlightCount > 0) {
      await Promise.race([this.whenIdle(), new Promise((resolve) => setTimeout(resolve, graceMs))])
      for (const attempts of this.inFlight.values()) {
        for (const attempt of attempts) {
          attempt.stop ??= 'shutdown'
          attempt.controller.abort()
        }
      }
      await this.whenIdle()
    }
    while (this.flushing !== undefined || this.outcomes.length > 0) await this.flush()
    this.sender.close()
  }

  private whenIdle(): Promise<void> {
    if (this.inFlightCount === 0) return Promise.resolve()
    return new Promise((resolve) => this.idle.push(resolve))
  }

  /** Runs the claim loop soon (once, however many commits asked for it in this tick). */
  private kick(): void {
    if (this.stopping) return
    if (this.running) {
      this.rerun = true
      return
    }
    if (this.kickScheduled) return
    this.kickScheduled = true
    setImmediate(() => {
      this.kickScheduled = false
      void this.run()
    })
  }

  private async run(): Promise<void> {
    if (this.running || this.stopping) return
    this.running = true
    clearTimeout(this.pollTimer)
    try {
      do {
        this.rerun = false
        // A full batch means more may be due right now.
        if (await this.claimAndStart()) this.rerun = true
        await this.abortStoppedElsewhere()
      } while (this.rerun && !this.stopping)
    } catch (error) {
      this.options.log.error({ err: error }, 'webhook dispatcher: claiming deliveries failed; retrying at the next poll')
    } finally {
      this.running = false
      if (!this.stopping) this.pollTimer = setTimeout(() => this.kick(), this.options.pollIntervalMs)
    }
  }

  /** Claims what is due and fits the free slots, and starts it. True when it filled its batch. */
  private async claimAndStart(): Promise<boolean> {
    const free = this.options.concurrency - this.inFlightCount
    if (free <= 0) return false
    const saturated: string[] = []
    for (const [webhookId, attempts] of this.inFlight) {
      if (attempts.size >= this.options.perWebhookConcurrency) saturated.push(webhookId)
    }
    const limit = Math.min(free, 500)
    return writeTransaction(this.options.db, async (tx) => {
      const deliveries = new DeliveriesRepository(tx)
      const nowMs = Date.now()
      const due = await deliveries.due(new Date(nowMs).toISOString(), saturated, limit)
      const chosen: DueDelivery[] = []
      const taken = new Map<string, number>()
      for (const delivery of due) {
        const busy = (this.inFlight.get(delivery.webhook_id)?.size ?? 0) + (taken.get(delivery.webhook_id) ?? 0)
        if (busy >= this.options.perWebhookConcurrency) continue
        taken.set(delivery.webhook_id, (taken.get(delivery.webhook_id) ?? 0) + 1)
        chosen.push(delivery)
      }
      if (chosen.length === 0) return false
      const token = newId()
      await deliveries.claim(
        chosen.map((delivery) => delivery.id),
        token,
        new Date(nowMs + this.leaseMs).toISOString(),
      )
      // Started before this transaction commits: see the class comment.
      for (const delivery of chosen) this.begin(delivery, token)
      return due.length === limit
    })
  }

  /**
   * For a separate worker: deletions committed by the server process reach it here, once per
   * poll interval (in the server's own process they arrive at once, through `webhookStopped`).
   */
  private async abortStoppedElsewhere(): Promise<void> {
    if (this.inFlight.size === 0 || Date.now() - this.lastStopCheckMs < this.options.pollIntervalMs) return
    this.lastStopCheckMs = Date.now()
    for (const webhookId of await this.deliveries.stoppedAmong([...this.inFlight.keys()])) this.webhookStopped(webhookId)
  }

  private begin(delivery: DueDelivery, claimToken: string): void {
    const attempt: Attempt = {
      delivery,
      claimToken,
      number: delivery.attempts + 1,
      startedAtMs: Date.now(),
      controller: new AbortController(),
      stop: undefined,
    }
    let attempts = this.inFlight.get(delivery.webhook_id)
    if (attempts === undefined) {
      attempts = new Set()
      this.inFlight.set(delivery.webhook_id, attempts)
    }
    attempts.add(attempt)
    this.inFlightCount++

    const request = signedRequest({
      eventId: delivery.event_id,
      payload: delivery.payload,
      signingSecret: delivery.signing_secret,
      encrypted: delivery.encrypted === 1,
      nowMs: attempt.startedAtMs,
    })
    this.sender
      .send({ url: delivery.url, headers: request.headers, body: request.body, timeoutMs: this.options.timeoutMs, signal: attempt.controller.signal })
      .catch((error: unknown): SendResult => ({ kind: 'error', message: error instanceof Error ? error.message : String(error) }))
      .then((result) => this.finish(attempt, result))
  }

  private finish(attempt: Attempt, result: SendResult): void {
    const webhookId = attempt.delivery.webhook_id
    const attempts = this.inFlight.get(webhookId)
    attempts?.delete(attempt)
    if (attempts?.size === 0) this.inFlight.delete(webhookId)
    this.inFlightCount--

    const nowMs = Date.now()
    const base = {
      deliveryId: attempt.delivery.id,
      webhookId,
      claimToken: attempt.claimToken,
      attempt: attempt.number,
      startedAt: new Date(attempt.startedAtMs).toISOString(),
      durationMs: nowMs - attempt.startedAtMs,
      gone: false,
    }
    const response = result.kind === 'response' ? result : undefined
    const statusCode = response?.status ?? null
    const responseBody = response?.body ?? null
    let record: AttemptRecord
    if (attempt.stop !== undefined) {
      record = {
        ...base,
        outcome: 'canceled',
        statusCode,
        error: attempt.stop === 'stopped' ? 'aborted: webhook deleted or deactivated' : 'aborted: dispatcher shut down',
        responseBody,
        // Deleted or deactivated: the delivery is already canceled. Shut down: due again at once.
        next: attempt.stop === 'shutdown' ? { status: 'release' } : { status: 'unchanged' },
      }
    } else if (response !== undefined && response.status >= 200 && response.status < 300) {
      record = { ...base, outcome: 'succeeded', statusCode, error: null, responseBody, next: { status: 'succeeded', at: new Date(nowMs).toISOString() } }
    } else {
      const retryAfterMs = response !== undefined && (response.status === 429 || response.status === 503) ? parseRetryAfter(response.retryAfter, nowMs) : undefined
      const gone = response?.status === 410
      const delay = gone ? undefined : retryDelay(attempt.number, { schedule: this.schedule, random: this.random, retryAfterMs })
      record = {
        ...base,
        outcome: 'failed',
        statusCode,
        error: result.kind === 'error' ? result.message : `HTTP ${result.status}`,
        responseBody,
        next: delay === undefined ? { status: 'failed', at: new Date(nowMs).toISOString() } : { status: 'pending', at: new Date(nowMs + delay).toISOString() },
        gone,
      }
    }
    this.outcomes.push(record)
    this.scheduleFlush()
    if (this.inFlightCount === 0) for (const resolve of this.idle.splice(0)) resolve()
    this.kick()
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return
    this.flushScheduled = true
    setImmediate(() => {
      this.flushScheduled = false
      void this.flush()
    })
  }

  /** Writes the outcomes gathered so far in one transaction (attempt rows, deliveries, statistics). */
  private flush(): Promise<void> {
    if (this.flushing !== undefined) return this.flushing
    if (this.outcomes.length === 0) return Promise.resolve()
    const batch = this.outcomes
    this.outcomes = []
    this.flushing = this.write(batch).finally(() => {
      this.flushing = undefined
      if (this.outcomes.length > 0) this.scheduleFlush()
    })
    return this.flushing
  }

  private async write(batch: AttemptRecord[]): Promise<void> {
    try {
      await writeTransaction(this.options.db, async (tx) => {
        const deliveries = new DeliveriesRepository(tx)
        for (const record of batch) await deliveries.record(record)
      })
      for (const record of batch) if (record.gone) this.webhookStopped(record.webhookId)
    } catch (error) {
      // Not written: the claims' leases make the deliveries due again if these are lost.
      this.options.log.error({ err: error }, 'webhook dispatcher: recording attempt outcomes failed')
      if (this.stopping) return
      this.outcomes = batch.concat(this.outcomes)
      setTimeout(() => this.scheduleFlush(), 100)
    }
  }
}


/** Extra dispatcher settings that are not configuration: injected by tests and benchmarks. */
export type DispatcherOverrides = Partial<Pick<DispatcherOptions, 'resolveHost' | 'retrySchedule' | 'random'>>

export function createDispatcher(config: Config, db: Db, log: DispatcherLog, overrides: DispatcherOverrides = {}): Dispatcher {
  return new Dispatcher({
    db,
    log,
    timeoutMs: config.webhooks.timeoutMs,
    concurrency: config.webhooks.concurrency,
    perWebhookConcurrency: config.webhooks.perWebhookConcurrency,
    pollIntervalMs: config.webhooks.pollIntervalMs,
    allowLoopback: config.nodeEnv !== 'production',
    ...overrides,
  })
}

/** How long a stopping dispatcher lets attempts on the wire finish before aborting them. */
export function shutdownGraceMs(config: Config): number {
  return Math.min(5000, config.webhooks.timeoutMs)
}
