import { type Db } from '../db/database.js'
import { type AttemptRecord, DeliveriesRepository } from '../db/repositories/deliveries.js'
import { runUnitOfWork, type SignalSink } from '../db/unit-of-work.js'
import type { DispatcherLog } from './dispatcher.js'


/**
 * Writes attempt outcomes: what ends within one event-loop turn is written in one transaction
 * (attempt rows, deliveries, statistics, 410 deactivations). A failed write is tried again;
 * if the process dies first, the claims' leases make the deliveries due again.
 */
export class OutcomeWriter {
  private pending: AttemptRecord[] = []
  private scheduled = false
  private writing: Promise<void> | undefined
  private closing = false

  constructor(
    private readonly db: Db,
    private readonly sink: SignalSink,
    private readonly log: DispatcherLog,
  ) {}

  add(record: AttemptRecord): void {
    this.pending.push(record)
    this.schedule()
  }

  /** Writes everything gathered; stops retrying failed writes. */
  async close(): Promise<void> {
    this.closing = true
    while (this.writing !== undefined || this.pending.length > 0) await this.flush()
  }

  private schedule(): void {
    if (this.scheduled) return
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
          const counts = new Map<string, { succeeded: number; failed: number; lastStartedAt: string }>()
          const gone = new Set<string>()
          for (const record of batch) {
            if (!(await deliveries.record(record))) {
              notRecorded.push(record)
              continue
            }
            if (record.gone) gone.add(record.webhookId)
            if (record.outcome === 'canceled') continue
            const count = counts.get(record.webhookId) ?? { succeeded: 0, failed: 0, lastStartedAt: record.startedAt }
            if (record.outcome === 'succeeded') count.succeeded++
            else count.failed++
            if (record.startedAt > count.lastStartedAt) count.lastStartedAt = record.startedAt
            counts.set(record.webhookId, count)
          }
          // The webhooks last and in id order: every API write of the application locks these
          // rows too, so the lock this takes is held only for these final statements.
          const webhookIds = [...new Set(batch.map((record) => record.webhookId))].sort()
          for (const webhookId of webhookIds) {
            await deliveries.settleWebhook(webhookId, counts.get(webhookId))
            if (gone.has(webhookId)) await deliveries.deactivateGone(webhookId)
          }
          return notRecorded
        },
        { retries: 3 },
      )
      for (const record of lost) {
        // Its lease lapsed before this write and another dispatcher took the delivery (which
        // then delivers it again): the lease (2 × timeout + 1 s) was shorter than this stall.
        this.log.warn({ deliveryId: record.deliveryId, webhookId: record.webhookId, attempt: record.attempt }, 'webhook dispatcher: attempt outcome not recorded: its claim had lapsed')
      }
    } catch (error) {
      this.log.error({ err: error }, 'webhook dispatcher: recording attempt outcomes failed')
      if (this.closing) return
      this.pending = batch.concat(this.pending)
      setTimeout(() => this.schedule(), 250).unref()
    }
  }
}
