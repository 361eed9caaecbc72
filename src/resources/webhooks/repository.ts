import { type Selectable, sql, type Updateable } from 'kysely'
import { backendOf, type Db } from '../../db/database.js'
import type { UnitOfWork } from '../../db/unit-of-work.js'
import { pipelined, PreparedQuery } from '../../db/prepared.js'
import { DeliveriesRepository } from '../../events/deliveries-repository.js'
import type { WebhooksTable } from './tables.js'
import { isoOf, newId, nowIso } from '../../db/time.js'

/** A webhook's row with its total_events, the sum of its webhook_event_counts rows. */
export type WebhookRow = Selectable<WebhooksTable> & { total_events: number }

/**
 * delivery_stats.total_events of the webhook a query reads or returns (a select, or an update's
 * RETURNING): its count rows summed, an index range of at most EVENT_COUNT_SLOTS rows.
 */
export const TOTAL_EVENTS = sql<number>`(select cast(coalesce(sum(c.events), 0) as integer) from webhook_event_counts c where c.webhook_id = webhooks.id)`.as(
  'total_events',
)

/** How long a replaced signing secret keeps signing beside the new one, so receivers can switch without losing a delivery. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 60 * 60 * 1000

export interface WebhookInput {
  name: string
  url: string
  isActive: boolean
  encrypted: boolean
  signingSecret: string
  /** the event types it receives; null or absent: every type */
  eventTypes?: readonly string[] | null | undefined
}

export interface WebhookPatch {
  name?: string | undefined
  url?: string | undefined
  isActive?: boolean | undefined
  encrypted?: boolean | undefined
  signingSecret?: string | undefined
  /** undefined: unchanged; null: every type from now on; a list: only those */
  eventTypes?: readonly string[] | null | undefined
}

/** The starting point of every read: this application's webhooks that are not deleted. */
function ownedWebhooks(db: Db, appId: string) {
  return db.selectFrom('webhooks').selectAll().select(TOTAL_EVENTS).where('app_id', '=', appId).where('deleted_at', 'is', null)
}

/** GET /webhooks/{id} and every route under it: built once (PreparedQuery). */
const FIND_WEBHOOK = new PreparedQuery<WebhookRow>(2, (db, appId, id) => ownedWebhooks(db, appId).where('id', '=', id))

/** The starting point of every write: one webhook of this application (`id` in lower case), not deleted, returned as reads return it. */
function updateOwnedWebhook(db: Db, appId: string, id: string) {
  return db.updateTable('webhooks').where('app_id', '=', appId).where('id', '=', id).where('deleted_at', 'is', null).returningAll().returning(TOTAL_EVENTS)
}

/**
 * DELETE /webhooks/{id}: built once (PreparedQuery). Building its statements with kysely on every
 * request was about a fifth of a deletion's server CPU (bench:profile of DELETE /webhooks/{id}).
 */
const DELETE_WEBHOOK = new PreparedQuery<WebhookRow>(3, (db, appId, id, now) => updateOwnedWebhook(db, appId, id).set({ deleted_at: now }))

/**
 * Webhooks of one application. Every query starts from `owned` (`ownedWebhooks`), so none can forget the owner
 * or see a deleted webhook (deleted rows stay, with their statistics, for audit).
 */
export class WebhooksRepository {
  /** `unit` is given inside a write transaction: deletions and deactivations signal through it */
  constructor(
    private readonly db: Db,
    private readonly unit?: UnitOfWork,
  ) {}

  /** Stopping a webhook (lock, cancel, signal) is the delivery queue's business; see DeliveriesRepository. */
  private get queue(): DeliveriesRepository {
    return new DeliveriesRepository(this.db, this.unit)
  }

  private owned(appId: string) {
    return ownedWebhooks(this.db, appId)
  }

  async create(appId: string, input: WebhookInput): Promise<WebhookRow> {
    const now = nowIso()
    const row: Selectable<WebhooksTable> = {
      id: newId(),
      app_id: appId,
      name: input.name,
      url: input.url,
      is_active: input.isActive ? 1 : 0,
      encrypted: input.encrypted ? 1 : 0,
      signing_secret: input.signingSecret,
      successful_deliveries: 0,
      failed_deliveries: 0,
      last_delivery: null,
      created_at: now,
      updated_at: now,
      deleted_at: null,
      previous_signing_secret: null,
      previous_secret_expires_at: null,
      consecutive_failures: 0,
      circuit_retry_at: null,
      event_types: eventTypesColumn(input.eventTypes ?? null),
    }
    await this.db.insertInto('webhooks').values(row).execute()
    return { ...row, total_events: 0 }
  }

  async list(appId: string, page: { skip: number; take: number }): Promise<WebhookRow[]> {
    return this.owned(appId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.take)
      .offset(page.skip)
      .execute()
  }

  async find(appId: string, id: string): Promise<WebhookRow | undefined> {
    return FIND_WEBHOOK.executeTakeFirst(this.db, appId, id.toLowerCase())
  }

