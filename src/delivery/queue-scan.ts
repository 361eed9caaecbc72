import { type Db, planningRead } from '../db/database.js'
import { DeliveriesRepository } from '../events/deliveries-repository.js'
import { type DueQueue, toDueQueue } from './fair-share.js'

/**
 * Webhooks with pending deliveries that one read of the scan looks at: a bounded read (about
 * 0.6 ms on SQLite), so a claim never holds the event loop for long however many webhooks wait.
 */
export const QUEUE_WINDOW = 256

/**
 * The claim's search for webhooks with due deliveries, a window of QUEUE_WINDOW webhooks at a
 * time, in webhook order, each window its own read. A claim reads windows until it has found as
 * many due webhooks as it has free slots, or has looked at every waiting webhook once; the next
 * claim goes on from where this one stopped, so across claims every webhook gets its turn (round
 * robin) and a claim's cost follows its free slots, not the number of webhooks waiting.
 */
export class QueueScan {
  /** the webhook the last window ended at ('' : start from the first) */
  private cursor = ''

  constructor(
    private readonly db: Db,
    private readonly windowSize = QUEUE_WINDOW,
  ) {}

  /** Due queues, at least `wanted` of them if that many are due, leaving out `skipApps`. */
  async due(now: string, skipApps: readonly string[], wanted: number): Promise<DueQueue[]> {
    const start = this.cursor
    const found: DueQueue[] = []
    let after = start
    /** set on the second lap: from the first webhook up to where the scan began */
    let until: string | undefined
    for (;;) {
      const window = await planningRead(this.db, (tx) => new DeliveriesRepository(tx).dueQueues(now, skipApps, { after, size: this.windowSize, until }))
      for (const row of window.due) found.push(toDueQueue(row))
      if (window.next !== undefined) {
        after = window.next
        this.cursor = window.next
        if (found.length >= wanted) return found
      } else if (until === undefined && start !== '') {
        // The end of the queues: the second lap covers those before where this scan began.
        after = ''
        until = start
      } else {
        // Every waiting webhook seen once: the next claim starts where this one did.
        this.cursor = until ?? ''
        return found
      }
    }
  }
}
