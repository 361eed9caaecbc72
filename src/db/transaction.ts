import { CompiledQuery, type Kysely } from 'kysely'
import type { Database } from './schema.js'

/** A database, or a transaction on one. */
export type Db = Kysely<Database>

export const COMMIT = CompiledQuery.raw('commit')
export const ROLLBACK = CompiledQuery.raw('rollback')

export interface OnOneConnectionOptions {
  /** the statement that ends the transaction once `work` has returned */
  end: () => CompiledQuery
  /** whether a ROLLBACK is still needed after a failure (SQLite rolls some back by itself) */
  mayRollBack?: () => boolean
  /** runs once the end statement succeeded, before the connection is given back */
  ended?: () => void
}

/**
 * `work` in a transaction on one connection, opened by `begin` and ended by `end` once `work` has
 * returned (rolled back if anything throws): the one way this codebase runs a transaction by hand,
 * where kysely's `transaction()` cannot say how it begins or ends. A failing ROLLBACK must not
 * hide the error that caused it.
 */
export function onOneConnection<T>(db: Db, begin: CompiledQuery, work: (tx: Db) => Promise<T>, options: OnOneConnectionOptions): Promise<T> {
  return db.connection().execute(async (tx) => {
    await tx.executeQuery(begin)
    let result: T
    try {
      result = await work(tx)
      await tx.executeQuery(options.end())
    } catch (error) {
      if (options.mayRollBack?.() ?? true) await tx.executeQuery(ROLLBACK).catch(() => undefined)
      throw error
    }
    options.ended?.()
    return result
  })
}
