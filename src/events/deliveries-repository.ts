import { type QueryCreator, sql } from 'kysely'
import { chunks } from '../db/chunks.js'
import { backendOf, type Db, writeTransaction } from '../db/database.js'
import { type BoundQuery, PreparedQuery } from '../db/prepared.js'
import type { UnitOfWork } from '../db/unit-of-work.js'
import type { Database } from '../db/schema.js'
import type { AttemptOutcome, DeliveryStatus } from './tables.js'
import { newId, nowIso } from '../db/time.js'
import { CIRCUIT_THRESHOLD, isCircuitOpen } from '../db/circuit.js'

/** A webhook with due deliveries (`dueQueues`). */
export interface DueQueueRow {
  webhook_id: string
  app_id: string
  consecutive_failures: number
}

/** Where a window of the claim's scan starts and how far it may go (`dueQueues`). */
export interface QueueWindowBounds {
  /** the webhook the previous window ended at ('' : the first) */
  after: string
  /** most webhooks with pending deliveries to look at */
  size: number
  /** the second lap of a scan that began mid-way: no further than the webhook it began after */
  until?: string
}

/** A window of the claim's scan: its due queues, and where the next window starts. */
export interface QueueWindow {
  due: DueQueueRow[]
  /** the last webhook of a full window; undefined when the scan reached its end (the last queue, or `until`) */
  next: string | undefined
}

/** A due delivery with what its attempt needs: the event's payload and the webhook's settings now. */
export interface DueDelivery {
  id: string
  event_id: string
  webhook_id: string
  app_id: string
  attempts: number
  payload: string
  url: string
  signing_secret: string
  /** the secret a rotation replaced, and until when it still signs */
  previous_signing_secret: string | null
  previous_secret_expires_at: string | null
  encrypted: number
  /** 1: an attempt the owner asked for (retry route); a failure ends the delivery */
  resend: number
  /** the webhook's, as the claim's transaction read it */
  consecutive_failures: number
}

export interface AttemptRecord {
  deliveryId: string
  webhookId: string
  claimToken: string
  attempt: number
  startedAt: string
  durationMs: number
  outcome: AttemptOutcome
  statusCode: number | null
  error: string | null
  responseBody: string | null
  /**
   * The claim that started this attempt did not commit (the database failed under it), yet the
   * receiver answered: the outcome is recorded only while the delivery is as its claim read it
   * (pending, the same attempts) and no other claim holds it, so the delivery is not sent again.
   */
  unclaimed?: boolean
  /** what becomes of the delivery; `release` gives it back, due now, without using up an attempt */
  next: { status: Exclude<DeliveryStatus, 'canceled'>; at: string } | { status: 'release' } | { status: 'unchanged' }
  /** 410 Gone: deactivate the webhook and cancel its pending deliveries */
  gone: boolean
}

/** What `dueOf` selects, on both backends: a DueDelivery. */
const DUE_COLUMNS = [
  'd.id',
  'd.event_id',
  'd.webhook_id',
  'd.app_id',
  'd.attempts',
  'd.resend',
  'e.payload',
  'w.url',
  'w.signing_secret',
  'w.previous_signing_secret',
  'w.previous_secret_expires_at',
  'w.encrypted',
  'w.consecutive_failures',
] as const

/** One webhook's counted attempts in an outcome batch. */
export interface WebhookBatchCounts {
  succeeded: number
  failed: number
  /** failures after the batch's last success (all of them when none succeeded) */
  failedSinceSuccess: number
  lastStartedAt: string
}

/**
 * SQLite: one webhook's due deliveries, oldest first (slots: webhook id, now, how many). INDEXED
 * BY: with ANALYZE's statistics SQLite chose another index for some webhooks (plans vary by
 * value; it was the (webhook_id, status) index, dropped in migration 0007), reading the webhook's
 * whole pending backlog, due or not, and sorting it: 23.5 ms instead of 0.24 ms for a webhook with
 * 100,000 retries waiting (bench/query-plans.ts).
 * deliveries_queue stops at the limit, written `+?` so that binding it does not make SQLite
 * prepare the statement again (SqliteRunTimeLimitCompiler). Built once: the dispatcher runs it
 * once per planned webhook, and building its columns and filters each time was 2.8 % of the
 * delivery path's CPU, its compilation not counted (bench/drain.ts profile).
 */
