import { sql } from 'kysely'
import { chunks } from '../db/chunks.js'
import { backendOf, type Db } from '../db/database.js'
import { type BoundQuery, PreparedInsert, PreparedQuery } from '../db/prepared.js'
import type { UnitOfWork } from '../db/unit-of-work.js'
import { newId, nowIso } from '../db/time.js'
import { eventEnvironmentOf } from './environment.js'

/** `<resource>.<action>`: each resource's manifest lists the types it emits (src/resources/index.ts, EVENT_TYPES). */
export type EventType = `${string}.${string}`

/**
 * Most active webhooks whose deliveries a write makes in its own transaction (at most about 1 ms
 * of inserts), so for nearly every application the delivery log and total_events are complete
 * when the write answers. An application with more has its events' deliveries written by a
 * dispatcher (`fanOutPending`), so a write never costs more than that, however many webhooks.
 */
export const INLINE_FANOUT_MAX = 64

/** Budgets of one deferred fan-out transaction: it holds the write lock, so it stays short. */
export const FANOUT_LIMITS = {
  /** applications served in one transaction (round-robin, so a big backlog delays no one) */
  apps: 32,
  /** deliveries written for one application: its oldest events, at least one */
  rowsPerApp: 500,
  /** deliveries written in all; the transaction stops taking applications past it */
  rows: 2000,
}

/** What one deferred fan-out transaction did. */
export interface FanOutResult {
  events: number
  deliveries: number
  /** the last application served: the next transaction starts after it */
  lastAppId: string | undefined
  /** a budget ran out: more events may wait */
  more: boolean
}

/** What fan-out needs of an event or a webhook: an event goes to the webhooks created no later than it. */
interface Created {
  id: string
  created_at: string
}

/** An event as fan-out takes it: a webhook that lists event types receives only those. */
interface FanOutEvent extends Created {
  type: string
}

/** A webhook as fan-out takes it: `event_types` is its filter's JSON array, or null for every type. */
interface FanOutWebhook extends Created {
  event_types: string | null
}

/**
 * Whether each webhook receives an event of the type: those without a filter (event_types null)
 * at no cost, a filter's JSON parsed once per fan-out and webhook.
 */
class EventFilters {
  private parsed: Map<string, ReadonlySet<string>> | undefined

  receives(webhook: FanOutWebhook, type: string): boolean {
    if (webhook.event_types === null) return true
    this.parsed ??= new Map()
    let types = this.parsed.get(webhook.id)
    if (types === undefined) {
      types = new Set(JSON.parse(webhook.event_types) as string[])
      this.parsed.set(webhook.id, types)
    }
    return types.has(type)
  }
}

/**
 * A new pending delivery `id` of the event to the webhook: due at the event's time, so each
 * webhook's queue stays in event order. One literal: on Node 20 each property written after a
 * spread (`{ ...row, id }`) takes V8's slow path, about 1 µs apiece.
 */
function deliveryRow(appId: string, event: Created, webhookId: string, now: string, id: string) {
  return {
    event_id: event.id,
    webhook_id: webhookId,
    app_id: appId,
    status: 'pending' as const,
    attempts: 0,
    next_attempt_at: event.created_at,
    claim_token: null,
    resend: 0,
    created_at: event.created_at,
    updated_at: now,
    id,
  }
}

/** The starting point of every read of an application's active webhooks (the partial index webhooks_active). */
function activeWebhooksOf(db: Db, appId: string) {
  return db.selectFrom('webhooks').where('app_id', '=', appId).where('deleted_at', 'is', null).where(sql<boolean>`is_active = 1`)
}

/**
 * The application's active webhooks as the outbox takes them, each with its event-type filter: in
 * id order, locked on PostgreSQL FOR KEY SHARE (see `emit` for why that lock).
 */
function lockedActiveWebhooksOf(db: Db, appId: string) {
  const active = activeWebhooksOf(db, appId).select(['id', 'created_at', 'event_types']).orderBy('id')
  return backendOf(db) === 'postgres' ? active.forKeyShare() : active
}

/**
 * Up to INLINE_FANOUT_MAX + 1 of the application's active webhooks, locked (lockedActiveWebhooksOf),
 * each with whether an event of the application waits for a dispatcher's fan-out: one statement,
 * built once (PreparedQuery), as it runs on every write that emits an event.
 */
type OutboxCandidate = FanOutWebhook & { pending: number }

/** `outboxRead`'s rows, as `emit` takes them. */
export interface OutboxRead {
  rows: readonly OutboxCandidate[]
}

const INLINE_CANDIDATES = new PreparedQuery<OutboxCandidate>(1, (db, appId) =>
  lockedActiveWebhooksOf(db, appId)
    .select(sql<number>`case when exists (select 1 from events where app_id = ${appId} and fanout_pending = 1) then 1 else 0 end`.as('pending'))
    .limit(INLINE_FANOUT_MAX + 1),
)

