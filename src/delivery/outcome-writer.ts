import { type Db } from '../db/database.js'
import { type AttemptRecord, DeliveriesRepository, type WebhookBatchCounts } from '../events/deliveries-repository.js'
import { isoOf } from '../db/time.js'
import { runUnitOfWork, type SignalSink } from '../db/unit-of-work.js'
import { Incident } from '../incident.js'
import type { DispatcherLog } from './log.js'
import { isCircuitOpen } from '../db/circuit.js'
import { circuitRetryDelay } from './retry.js'

const FIRST_RETRY_MS = 250
const MAX_RETRY_MS = 30_000

/** The wait before writing again after a failed write: 250 ms, doubling to 30 s. Pure. */
export function outcomeRetryDelay(previousMs: number): number {
  return previousMs <= 0 ? FIRST_RETRY_MS : Math.min(MAX_RETRY_MS, previousMs * 2)
}

/**
 * Writes attempt outcomes: what ends within one event-loop turn is written in one transaction
 * (attempt rows, deliveries, statistics, 410 deactivations). A failed write (a full disk, a
 * database outage) is tried again after a growing delay, and the incident is logged once when it
 * starts, at most once a minute while it lasts, and once when writes work again; if the process
 * dies first, the claims' leases make the deliveries due again.
 */
export class OutcomeWriter {
  private pending: AttemptRecord[] = []
  /** what `add` returned for each outcome not yet written */
  private readonly settlers = new Map<AttemptRecord, () => void>()
  private scheduled = false
  private writing: Promise<void> | undefined
  private closing = false
  /** the wait after the last failed write; 0 while writes work */
  private retryDelayMs = 0
  private retryTimer: NodeJS.Timeout | undefined
  /** writes failing (a full disk, an outage), until one works again */
  private readonly writeFailures = new Incident()

  constructor(
    private readonly db: Db,
    private readonly sink: SignalSink,
    private readonly log: DispatcherLog,
    /** spaces an open circuit's attempts: the dispatcher's retry schedule */
    private readonly retry: { schedule: readonly number[]; random: () => number },
  ) {}

  /** When an open circuit's next attempt may start, after this many failures in a row (undefined: closed). */
  private circuitRetryAt = (consecutiveFailures: number): string | undefined =>
    isCircuitOpen(consecutiveFailures) ? isoOf(Date.now() + circuitRetryDelay(consecutiveFailures, this.retry)) : undefined

  /** Queues an outcome; settles once it is written (or given up at close). */
  add(record: AttemptRecord): Promise<void> {
    this.pending.push(record)
    this.schedule()
    return new Promise((resolve) => this.settlers.set(record, resolve))
  }

  /** Writes everything gathered; stops retrying failed writes. */
  async close(): Promise<void> {
    this.closing = true
    clearTimeout(this.retryTimer)
    this.retryTimer = undefined
    while (this.writing !== undefined || this.pending.length > 0) await this.flush()
  }

  private schedule(): void {
    // While backing off, new outcomes wait for the retry: they join its batch.
    if (this.scheduled || (this.retryTimer !== undefined && !this.closing)) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      void this.flush()
    })
  }

  private flush(): Promise<void> {
    if (this.writing !== undefined) return this.writing
    if (this.pending.length === 0) return Promise.resolve()
    const batch = this.pending
    this.pending = []
    this.writing = this.write(batch).finally(() => {
      this.writing = undefined
      if (this.pending.length > 0) this.schedule()
    })
    return this.writing
  }

  private async write(batch: AttemptRecord[]): Promise<void> {
    try {
      const lost = await runUnitOfWork(
        this.db,
        this.sink,
        async (unit) => {
          const deliveries = new DeliveriesRepository(unit.tx, unit)
          const notRecorded: AttemptRecord[] = []
          // in the order the attempts ended, so the failures after the last success are known
          const counts = new Map<string, WebhookBatchCounts>()
          const gone = new Set<string>()
          const recorded = new Set(await deliveries.recordAll(batch))
          for (const record of batch) {
            if (!recorded.has(record)) {
              notRecorded.push(record)
              continue
            }
            if (record.gone) gone.add(record.webhookId)
            if (record.outcome === 'canceled') continue
            const count = counts.get(record.webhookId) ?? { succeeded: 0, failed: 0, failedSinceSuccess: 0, lastStartedAt: record.startedAt }
            if (record.outcome === 'succeeded') {
              count.succeeded++
              count.failedSinceSuccess = 0
            } else {
              count.failed++
              count.failedSinceSuccess++
            }
            if (record.startedAt > count.lastStartedAt) count.lastStartedAt = record.startedAt
            counts.set(record.webhookId, count)
          }
          // The webhooks last and in id order: every API write of the application locks these
          // rows too, so the lock this takes is held only for these final statements.
          const webhookIds = [...new Set(batch.map((record) => record.webhookId))].sort()
          await deliveries.settleWebhooks(new Map(webhookIds.map((webhookId) => [webhookId, counts.get(webhookId)])), this.circuitRetryAt)
          for (const webhookId of webhookIds) if (gone.has(webhookId)) await deliveries.deactivateGone(webhookId)
          return notRecorded
        },
        { retries: 3 },
      )
      for (const record of lost) {
        // Its lease lapsed before this write and another dispatcher took the delivery (which
        // then delivers it again): the lease (2 × timeout + 1 s) was shorter than this stall.
        this.log.warn({ deliveryId: record.deliveryId, webhookId: record.webhookId, attempt: record.attempt }, 'webhook dispatcher: attempt outcome not recorded: its claim had lapsed')
      }
      this.writesWork()
      this.settle(batch)
    } catch (error) {
      this.writeFailed(error, batch.length)
      if (this.closing) {
        this.settle(batch)
        return
      }
      this.pending = batch.concat(this.pending)
      this.retryDelayMs = outcomeRetryDelay(this.retryDelayMs)
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined
        this.schedule()
      }, this.retryDelayMs)
      this.retryTimer.unref()
    }
  }

  private settle(batch: readonly AttemptRecord[]): void {
    for (const record of batch) {
      this.settlers.get(record)?.()
      this.settlers.delete(record)
    }
  }

  private writeFailed(error: unknown, outcomes: number): void {
    const report = this.writeFailures.failed()
    if (report === undefined) return
    this.log.error(
      { err: error, outcomes, ...report, retryInMs: outcomeRetryDelay(this.retryDelayMs) },
      'webhook dispatcher: recording attempt outcomes failed; retrying with a growing delay',
    )
  }

  private writesWork(): void {
    const ended = this.writeFailures.ended()
    if (ended === undefined) return
    this.log.info(ended, 'webhook dispatcher: recording attempt outcomes works again')
    this.retryDelayMs = 0
  }
}