export const SQLITE_DUE_OF = new PreparedQuery<DueDelivery>(3, (db, webhookId, now, count) => ({
  compile: () => sql<DueDelivery>`
    select ${sql.join(DUE_COLUMNS.map((column) => sql.ref(column)))}
    from deliveries d indexed by deliveries_queue
    join events e on e.id = d.event_id
    join webhooks w on w.id = d.webhook_id
    where d.webhook_id = ${webhookId} and d.status = 'pending' and d.next_attempt_at <= ${now}
      and w.deleted_at is null and w.is_active = 1 and ${circuitAllows(now)}
    order by d.next_attempt_at
    limit +${count}
  `.compile(db),
}))

/** The webhook `w`'s circuit allows an attempt at `now`: closed, or open with its wait over (isCircuitOpen). */
function circuitAllows(now: string) {
  return sql<boolean>`(w.consecutive_failures < ${CIRCUIT_THRESHOLD} or w.circuit_retry_at is null or w.circuit_retry_at <= ${now})`
}

/** A webhook's pending deliveries. */
function pendingOf(db: QueryCreator<Database>, webhookId: string) {
  return db.selectFrom('deliveries').select('id').where('webhook_id', '=', webhookId).where('status', '=', sql.lit('pending'))
}

/**
 * SQLite's cancel of a webhook's pending deliveries (of one application's, given `appId`).
 * INDEXED BY: with ANALYZE's statistics SQLite read the webhook's every delivery, ended ones too,
 * through deliveries_webhook_id_created_at (bench/query-plans.ts, 1,000,000 rows).
 */
function sqliteCancelPending(db: Db, webhookId: string, now: string, appId?: string) {
  const owned = appId === undefined ? sql`` : sql` and "app_id" = ${appId}`
  return {
    compile: () =>
      sql<{ id: string }>`update "deliveries" set "status" = 'canceled', "updated_at" = ${now} where "id" in (select "id" from "deliveries" indexed by deliveries_queue where "webhook_id" = ${webhookId} and "status" = 'pending'${owned})`.compile(
        db,
      ),
  }
}

/**
 * `cancelPendingOf`'s UPDATE, by how it treats rows another transaction holds, built once
 * (PreparedQuery: a deletion's statements built by kysely on every request were about a fifth of
 * its server CPU). PostgreSQL, while holding the webhook's row: rows another transaction holds
 * are skipped, not waited for (an outcome writer locks deliveries before the webhook, so waiting
 * could deadlock). The writer cancels its own when it settles the webhook (`settleWebhook`); a
 * claim may hold rows it skipped; so when any row is left pending, the stop cancels again once
 * committed (`afterCommit`), waiting this time, with no webhook row held.
 */
export const CANCEL_PENDING = {
  skip: cancelPending((pending) => pending.forUpdate().skipLocked()),
  wait: cancelPending((pending) => pending.forUpdate()),
}

function cancelPending(lockOnPostgres: (pending: ReturnType<typeof pendingOf>) => ReturnType<typeof pendingOf>) {
  return new PreparedQuery(2, (db, webhookId, now) => {
    if (backendOf(db) !== 'postgres') return sqliteCancelPending(db, webhookId, now)
    const pending = pendingOf(db, webhookId)
    return db
      .updateTable('deliveries')
      .set({ status: 'canceled', updated_at: now })
      .where('id', 'in', lockOnPostgres(pending))
  })
}

/**
 * PostgreSQL, inside a unit of work: the cancel that skips held rows, and, in the same statement
 * (one round trip, not two), one of the webhook's pending deliveries it left, if any. The outer
 * select reads the snapshot the UPDATE started from, where the rows it canceled are still pending,
 * so they are left out by id.
 */
const CANCEL_PENDING_LEAVING = new PreparedQuery(2, (db, webhookId, now) => cancelPendingLeaving(db, webhookId, now))

function cancelPendingLeaving(db: Db, webhookId: string, now: string, appId?: string) {
  const pending = pendingOf(db, webhookId)
  return db
    .with('canceled', (cte) =>
      cte
        .updateTable('deliveries')
        .set({ status: 'canceled', updated_at: now })
        .where('id', 'in', (appId === undefined ? pending : pending.where('app_id', '=', appId)).forUpdate().skipLocked())
        .returning('id'),
    )
    .selectFrom('deliveries')
    .select('deliveries.id')
    .where('deliveries.webhook_id', '=', webhookId)
    .where('deliveries.status', '=', sql.lit('pending'))
    .where('deliveries.id', 'not in', (eb) => eb.selectFrom('canceled').select('canceled.id'))
    .limit(1)
}

/**
 * A DELETE's cancel (`cancelOnDelete`), of the application's own rows only: PostgreSQL's cancel
 * that says what it left, as CANCEL_PENDING_LEAVING; SQLite's, as CANCEL_PENDING.skip.
 */