const INSERT_EVENT = new PreparedInsert('events')
const INSERT_DELIVERY = new PreparedInsert('deliveries')
/**
 * Rows per webhook its event count is spread over on PostgreSQL: a transaction adds to the row of
 * its connection's slot (`pg_backend_pid() % EVENT_COUNT_SLOTS`), so concurrent writes of one
 * application rarely wait for one another there, and one transaction always adds to the same row
 * of a webhook (no deadlock between two that count the same webhooks, both in id order). SQLite
 * has one writer: slot 0.
 */
export const EVENT_COUNT_SLOTS = 16

function countSlot(db: Db) {
  return backendOf(db) === 'postgres' ? sql<number>`pg_backend_pid() % ${sql.lit(EVENT_COUNT_SLOTS)}` : sql<number>`0`
}

/** Adds the events each webhook took to its count (one row per webhook, in webhook id order). */
function addEventCounts(db: Db, counts: readonly { webhook_id: string; events: number }[]) {
  const slot = countSlot(db)
  return db
    .insertInto('webhook_event_counts')
    .values(counts.map(({ webhook_id, events }) => ({ webhook_id, slot, events })))
    .onConflict((oc) =>
      oc.columns(['webhook_id', 'slot']).doUpdateSet((eb) => ({ events: sql<number>`${eb.ref('webhook_event_counts.events')} + ${eb.ref('excluded.events')}` })),
    )
}

/** One webhook took one event (every inline write with one active webhook): built once. */
const COUNT_ONE_EVENT = new PreparedQuery<never>(1, (db, webhookId) => addEventCounts(db, [{ webhook_id: webhookId, events: 1 }]))

/**
 * PostgreSQL: an event written inline with its one delivery (the common case, one active webhook)
 * and that webhook's count, in one statement: one round trip, where the event, the delivery and
 * the count were three. Built once (PreparedQuery). The delivery's foreign key to the event is
 * checked at the end of the statement, once both rows are in.
 */
const EVENT_WITH_ONE_DELIVERY = new PreparedQuery<never>(9, (db, eventId, appId, type, payload, createdAt, environment, deliveryId, webhookId, now) =>
  db
    .with('event', () => db.insertInto('events').values({ id: eventId, app_id: appId, type, payload, created_at: createdAt, environment: sql<string | null>`nullif(${environment}, '')`, fanout_pending: 0 }))
    .with('count', () => addEventCounts(db, [{ webhook_id: webhookId, events: 1 }]))
    .insertInto('deliveries')
    .values(deliveryRow(appId, { id: eventId, created_at: createdAt }, webhookId, now, deliveryId)),
)

const ANY_PENDING_FANOUT = new PreparedQuery<{ id: string }>(0, (db) => db.selectFrom('events').select('id').where(sql<boolean>`fanout_pending = 1`).limit(1))

/**
 * Whether any event waits for a dispatcher to write its deliveries: a read, so an idle dispatcher
 * opens no write transaction. Built once (PreparedQuery): the dispatcher asks at every loop turn.
 */
export async function hasPendingFanOut(db: Db): Promise<boolean> {
  return (await ANY_PENDING_FANOUT.executeTakeFirst(db)) !== undefined
}

/** The transactional outbox: only meaningful inside a unit of work. */
export class EventsRepository {
  constructor(
    private readonly db: Db,
    private readonly unit: UnitOfWork,
  ) {}

