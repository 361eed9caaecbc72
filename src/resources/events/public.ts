import type { Db } from '../../db/database.js'
import type { LedgerEnvironment } from '../../ledger/ledger.js'
import { type EventFilter, EventsReadRepository, type StoredEvent } from './repository.js'

/*
 * What other modules may use of events (the only file of this folder they import): the reads the
 * console makes of GET /events' objects, with the same filter, order and cursor.
 */

export type { EventFilter, EventPlace, StoredEvent } from './repository.js'

/** A page of the application's events as the environment sees them, newest first, and whether more lie beyond it. */
export function pageOfEvents(db: Db, appId: string, environment: LedgerEnvironment, filter: EventFilter): Promise<{ rows: StoredEvent[]; more: boolean }> {
  return new EventsReadRepository(db).page(appId, environment, filter)
}

/** One of the application's events as the environment sees it, or undefined (another application's or environment's is undefined). */
export function findEvent(db: Db, appId: string, environment: LedgerEnvironment, id: string): Promise<StoredEvent | undefined> {
  return new EventsReadRepository(db).find(appId, environment, id)
}

/** The events about one object (their data's id, or a refund's paymentId, is `objectId`), oldest first: its timeline. */
export async function eventsAbout(db: Db, appId: string, environment: LedgerEnvironment, objectId: string): Promise<StoredEvent[]> {
  const rows = await new EventsReadRepository(db).mentioning(appId, environment, objectId, 200)
  return rows.filter((row) => {
    const data: unknown = (JSON.parse(row.payload) as { data?: unknown }).data
    if (typeof data !== 'object' || data === null) return false
    return ('id' in data && data.id === objectId) || ('paymentId' in data && data.paymentId === objectId)
  })
}