const CANCEL_OWNED_PENDING = new PreparedQuery<{ id: string }>(3, (db, webhookId, appId, now) => {
  return backendOf(db) === 'postgres' ? cancelPendingLeaving(db, webhookId, now, appId) : sqliteCancelPending(db, webhookId, now, appId)
})

/** What a stop's cancel left pending (rows another transaction held): canceled again once committed, waiting for them this time. */
function cancelAgainOnceCommitted(unit: UnitOfWork, webhookId: string): void {
  unit.afterCommit((db) => writeTransaction(db, (tx) => new DeliveriesRepository(tx).cancelPendingOf(webhookId, 'wait'), { retries: 3 }))
}

/** `lockToStop`'s lock (PostgreSQL), with and without the owner's check: built once, as every DELETE takes it. */
const LOCK_TO_STOP = new PreparedQuery(1, (db, webhookId) => liveWebhook(db, webhookId).forUpdate())
const LOCK_OWNED_TO_STOP = new PreparedQuery<{ id: string }>(2, (db, webhookId, appId) => liveWebhook(db, webhookId).where('app_id', '=', appId).forUpdate())

/** A webhook that is not deleted: the start of `lockToStop` and `holdLive`. */
function liveWebhook(db: Db, webhookId: string) {
  return db.selectFrom('webhooks').select('id').where('id', '=', webhookId).where('deleted_at', 'is', null)
}

/**
 * The delivery queue. Operator-level (no application scope): the dispatcher and the CLI use it,
 * never a route. Every write runs inside the caller's unit of work.
 *
 * Locking on PostgreSQL (SQLite serialises every write transaction on its one write lock):
 * - the claim locks the due delivery rows FOR UPDATE and their webhooks FOR KEY SHARE, both
 *   SKIP LOCKED, so two dispatchers never claim one row and a claim never waits;
 * - deleting or deactivating a webhook takes its row FOR UPDATE (WebhooksRepository), which
 *   conflicts with that KEY SHARE: the deletion either committed before the claim's snapshot or
 *   row check (the row no longer matches and is skipped), or waits for the claim to commit, by
 *   which time the claim's requests have begun, and then aborts them (NOTIFY);
 * - writers that lock several webhook rows lock them in id order, so they can't deadlock with
 *   each other; a deletion never waits for a delivery row while it holds the webhook's
 *   (`cancelPendingOf`), so it can't deadlock with the outcome writer, which locks deliveries
 *   first and the webhook last (`settleWebhook`), briefly.
 */
export class DeliveriesRepository {
  constructor(
    private readonly db: Db,
    private readonly unit?: UnitOfWork,
  ) {}

  /**
   * One window of the claim's scan (`QueueScan`): of the next `size` webhooks with pending
   * deliveries after `after` (and, on a scan's second lap, up to `until`), those whose deliveries
   * are due by `now`, with their application and circuit. A skip scan over `deliveries_queue`: one
   * index probe per webhook with pending deliveries, however long its backlog, keeping the active
   * ones whose earliest pending delivery is due and whose open circuit (if any) allows an attempt,
   * leaving out `skipApps` (those at their cap: nothing of theirs could be taken). Reads only:
   * `dueOf` locks what it takes.
   * Each probe is ordered like the index, (webhook_id, next_attempt_at), so it finds the next
   * webhook and its earliest delivery at once, and no planner estimate can make it read a backlog:
   * a separate min(next_attempt_at) per webhook let PostgreSQL, with a young table's statistics,
   * read every pending row of the webhook (by an index on webhook and status) or re-run it for
   * every webhook row (200 × 200 probes: 74 ms where this takes 1.4 ms). CROSS JOIN because SQLite keeps its
   * order: with a plain join it scanned every webhook and probed the queue (26.7 ms per claim at
   * 100,000 webhooks, 210 ms at a million, on the event loop). The window bounds the probes: an
   * unbounded scan took 117.8 ms per claim on SQLite's event loop with 100,000 webhooks holding a
   * retry (bench/claim-scan.ts).
   */
  async dueQueues(now: string, skipApps: readonly string[], window: QueueWindowBounds): Promise<QueueWindow> {
    const until = window.until ?? null
    const due = sql<number>`case when queue.next_at <= ${now} and w.deleted_at is null and w.is_active = 1
        and ${circuitAllows(now)}
        ${skipApps.length === 0 ? sql`` : sql`and w.app_id not in (${sql.join(skipApps)})`} then 1 else 0 end`
    // 'pending' is a literal, not a parameter: only then can SQLite use the partial index. The scan
    // starts from a row standing for `after`, so every probe is the recursive one: a first probe
    // of its own, `webhook_id > ?`, was planned by SQLite (with ANALYZE's statistics) on an index
    // of webhook and status, sorting every pending row after `after` (23 ms for a 256 window).
    const { rows } = await sql<DueQueueRow & { n: number; due: number }>`
      with recursive queue(webhook_id, next_at, n) as (
        select cast(${window.after} as text), cast(null as text), 0
        union all
        select d.webhook_id, d.next_attempt_at, queue.n + 1 from queue
        join deliveries d on d.id = (
          select n.id from deliveries n
          where n.status = 'pending' and n.webhook_id > queue.webhook_id
          order by n.webhook_id, n.next_attempt_at limit 1
        )
        where queue.n < ${window.size} and (cast(${until} as text) is null or queue.webhook_id < cast(${until} as text))
      )
      select * from (
        select w.id as webhook_id, w.app_id, w.consecutive_failures, queue.n, ${due} as due
        from queue
        cross join webhooks w
        where w.id = queue.webhook_id and queue.n > 0
      ) scanned
      where (scanned.due = 1 or scanned.n = ${window.size}) and (cast(${until} as text) is null or scanned.webhook_id <= cast(${until} as text))
    `.execute(this.db)
    const last = rows.find((row) => Number(row.n) === window.size)
    return {
      due: rows.filter((row) => Number(row.due) === 1).map(({ webhook_id, app_id, consecutive_failures }) => ({ webhook_id, app_id, consecutive_failures })),
      next: last?.webhook_id,
    }
  }