  /**
   * Writes the event, in the transaction that makes the change, so the change and its event commit
   * together or not at all. Its deliveries (one per active webhook of the application that receives
   * its type, each counted in the webhook's total_events) are written here too when the application
   * has at most INLINE_FANOUT_MAX active webhooks (those whose event_types leave the type out
   * included) and no earlier event still waiting for its own; otherwise the event is marked pending
   * and a dispatcher writes them (`fanOutPending`), in event order. The filters are applied to the
   * rows this one read of the webhooks returns (their event_types column beside id and created_at):
   * no statement more, and none of the filter's work for a webhook without one.
   *
   * The webhooks are locked (PostgreSQL: FOR KEY SHARE, in id order, as every multi-webhook writer
   * does) before their deliveries are written. Every DELETE or deactivation first takes its row FOR
   * UPDATE (DeliveriesRepository.lockToStop), which that lock conflicts with: it either committed
   * first (the row no longer matches: no delivery) or waits for this commit and then cancels what
   * it wrote. Reading them without the lock would let a DELETE commit in between and leave a
   * pending delivery no dispatcher would ever claim. KEY SHARE, not an update lock: concurrent
   * writes of one application share it, and the outcome writer's updates of the row do not wait
   * for it (the event count is kept in rows of its own, webhook_event_counts).
   */
  async emit(appId: string, type: EventType, data: unknown, read?: OutboxRead): Promise<string> {
    const event = this.eventRow(appId, type, data)
    const candidates = read?.rows ?? (await INLINE_CANDIDATES.execute(this.db, appId))
    const inline = candidates.length <= INLINE_FANOUT_MAX && !candidates.some((webhook) => webhook.pending === 1)
    const [only] = candidates
    if (
      inline &&
      candidates.length === 1 &&
      only !== undefined &&
      only.created_at <= event.created_at &&
      (only.event_types === null || new EventFilters().receives(only, type)) &&
      backendOf(this.db) === 'postgres'
    ) {
      await EVENT_WITH_ONE_DELIVERY.execute(this.db, event.id, appId, type, event.payload, event.created_at, event.environment ?? '', newId(), only.id, nowIso())
      this.unit.deliveriesWritten()
      return event.id
    }
    event.fanout_pending = inline ? 0 : 1
    await INSERT_EVENT.execute(this.db, event)
    if (!inline) {
      this.unit.deliveriesWritten()
      return event.id
    }
    // What was read is still true: SQLite's write lock is held since BEGIN IMMEDIATE, and on
    // PostgreSQL the candidates are locked (a dispatcher's fan-out takes the same shared lock, so
    // a write never waits behind it).
    if ((await this.writeDeliveries(appId, [event], candidates)).length > 0) this.unit.deliveriesWritten()
    return event.id
  }

  /**
   * `emit`'s first statement (the application's webhooks, locked), to send with the caller's own
   * statements (`pipelined`) and hand to `emit` as an OutboxRead: the same read, one round trip
   * fewer. Send it in the transaction that then emits, after the statements the event reports on.
   */
  outboxRead(appId: string): BoundQuery<OutboxCandidate> {
    return INLINE_CANDIDATES.bind(this.db, appId)
  }

  /**
   * An event for one webhook only (`webhook.test`): the same outbox, one delivery, always written
   * at once, whatever event types the webhook lists. The caller has locked the webhook
   * (WebhooksRepository.lockForDelivery) and checked it is active.
   */
  async emitTo(appId: string, webhookId: string, type: EventType, data: unknown): Promise<{ eventId: string; deliveryId: string }> {
    const event = this.eventRow(appId, type, data)
    await INSERT_EVENT.execute(this.db, event)
    const [deliveryId] = await this.writeDeliveries(appId, [event], await this.lockActiveWebhooks(appId, webhookId), false)
    if (deliveryId === undefined) throw new Error(`webhook ${webhookId} took no delivery of its own event`)
    this.unit.deliveriesWritten()
    return { eventId: event.id, deliveryId }
  }

  /**
   * Writes the deliveries of events marked pending, in one write transaction (`this.db` is it):
   * for up to FANOUT_LIMITS.apps applications, taken round-robin from the one after `afterAppId`,
   * each application's oldest events, within the row budgets. An event goes to the webhooks active
   * now that were created no later than it and receive its type (their event_types as they are
   * now): the ones it would have found had it been written inline.
   * PostgreSQL: events are taken FOR UPDATE SKIP LOCKED (two dispatchers never take the same),
   * then the webhooks are locked as `emit` locks them, so the deletion guarantee is the same.
   */
  async fanOutPending(afterAppId: string | undefined): Promise<FanOutResult> {
    const apps = await this.pendingApps(afterAppId ?? '', FANOUT_LIMITS.apps)
    if (apps.length < FANOUT_LIMITS.apps && afterAppId !== undefined) {
      for (const appId of await this.pendingApps('', FANOUT_LIMITS.apps - apps.length)) if (!apps.includes(appId)) apps.push(appId)
    }
    const result: FanOutResult = { events: 0, deliveries: 0, lastAppId: undefined, more: false }
    // Planned in round-robin order from unlocked counts, within the row budget...
    const plan: { appId: string; take: number }[] = []
    let rows = 0
    for (const appId of apps) {
      if (rows >= FANOUT_LIMITS.rows) {
        result.more = true
        break
      }
      const webhooks = await this.countActiveWebhooks(appId)
      const take = Math.max(1, Math.floor(FANOUT_LIMITS.rowsPerApp / Math.max(1, webhooks)))
      plan.push({ appId, take })
      rows += take * Math.max(1, webhooks)
    }
    result.lastAppId = plan.at(-1)?.appId
    // ...and run in application id order: every dispatcher locks applications' webhooks in the same
    // order, so two of them never deadlock (round-robin order would: one locks A then B, another B then A).
    for (const { appId, take } of plan.sort((a, b) => (a.appId < b.appId ? -1 : 1))) {
      let pending = this.db
        .selectFrom('events')
        .select(['id', 'created_at', 'type'])
        .where('app_id', '=', appId)
        .where(sql<boolean>`fanout_pending = 1`)
        .orderBy('created_at')
        .orderBy('id')
        .limit(take + 1)
      // Events first, skipping another dispatcher's: then its webhooks are not waited for in vain.
      if (backendOf(this.db) === 'postgres') pending = pending.forUpdate().skipLocked()
      const events = await pending.execute()
      if (events.length > take) result.more = true
      const taken = events.slice(0, take)
      if (taken.length === 0) continue
      result.deliveries += (await this.writeDeliveries(appId, taken, await this.lockActiveWebhooks(appId, undefined))).length
      for (const part of chunks(taken)) {
        await this.db
          .updateTable('events')
          .set({ fanout_pending: 0 })
          .where(
            'id',
            'in',
            part.map((event) => event.id),
          )
          .execute()
      }
      result.events += taken.length
    }
    if (result.deliveries > 0) this.unit.deliveriesWritten()
    return result
  }

