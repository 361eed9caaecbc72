import type { Db } from '../../db/database.js'

/** An event as the list answers it: its place in the order and its envelope, as delivered. */
export interface StoredEvent {
  id: string
  created_at: string
  /** the JSON envelope {"id","type","created_at","data"}, byte for byte what its webhooks received */
  payload: string
}

/** Where a page starts: an event's place in the order (created_at, then id). */
export interface EventPlace {
  id: string
  created_at: string
}

export interface EventFilter {
  types?: readonly string[] | undefined
  /** exclusive bounds of created_at, as stored (ISO 8601 UTC with milliseconds) */
  createdAfter?: string | undefined
  createdBefore?: string | undefined
  /** the events older than this one (the next page), or newer than it (the page before) */
  olderThan?: EventPlace | undefined
  newerThan?: EventPlace | undefined
  take: number
}

/**
 * The events of one application as one environment sees them: those of its objects (their data's
 * livemode) and those of the application's own (environment null). Every query starts from both.
 */
export class EventsReadRepository {
  constructor(private readonly db: Db) {}

  private of(db: Db, appId: string, environment: string) {
    return db
      .selectFrom('events')
      .where('app_id', '=', appId)
      .where((eb) => eb.or([eb('environment', '=', environment), eb('environment', 'is', null)]))
  }

  async find(appId: string, environment: string, id: string): Promise<StoredEvent | undefined> {
    return this.of(this.db, appId, environment).select(['id', 'created_at', 'payload']).where('id', '=', id.toLowerCase()).executeTakeFirst()
  }

  /**
   * A page newest first, and whether more match beyond it in the direction it was read: newest
   * first from the top or after `olderThan`; from `newerThan` upwards (oldest first, then turned).
   */
  async page(appId: string, environment: string, filter: EventFilter): Promise<{ rows: StoredEvent[]; more: boolean }> {
    let query = this.of(this.db, appId, environment).select(['id', 'created_at', 'payload'])
    if (filter.types !== undefined) query = query.where('type', 'in', filter.types)
    if (filter.createdAfter !== undefined) query = query.where('created_at', '>', filter.createdAfter)
    if (filter.createdBefore !== undefined) query = query.where('created_at', '<', filter.createdBefore)
    const older = filter.olderThan
    const newer = filter.newerThan
    // (created_at, id) beyond the cursor, written so the (app_id, created_at) index bounds the range.
    if (older !== undefined) query = query.where('created_at', '<=', older.created_at).where((eb) => eb.or([eb('created_at', '<', older.created_at), eb('id', '<', older.id)]))
    if (newer !== undefined) query = query.where('created_at', '>=', newer.created_at).where((eb) => eb.or([eb('created_at', '>', newer.created_at), eb('id', '>', newer.id)]))
    const direction = newer === undefined ? 'desc' : 'asc'
    const rows = await query.orderBy('created_at', direction).orderBy('id', direction).limit(filter.take + 1).execute()
    const more = rows.length > filter.take
    const page = rows.slice(0, filter.take)
    return { rows: newer === undefined ? page : page.reverse(), more }
  }

  /** The events whose envelope names `objectId` (a payment's timeline), oldest first; the caller keeps those about it. */
  mentioning(appId: string, environment: string, objectId: string, take: number): Promise<StoredEvent[]> {
    return this.of(this.db, appId, environment)
      .select(['id', 'created_at', 'payload'])
      .where('payload', 'like', `%"${objectId.replace(/[^0-9A-Za-z_-]/g, '')}"%`)
      .orderBy('created_at')
      .orderBy('id')
      .limit(take)
      .execute()
  }
}