  /**
   * Up to `count` due deliveries of each webhook in `take`, oldest first, locked for this
   * transaction (PostgreSQL: the rows FOR UPDATE and their webhooks FOR KEY SHARE, both SKIP
   * LOCKED, so two dispatchers never claim one row and a claim never waits). Deleting or
   * deactivating a webhook cancels its pending deliveries, so the webhook filter only guards.
   * The circuit is read again here, in the claim's transaction, and an open one gives one
   * delivery: the plan (`dueQueues`) was read before, and an outcome written since (its attempt
   * no longer counted in flight) may have opened the circuit or moved its next attempt out.
   */
  async dueOf(take: ReadonlyMap<string, number>, now: string): Promise<DueDelivery[]> {
    return oneWhereCircuitOpen(await this.dueRows(take, now))
  }

  private async dueRows(take: ReadonlyMap<string, number>, now: string): Promise<DueDelivery[]> {
    if (take.size === 0) return []
    if (backendOf(this.db) === 'postgres') {
      // Materialized, so each webhook's lateral read runs once: with no statistics, PostgreSQL's
      // generic plan of this named statement put the webhooks outside the take and ran the
      // lateral read once per pair (100 webhooks: 10,000 times, 397 ms instead of 9 ms).
      const { rows } = await sql<DueDelivery>`
        with taken as materialized (
          select d.id, d.event_id, d.webhook_id, d.app_id, d.attempts, d.resend, d.next_attempt_at, q.ord
          from unnest(${[...take.keys()]}::text[], ${[...take.values()]}::int[]) with ordinality as q(webhook_id, n, ord)
          cross join lateral (
            select * from deliveries d
            where d.webhook_id = q.webhook_id and d.status = 'pending' and d.next_attempt_at <= ${now}
            order by d.next_attempt_at
            limit q.n
            for update skip locked
          ) d
        )
        select ${sql.join(DUE_COLUMNS.map((column) => sql.ref(column)))}
        from taken d
        join webhooks w on w.id = d.webhook_id
        join events e on e.id = d.event_id
        where w.deleted_at is null and w.is_active = 1 and ${circuitAllows(now)}
        order by d.ord, d.next_attempt_at
        for key share of w skip locked
      `.execute(this.db)
      return rows
    }
    const due: DueDelivery[] = []
    for (const [webhookId, count] of take) due.push(...(await SQLITE_DUE_OF.execute(this.db, webhookId, now, count)))
    return due
  }

  /** Claims rows `due` locked in this transaction; returns the ids claimed (all of them, unless one stopped being pending). */
  async claim(ids: readonly string[], token: string, until: string): Promise<Set<string>> {
    const now = nowIso()
    const claimed = new Set<string>()
    for (const part of chunks(ids)) {
      const rows = await this.db
        .updateTable('deliveries')
        .set({ claim_token: token, next_attempt_at: until, updated_at: now })
        .where('id', 'in', part)
        .where('status', '=', sql.lit('pending'))
        .returning('id')
        .execute()
      for (const row of rows) claimed.add(row.id)
    }
    return claimed
  }

