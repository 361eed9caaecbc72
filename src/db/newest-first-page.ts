import type { SelectQueryBuilder } from 'kysely'
import { type Db, readSnapshot } from './database.js'
import type { Database } from './schema.js'

/** Tables a list pages through newest first: each has created_at and id. */
type NewestFirstTable = { [T in keyof Database]: Database[T] extends { created_at: unknown; id: unknown } ? T : never }[keyof Database]

/** Which rows a page skips, and how many it takes. */
export interface Page {
  skip: number
  take: number
}

/**
 * A page of the rows `filtered` builds on the transaction, newest first (created_at desc, id desc,
 * which an index ending in (created_at, id) after the filter's columns serves without a sort), and
 * the total of those rows, both read on one snapshot so they agree even while others write.
 */
export async function newestFirstPage<TB extends NewestFirstTable>(db: Db, filtered: (tx: Db) => SelectQueryBuilder<Database, TB, object>, page: Page) {
  return readSnapshot(db, async (tx) => {
    const query = filtered(tx)
    const rows = await query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.take).offset(page.skip).execute()
    const counted = await query.select((eb) => eb.fn.countAll<number | string | bigint>().as('total')).executeTakeFirstOrThrow()
    return { rows, total: Number(counted.total) }
  })
}

/** What the console's lists read: the newest rows, of one state, created in [createdFrom, createdBefore). */
export interface Recent {
  state?: string | undefined
  /** inclusive bound of created_at, as stored (ISO 8601 UTC) */
  createdFrom?: string | undefined
  /** exclusive bound of created_at */
  createdBefore?: string | undefined
  take: number
}
