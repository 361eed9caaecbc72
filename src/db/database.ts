import { CompiledQuery, PostgresAdapter } from 'kysely'
import type { DatabaseLocation } from '../config.js'
import { isRetryableConflict } from './errors.js'
import { openPostgres } from './postgres/open.js'
import { BEGIN_PLANNING_READ } from './sqlite/lock-wait.js'
import { BEGIN_SNAPSHOT_READ, openSqlite, SQLITE_LOCK_WAIT_MS, sqliteReadTransaction, sqliteWriteGroups } from './sqlite/open.js'
import { COMMIT, type Db, onOneConnection } from './transaction.js'

/**
 * The engine-neutral face of the database: connecting to one, and the transactions of the
 * repositories. This module is the one place that branches on the backend; each backend's
 * machinery is in src/db/sqlite/ and src/db/postgres/.
 */

export type { Db }
export type Backend = 'sqlite' | 'postgres'

/** Which engine a database (or a transaction on it) runs on: the one place dialect SQL branches. */
export function backendOf(db: Db): Backend {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite'
}

export interface OpenDatabaseOptions {
  /** SQLite only: overrides SQLITE_LOCK_WAIT_MS (tests shorten it) */
  sqliteLockWaitMs?: number
}

/**
 * Connects to the database named by the configuration, as it is: openDatabase
 * (src/modules/database.ts) also brings it to the schema the modules declare.
 */
export async function connectDatabase(location: DatabaseLocation, options: OpenDatabaseOptions = {}): Promise<Db> {
  return location.kind === 'sqlite' ? openSqlite(location.filename, options.sqliteLockWaitMs ?? SQLITE_LOCK_WAIT_MS) : await openPostgres(location.url, location.poolSize)
}

/**
 * Runs reads that must agree with each other (a page and its total) on one snapshot: a
 * REPEATABLE READ, READ ONLY transaction on PostgreSQL; one deferred transaction on SQLite.
 */
export async function readSnapshot<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  if (backendOf(db) === 'postgres') {
    // Once again after a stale plan: its statements are prepared anew (postgres/statements.ts).
    return runAgainOnConflict(1, () => db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(work))
  }
  return sqliteReadTransaction(db, BEGIN_SNAPSHOT_READ, work)
}

/**
 * Runs reads that only plan database work (what the dispatcher claims, whether a fan-out is
 * waiting) without waiting for the WAL sync in flight, as other reads do on SQLite: the work they
 * plan re-reads what it acts on (the claim waits for the sync before it begins). On the
 * dispatcher's path to every delivery each such wait was up to one more sync. PostgreSQL: `work`
 * on `db`, whose reads only ever see durable commits.
 */
export async function planningRead<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  if (backendOf(db) === 'postgres') return work(db)
  return sqliteReadTransaction(db, BEGIN_PLANNING_READ, work)
}

export interface WriteTransactionOptions {
  /**
   * PostgreSQL only: how many times to run `work` again when the database aborts it for a
   * deadlock or a serialization failure. Only for work without side effects outside the database.
   */
  retries?: number
  /**
   * SQLite only: for work that acts outside the database before it commits (the dispatcher's
   * claim starts requests). It runs in a group of its own, so it never acts on another write of
   * its group that might still be undone.
   */
  alone?: boolean
  /**
   * PostgreSQL only: statements without parameters (the commit's NOTIFYs) to send in one simple
   * query with the COMMIT, asked for once `work` has returned: one round trip instead of two, and
   * they take effect exactly when the transaction commits.
   */
  withCommit?: () => string | undefined
}

/**
 * Runs `work` as one write transaction on one connection. `work` must use the `tx` it is given,
 * and must not open another transaction.
 *
 * SQLite gets BEGIN IMMEDIATE: the write lock is taken first, so a transaction that reads before
 * it writes can't fail to upgrade when another process wrote meanwhile, and what it read stays
 * true until it commits. While another process holds that lock, BEGIN IMMEDIATE is tried again
 * asynchronously (LockWaitingSqliteDialect), then fails with SQLITE_BUSY; in WAL mode nothing
 * after it meets a lock (COMMIT included). The write transactions waiting together run as one
 * group, each in a savepoint of its own, and commit together (SqliteWriteGroups): a failing one
 * is undone alone. It returns only once the commit is on disk (WalSync: a sync shared by the
 * commits made meanwhile, off the event loop), as PostgreSQL's COMMIT does.
 * PostgreSQL runs READ COMMITTED; the repositories take the row locks their invariants need (see
 * DeliveriesRepository and WebhooksRepository).
 */
export async function writeTransaction<T>(db: Db, work: (tx: Db) => Promise<T>, options: WriteTransactionOptions = {}): Promise<T> {
  if (backendOf(db) === 'postgres') return runAgainOnConflict(options.retries ?? 0, () => postgresTransaction(db, work, options.withCommit))
  const groups = sqliteWriteGroups(db)
  if (groups === undefined) throw new Error('writeTransaction: a SQLite database opened by openDatabase, or a transaction of one, is needed; not a transaction of it')
  return groups.run(work, options.alone ?? false)
}

const BEGIN = CompiledQuery.raw('begin')

/**
 * A PostgreSQL write transaction on one pooled connection, as kysely's `transaction()` runs it,
 * except that `withCommit`'s statements go with the COMMIT in one simple query: if one of them
 * fails, PostgreSQL skips the COMMIT and the transaction is rolled back.
 */
function postgresTransaction<T>(db: Db, work: (tx: Db) => Promise<T>, withCommit: (() => string | undefined) | undefined): Promise<T> {
  return onOneConnection(db, BEGIN, work, {
    end: () => {
      const statements = withCommit?.()
      return statements === undefined ? COMMIT : CompiledQuery.raw(`${statements}; commit`)
    },
  })
}

/** A PostgreSQL transaction, run again (up to `retries` times) when PostgreSQL aborted it for a conflict or a stale plan. */
async function runAgainOnConflict<T>(retries: number, transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await transaction()
    } catch (error) {
      if (attempt >= retries || !isRetryableConflict(error)) throw error
    }
  }
}