  /**
   * A deleted or inactive webhook gets nothing more: its pending deliveries (claimed ones too)
   * end here. The claim token stays, so the attempt on the wire is still recorded as canceled.
   */
  async cancelPendingOf(webhookId: string, rowLocks: 'skip' | 'wait' = 'skip'): Promise<void> {
    const unit = this.unit
    if (backendOf(this.db) !== 'postgres' || rowLocks === 'wait' || unit === undefined) {
      await CANCEL_PENDING[rowLocks].execute(this.db, webhookId, nowIso())
      return
    }
    // Only rows the update skipped (or that another transaction is changing) are left pending;
    // without any, the waiting follow-up (a transaction of its own) has nothing to do.
    const left = await CANCEL_PENDING_LEAVING.executeTakeFirst(this.db, webhookId, nowIso())
    if (left !== undefined) {
      cancelAgainOnceCommitted(unit, webhookId)
    }
  }

  /**
   * Writes a batch of attempts: their rows and their deliveries' new states, in the caller's
   * transaction, each only while its claim is still that attempt's (a claim that lapsed and was
   * taken by another dispatcher, or never committed, records nothing). Returns the attempts
   * recorded; the caller then counts them (`settleWebhook`) and handles a 410 (`deactivateGone`).
   * One UPDATE and one INSERT per 500 attempts, not one of each per attempt: per attempt they were
   * 22 and 5 µs of SQLite, plus kysely building each (bench:webhooks throughput, SQL timed per
   * statement). A delivery twice in a batch (a lapsed claim and the one that took it over) is
   * written in rounds, in the batch's order, as one attempt after the other would be.
   */
  async recordAll(attempts: readonly AttemptRecord[]): Promise<AttemptRecord[]> {
    const now = nowIso()
    const recorded: AttemptRecord[] = []
    for (const attempt of attempts) if (attempt.unclaimed === true && (await this.adopt(attempt, now))) recorded.push(attempt)
    for (const round of rounds(attempts.filter((attempt) => attempt.unclaimed !== true))) {
      const updated = new Set<string>()
      for (const part of chunks(round)) for (const id of await this.applyNext(part, now)) updated.add(id)
      // No state change (an abort for a stopped webhook), or the delivery was canceled while this
      // attempt was on the wire: a row that still carries this claim's token is this claim's to
      // record (ended deliveries drop the token; only cancellation keeps it).
      for (const attempt of round) if (updated.has(attempt.deliveryId) || (await this.carriesClaim(attempt))) recorded.push(attempt)
    }
    for (const part of chunks(recorded)) await this.insertAttempts(part)
    return recorded
  }

  /** Each attempt's delivery takes its new state (`next`) while it still carries the attempt's claim; returns the ids updated. */
  private async applyNext(attempts: readonly AttemptRecord[], now: string): Promise<string[]> {
    // release: status and attempts unchanged (null), due now; an owner's resend is one attempt: it ends with the delivery.
    const values = attempts.flatMap(({ deliveryId: delivery_id, claimToken: token, attempt, next }): NextState[] => {
      if (next.status === 'unchanged') return []
      if (next.status === 'release') return [{ delivery_id, token, status: null, attempts: null, at: now }]
      return [{ delivery_id, token, status: next.status, attempts: attempt, at: next.at }]
    })
    if (values.length === 0) return []
    const { rows } = await sql<{ id: string }>`
      update deliveries as d
      set status = coalesce(v.status, d.status), attempts = coalesce(v.attempts, d.attempts), claim_token = null,
        next_attempt_at = v.at, resend = case when v.status is null or v.status = 'pending' then d.resend else 0 end, updated_at = ${now}
      from ${rowsTable(this.db, values, NEXT_STATE_COLUMNS)}
      where d.id = v.delivery_id and d.claim_token = v.token and d.status = 'pending'
      returning id
    `.execute(this.db)
    return rows.map((row) => row.id)
  }

  /** The attempts' rows, one statement. */
  private async insertAttempts(attempts: readonly AttemptRecord[]): Promise<void> {
    const rows = attempts.map((attempt) => ({
      id: newId(),
      delivery_id: attempt.deliveryId,
      webhook_id: attempt.webhookId,
      attempt: attempt.attempt,
      started_at: attempt.startedAt,
      duration_ms: attempt.durationMs,
      outcome: attempt.outcome,
      status_code: attempt.statusCode,
      error: attempt.error,
      response_body: attempt.responseBody,
    }))
    const columns = sql.join(Object.keys(ATTEMPT_COLUMNS).map((column) => sql.ref(column)))
    await sql`insert into delivery_attempts (${columns}) select ${columns} from ${rowsTable(this.db, rows, ATTEMPT_COLUMNS)}`.execute(this.db)
  }