  /** The event's row, its deliveries written at once (`fanout_pending` 0) unless the caller says otherwise. */
  private eventRow(appId: string, type: EventType, data: unknown) {
    const id = newId()
    const now = nowIso()
    return { id, app_id: appId, type, payload: JSON.stringify({ id, type, created_at: now, data }), created_at: now, environment: eventEnvironmentOf(data), fanout_pending: 0 }
  }

  /** How many active webhooks the application has, unlocked: only to size a fan-out. */
  private async countActiveWebhooks(appId: string): Promise<number> {
    const row = await activeWebhooksOf(this.db, appId)
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow()
    return Number(row.n)
  }

  /** The application's active webhooks (or the one named), locked (lockedActiveWebhooksOf). */
  private async lockActiveWebhooks(appId: string, only: string | undefined): Promise<FanOutWebhook[]> {
    const active = lockedActiveWebhooksOf(this.db, appId)
    return (only === undefined ? active : active.where('id', '=', only)).execute()
  }

  /**
   * One pending delivery per event and webhook created no later than the event that receives its
   * type (unless `filtered` is false: a webhook.test goes to its webhook whatever it lists), due at
   * the event's time, so each webhook's queue stays in event order, and each webhook's
   * total_events counted. Returns the deliveries' ids.
   */
  private async writeDeliveries(appId: string, events: readonly FanOutEvent[], webhooks: readonly FanOutWebhook[], filtered = true): Promise<string[]> {
    const now = nowIso()
    const rows = []
    const counts = new Map<string, number>()
    const filters = new EventFilters()
    for (const event of events) {
      for (const webhook of webhooks) {
        if (webhook.created_at > event.created_at) continue
        if (filtered && !filters.receives(webhook, event.type)) continue
        rows.push(deliveryRow(appId, event, webhook.id, now, newId()))
        counts.set(webhook.id, (counts.get(webhook.id) ?? 0) + 1)
      }
    }
    // The common case, one webhook inline, takes the prepared one-row insert.
    const [only] = rows
    if (rows.length === 1 && only !== undefined) await INSERT_DELIVERY.execute(this.db, only)
    else for (const part of chunks(rows)) await this.db.insertInto('deliveries').values(part).execute()
    // total_events: one upsert per 500 webhooks, in webhook id order as every writer of these rows.
    const [one] = counts
    if (counts.size === 1 && one !== undefined && one[1] === 1) await COUNT_ONE_EVENT.execute(this.db, one[0])
    else {
      const sorted = [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([webhook_id, events]) => ({ webhook_id, events }))
      for (const part of chunks(sorted)) await addEventCounts(this.db, part).execute()
    }
    return rows.map((row) => row.id)
  }

  /**
   * Up to `limit` applications with events waiting for their deliveries, in id order from the one
   * after `afterAppId`: a skip scan of the events_fanout_pending index (one probe per application,
   * however many events each has waiting). The limit is `+?` on both backends for SQLite's sake
   * (SqliteRunTimeLimitCompiler); PostgreSQL reads it the same.
   */
  private async pendingApps(afterAppId: string, limit: number): Promise<string[]> {
    const { rows } = await sql<{ app_id: string }>`
      with recursive pending(app_id) as (
        select (select min(app_id) from events where fanout_pending = 1 and app_id > ${afterAppId})
        union all
        select (select min(e.app_id) from events e where e.fanout_pending = 1 and e.app_id > pending.app_id)
        from pending where pending.app_id is not null
      )
      select app_id from pending where app_id is not null limit +${limit}
    `.execute(this.db)
    return rows.map((row) => row.app_id)
  }
}