  async update(appId: string, id: string, patch: WebhookPatch): Promise<WebhookRow | undefined> {
    const changes: Updateable<WebhooksTable> = {}
    if (patch.name !== undefined) changes.name = patch.name
    if (patch.url !== undefined) changes.url = patch.url
    if (patch.isActive !== undefined) changes.is_active = patch.isActive ? 1 : 0
    if (patch.encrypted !== undefined) changes.encrypted = patch.encrypted ? 1 : 0
    if (patch.eventTypes !== undefined) changes.event_types = eventTypesColumn(patch.eventTypes)
    // A new receiver, or the owner turning it back on: its circuit starts closed.
    if (changes.url !== undefined || changes.is_active === 1) Object.assign(changes, { consecutive_failures: 0, circuit_retry_at: null })
    // An update that names no field changes nothing, not even updated_at.
    if (Object.keys(changes).length === 0 && patch.signingSecret === undefined) return this.find(appId, id)
    if (changes.is_active === 0) await this.queue.lockToStop(id.toLowerCase(), appId)
    const now = nowIso()
    const row = await updateOwnedWebhook(this.db, appId, id.toLowerCase())
      .set({ ...changes, ...(patch.signingSecret === undefined ? {} : secretChange(patch.signingSecret, now)), updated_at: now })
      .executeTakeFirst()
    if (row !== undefined && row.is_active === 0) await this.queue.stopped(row.id)
    return row
  }

  /**
   * The webhook, locked (PostgreSQL: FOR KEY SHARE) as the outbox locks the webhooks it writes
   * deliveries for, so a concurrent DELETE or deactivation (which takes the row FOR UPDATE first)
   * commits either before (then this is undefined or inactive) or after this transaction (then it
   * cancels what this wrote).
   */
  async lockForDelivery(appId: string, id: string): Promise<WebhookRow | undefined> {
    let query = this.owned(appId).where('id', '=', id.toLowerCase())
    if (backendOf(this.db) === 'postgres') query = query.forKeyShare()
    return query.executeTakeFirst()
  }

  /** The webhook's current signing secret. */
  async secretOf(appId: string, id: string): Promise<string | undefined> {
    return (await this.find(appId, id))?.signing_secret
  }

  /** Replaces the signing secret; the one replaced keeps signing for PREVIOUS_SECRET_GRACE_MS. */
  async rotateSecret(appId: string, id: string, secret: string): Promise<WebhookRow | undefined> {
    const now = nowIso()
    return updateOwnedWebhook(this.db, appId, id.toLowerCase())
      .set({ ...secretChange(secret, now), updated_at: now })
      .executeTakeFirst()
  }

  /**
   * Marks the webhook deleted, cancels its pending deliveries, and returns it as it was. One
   * statement with the `deleted_at is null` guard, so of concurrent deletes exactly one gets the
   * row. Run it in a transaction (`transact`), so the cancellation commits with the deletion, and
   * roll it back when it returns undefined (the cancel ran all the same).
   */
  async delete(appId: string, id: string): Promise<WebhookRow | undefined> {
    const webhookId = id.toLowerCase()
    const now = nowIso()
    // One round trip on PostgreSQL: the row's lock, the deletion and the cancel of its pending
    // deliveries are written together, each a statement of its own, so the two after the lock
    // see what the writers it waited for committed (their deliveries, their event counts).
    const deletion = DELETE_WEBHOOK.bind(this.db, appId, webhookId, now)
    const cancel = this.queue.cancelOnDelete(webhookId, appId, now)
    const lock = this.queue.lockOnDelete(webhookId, appId)
    const [[row], left] = lock === undefined ? await pipelined(this.db, deletion, cancel) : withoutFirst(await pipelined(this.db, lock, deletion, cancel))
    if (row !== undefined) this.queue.deleted(row.id, left)
    return row
  }
}

function withoutFirst<Rest extends unknown[]>([, ...rest]: [unknown, ...Rest]): Rest {
  return rest
}

/** The `event_types` column of a list: its JSON text, or null for every type. */
function eventTypesColumn(eventTypes: readonly string[] | null): string | null {
  return eventTypes === null ? null : JSON.stringify(eventTypes)
}

/**
 * The columns a new signing secret sets (PATCH or rotation alike): the secret it replaces becomes
 * the previous one for the grace period; setting the same secret again changes nothing. SET reads
 * the row's old values on both backends.
 */
function secretChange(secret: string, now: string) {
  const until = isoOf(Date.parse(now) + PREVIOUS_SECRET_GRACE_MS)
  return {
    previous_signing_secret: sql<string | null>`case when signing_secret = ${secret} then previous_signing_secret else signing_secret end`,
    previous_secret_expires_at: sql<string | null>`case when signing_secret = ${secret} then previous_secret_expires_at else ${until} end`,
    signing_secret: secret,
  }
}