  /**
   * Records an unclaimed attempt's outcome on its delivery when the delivery is still pending with
   * the attempts its claim read, and no live claim of another holds it (none, a lapsed one, or the
   * attempt's own claim, which committed after all though its commit answered with an error).
   */
  private async adopt(attempt: AttemptRecord, now: string): Promise<boolean> {
    const next = attempt.next
    if (next.status === 'release' || next.status === 'unchanged') return false
    const result = await this.db
      .updateTable('deliveries')
      .set({ status: next.status, attempts: attempt.attempt, claim_token: null, next_attempt_at: next.at, updated_at: now, ...(next.status === 'pending' ? {} : { resend: 0 }) })
      .where('id', '=', attempt.deliveryId)
      .where('status', '=', 'pending')
      .where('attempts', '=', attempt.attempt - 1)
      .where((eb) => eb.or([eb('claim_token', 'is', null), eb('claim_token', '=', attempt.claimToken), eb('next_attempt_at', '<=', now)]))
      .executeTakeFirst()
    return Number(result.numUpdatedRows) === 1
  }

  private async carriesClaim(attempt: AttemptRecord): Promise<boolean> {
    const row = await this.db
      .selectFrom('deliveries')
      .select('id')
      .where('id', '=', attempt.deliveryId)
      .where('claim_token', '=', attempt.claimToken)
      .executeTakeFirst()
    return row !== undefined
  }

  /**
   * Ends an outcome batch: counts each webhook's recorded attempts in its statistics and its
   * circuit (`counts`; undefined for a webhook whose attempts were all canceled) and, for a
   * webhook deleted or deactivated meanwhile, cancels what this batch left pending
   * (`cancelPendingOf` skips rows a writer holds). `circuitRetryAt` gives, for a count of failures
   * in a row, when an open circuit's next attempt may start (undefined while the circuit stays
   * closed). The latest attempt is kept even when attempts finish out of order; a 2xx closes the
   * circuit, so only the failures after it count.
   * One update for the whole batch, not one per webhook: on PostgreSQL the per-webhook updates
   * were 6,503 of the 7,400 statements of a 20,000-delivery drain (bench:drain), each a round trip
   * while the transaction held the webhooks' rows. Before it, PostgreSQL locks the rows FOR NO KEY
   * UPDATE in id order, which waits for a deletion under way (so it is seen) and can't deadlock
   * with another dispatcher's batch; SQLite reads them first only when a webhook has no counts.
   * A webhook whose circuit opens, or that was stopped meanwhile, gets a statement of its own.
   */
  async settleWebhooks(batch: ReadonlyMap<string, WebhookBatchCounts | undefined>, circuitRetryAt: (consecutiveFailures: number) => string | undefined): Promise<void> {
    const postgres = backendOf(this.db) === 'postgres'
    const live = new Map<string, boolean>()
    if (postgres || [...batch.values()].includes(undefined)) {
      const ids = [...batch.keys()].map((webhook_id) => ({ webhook_id }))
      const { rows } = await sql<{ id: string; is_active: number; deleted_at: string | null }>`
        select id, is_active, deleted_at from webhooks
        where id in (select v.webhook_id from ${rowsTable(this.db, ids, { webhook_id: 'text' })})
        order by id ${postgres ? sql`for no key update` : sql``}
      `.execute(this.db)
      for (const row of rows) live.set(row.id, row.deleted_at === null && row.is_active === 1)
    }
    const counted = [...batch].flatMap(([webhook_id, counts]): CountedBatch[] =>
      counts === undefined
        ? []
        : [{ webhook_id, succeeded: counts.succeeded, failed: counts.failed, failed_since_success: counts.failedSinceSuccess, last_started_at: counts.lastStartedAt }],
    )
    if (counted.length > 0) {
      const { rows } = await sql<{ id: string; is_active: number; deleted_at: string | null; consecutive_failures: number }>`
        update webhooks as w
        set successful_deliveries = w.successful_deliveries + v.succeeded,
          failed_deliveries = w.failed_deliveries + v.failed,
          last_delivery = case when w.last_delivery is null or w.last_delivery < v.last_started_at then v.last_started_at else w.last_delivery end,
          consecutive_failures = case when v.succeeded > 0 then v.failed_since_success else w.consecutive_failures + v.failed end,
          circuit_retry_at = case when v.succeeded > 0 then null else w.circuit_retry_at end
        from ${rowsTable(this.db, counted, COUNTED_BATCH_COLUMNS)}
        where w.id = v.webhook_id
        returning id, is_active, deleted_at, consecutive_failures
      `.execute(this.db)
      for (const row of rows) {
        live.set(row.id, row.deleted_at === null && row.is_active === 1)
        // The batch ended on a failure: an open circuit waits before its next attempt.
        const retryAt = (batch.get(row.id)?.failedSinceSuccess ?? 0) > 0 ? circuitRetryAt(row.consecutive_failures) : undefined
        if (retryAt !== undefined) await this.db.updateTable('webhooks').set({ circuit_retry_at: retryAt }).where('id', '=', row.id).execute()
      }
    }
    for (const webhookId of [...batch.keys()].sort()) if (live.get(webhookId) === false) await this.cancelPendingOf(webhookId)
  }

