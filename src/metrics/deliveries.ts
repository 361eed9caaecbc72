import { sql } from 'kysely'
import type { Db } from '../db/database.js'
import type { QueueState } from './metrics.js'

interface QueueRow {
  depth: number | string
  oldest: string | null
  succeeded: number | string
  failed: number | string
  drains: number | string
  drains_oldest: string | null
  transfers: number | string
  transfers_oldest: string | null
}

/**
 * One statement per scrape. The queue's count and earliest due time read the partial index
 * deliveries_queue (webhook_id, next_attempt_at) WHERE status = 'pending' alone (a covering
 * index scan on SQLite, an index-only scan on PostgreSQL once the table is vacuumed), so they
 * cost the pending backlog, not the table; 'pending' is a literal because SQLite uses a partial
 * index only for a condition it can match at prepare time. The outcome totals sum the webhooks'
 * statistics (one row per webhook ever created: rows are never deleted, so the sums only grow).
 * The drains and transfers being moved on read the partial indexes drains_due and transfers_due
 * (next_step_at is not null) alone.
 */
export const QUEUE_STATE = sql<QueueRow>`
  select q.depth, q.oldest, s.succeeded, s.failed, d.drains, d.drains_oldest, t.transfers, t.transfers_oldest
  from (select count(*) as depth, min(next_attempt_at) as oldest from deliveries where status = 'pending') q,
       (select coalesce(sum(successful_deliveries), 0) as succeeded, coalesce(sum(failed_deliveries), 0) as failed from webhooks) s,
       (select count(*) as drains, min(next_step_at) as drains_oldest from drains where next_step_at is not null) d,
       (select count(*) as transfers, min(next_step_at) as transfers_oldest from transfers where next_step_at is not null) t
`

/** The queue as the database has it now (PostgreSQL's count and sums come back as text). */
export async function readQueueState(db: Db, nowMs: number = Date.now()): Promise<QueueState> {
  const row = (await QUEUE_STATE.execute(db)).rows[0]
  if (row === undefined) throw new Error('the queue read returned no row')
  // A claimed delivery's next_attempt_at is its claim's lapse, in the future: only due ones count.
  const oldestMs = row.oldest === null ? undefined : Date.parse(row.oldest)
  const drainsOldestMs = row.drains_oldest === null ? undefined : Date.parse(row.drains_oldest)
  const transfersOldestMs = row.transfers_oldest === null ? undefined : Date.parse(row.transfers_oldest)
  return {
    depth: Number(row.depth),
    oldestDueAgeSeconds: oldestMs === undefined || oldestMs > nowMs ? 0 : (nowMs - oldestMs) / 1000,
    succeeded: Number(row.succeeded),
    failed: Number(row.failed),
    drainsInFlight: Number(row.drains),
    drainsOldestDueAgeSeconds: drainsOldestMs === undefined || drainsOldestMs > nowMs ? 0 : (nowMs - drainsOldestMs) / 1000,
    transfersInFlight: Number(row.transfers),
    transfersOldestDueAgeSeconds: transfersOldestMs === undefined || transfersOldestMs > nowMs ? 0 : (nowMs - transfersOldestMs) / 1000,
  }
}