  /** The owner asked for an attempt (a resend, a test event): an open circuit lets its next one start now. */
  async circuitAttemptNow(webhookId: string): Promise<void> {
    await this.db.updateTable('webhooks').set({ circuit_retry_at: null }).where('id', '=', webhookId).where('circuit_retry_at', 'is not', null).execute()
  }

  /**
   * PostgreSQL: takes a webhook's row FOR UPDATE before it is stopped (deleted or deactivated),
   * the lock that conflicts with the claims' FOR KEY SHARE. `appId` keeps a route's lock within
   * its own application.
   */
  async lockToStop(webhookId: string, appId?: string): Promise<void> {
    if (backendOf(this.db) !== 'postgres') return
    if (appId === undefined) await LOCK_TO_STOP.execute(this.db, webhookId)
    else await LOCK_OWNED_TO_STOP.execute(this.db, webhookId, appId)
  }

  /** A webhook was just deleted or deactivated: end what is pending to it, and abort its attempts once committed. */
  async stopped(webhookId: string): Promise<void> {
    await this.cancelPendingOf(webhookId)
    this.unit?.webhookStopped(webhookId)
  }

  /** PostgreSQL: `lockToStop`'s lock of the application's webhook, as a statement for a DELETE to send with its own (`pipelined`); SQLite: none. */
  lockOnDelete(webhookId: string, appId: string): BoundQuery<{ id: string }> | undefined {
    return backendOf(this.db) === 'postgres' ? LOCK_OWNED_TO_STOP.bind(this.db, webhookId, appId) : undefined
  }

  /**
   * A DELETE's cancel of the webhook's pending deliveries, as a statement to run after the lock
   * (`lockOnDelete`) and the one that deletes the webhook, in the same transaction:
   * WebhooksRepository.delete sends them together (`pipelined`). On PostgreSQL it starts after
   * the lock was granted, so it sees what every outbox writer that held the row committed. The
   * application's rows only: it runs whether or not the deletion found the webhook, and the
   * caller rolls back when it did not. Its rows go to `deleted`.
   */
  cancelOnDelete(webhookId: string, appId: string, now: string): BoundQuery<{ id: string }> {
    return CANCEL_OWNED_PENDING.bind(this.db, webhookId, appId, now)
  }

  /**
   * The DELETE found the webhook and `cancelOnDelete` answered `left` (on PostgreSQL, a pending
   * row it skipped, if any): abort its attempts once committed, and cancel again, waiting, what
   * was left (as `cancelPendingOf`).
   */
  deleted(webhookId: string, left: readonly { id: string }[]): void {
    const unit = this.unit
    if (unit === undefined) throw new Error('deleted: a unit of work is needed')
    if (left.length > 0) cancelAgainOnceCommitted(unit, webhookId)
    unit.webhookStopped(webhookId)
  }

  /** Whether this delivery is one of this webhook's (the caller has checked the webhook is the owner's). */
  async belongsTo(deliveryId: string, webhookId: string): Promise<boolean> {
    const row = await this.db.selectFrom('deliveries').select('id').where('id', '=', deliveryId.toLowerCase()).where('webhook_id', '=', webhookId).executeTakeFirst()
    return row !== undefined
  }

  /**
   * The owner asked for one more attempt of an ended delivery (failed, canceled or succeeded): it
   * is due now, as a resend (a failure ends it again; no automatic retries). Returns false when
   * it is not ended (pending, or on the wire). Run it with the webhook locked (lockForDelivery).
   */
  async resend(deliveryId: string): Promise<boolean> {
    const now = nowIso()
    const row = await this.db
      .updateTable('deliveries')
      .set({ status: 'pending', resend: 1, claim_token: null, next_attempt_at: now, updated_at: now })
      .where('id', '=', deliveryId.toLowerCase())
      .where('status', 'in', ['failed', 'canceled', 'succeeded'])
      .returning('id')
      .executeTakeFirst()
    if (row === undefined) return false
    this.unit?.deliveriesWritten()
    return true
  }

  /** 410 Gone: the receiver asked for no more. Deactivate the webhook and stop everything to it, as a PATCH would. */
  async deactivateGone(webhookId: string): Promise<void> {
    await this.lockToStop(webhookId)
    const row = await this.db
      .updateTable('webhooks')
      .set({ is_active: 0, updated_at: nowIso() })
      .where('id', '=', webhookId)
      .where('is_active', '=', 1)
      .where('deleted_at', 'is', null)
      .returning('id')
      .executeTakeFirst()
    if (row !== undefined) await this.stopped(webhookId)
  }

  /**
   * PostgreSQL: locks the webhook's row FOR KEY SHARE, as a claim does, if it is active and not
   * deleted (a DELETE or deactivation holding it is waited for). False when it is not.
   */
  async holdLive(webhookId: string): Promise<boolean> {
    const row = await liveWebhook(this.db, webhookId).where('is_active', '=', 1).forKeyShare().executeTakeFirst()
    return row !== undefined
  }

  /** Of these webhooks, the ones deleted or deactivated (by any process). */
  async stoppedAmong(webhookIds: readonly string[]): Promise<string[]> {
    if (webhookIds.length === 0) return []
    const rows = await this.db
      .selectFrom('webhooks')
      .select('id')
      .where('id', 'in', webhookIds)
      .where((eb) => eb.or([eb('deleted_at', 'is not', null), eb('is_active', '=', 0)]))
      .execute()
    return rows.map((row) => row.id)
  }
}

/** A delivery's state after an attempt, as `applyNext` writes it (null: unchanged). */
interface NextState {
  delivery_id: string
  token: string
  status: DeliveryStatus | null
  attempts: number | null
  at: string
}

/** How PostgreSQL casts each column's array in `rowsTable`. */
type ColumnType = 'text' | 'int'

const NEXT_STATE_COLUMNS: Record<keyof NextState, ColumnType> = { delivery_id: 'text', token: 'text', status: 'text', attempts: 'int', at: 'text' }

/** One webhook's counts in `settleWebhooks`' update. */
interface CountedBatch {
  webhook_id: string
  succeeded: number
  failed: number
  failed_since_success: number
  last_started_at: string
}
const COUNTED_BATCH_COLUMNS: Record<keyof CountedBatch, ColumnType> = { webhook_id: 'text', succeeded: 'int', failed: 'int', failed_since_success: 'int', last_started_at: 'text' }

/** delivery_attempts' columns, in the order insertAttempts writes them. */
const ATTEMPT_COLUMNS = {
  id: 'text',
  delivery_id: 'text',
  webhook_id: 'text',
  attempt: 'int',
  started_at: 'text',
  duration_ms: 'int',
  outcome: 'text',
  status_code: 'int',
  error: 'text',
  response_body: 'text',
} as const satisfies Record<string, ColumnType>

/**
 * `rows` as a table `v` with `columns`: bound as one array per column through `unnest` on
 * PostgreSQL, as one JSON text through `json_each` on SQLite, so the statement's text (and its
 * prepared statement) is the same for every number of rows.
 */
function rowsTable<Row extends object>(db: Db, rows: readonly Row[], columns: Record<keyof Row & string, ColumnType>) {
  const names = Object.keys(columns) as (keyof Row & string)[]
  if (backendOf(db) === 'postgres') {
    const arrays = names.map((name) => sql`${rows.map((row) => row[name])}::${sql.raw(columns[name])}[]`)
    return sql`unnest(${sql.join(arrays)}) as v(${sql.join(names.map((name) => sql.ref(name)))})`
  }
  const fields = names.map((name) => sql`value ->> ${sql.lit(name)} as ${sql.ref(name)}`)
  return sql`(select ${sql.join(fields)} from json_each(${JSON.stringify(rows)})) as v`
}

/** Of each webhook whose circuit is open, its first delivery read; every delivery of the others. */
function oneWhereCircuitOpen(due: DueDelivery[]): DueDelivery[] {
  const seen = new Set<string>()
  return due.filter((delivery) => {
    if (!isCircuitOpen(delivery.consecutive_failures)) return true
    if (seen.has(delivery.webhook_id)) return false
    seen.add(delivery.webhook_id)
    return true
  })
}

/** The batch in rounds where no delivery appears twice; a delivery's later attempts in later rounds, in order. */
function rounds(attempts: readonly AttemptRecord[]): AttemptRecord[][] {
  const seen = new Map<string, number>()
  const out: AttemptRecord[][] = []
  for (const attempt of attempts) {
    const round = seen.get(attempt.deliveryId) ?? 0
    seen.set(attempt.deliveryId, round + 1)
    ;(out[round] ??= []).push(attempt)
  }
  return out
}
