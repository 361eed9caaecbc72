import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import SQLite from 'better-sqlite3'
import { CompiledQuery, Kysely, PostgresAdapter, PostgresDialect } from 'kysely'
import pg from 'pg'
import { type DatabaseLocation, redactUrl } from '../config.js'
import { isRetryableConflict } from './errors.js'
import { migrateToLatest } from './migrations.js'
import type { Database } from './schema.js'
import { WalCheckpointer } from './checkpointer.js'
import { BEGIN_PLANNING_READ, LockWaitingSqliteDialect, type StatementSource } from './sqlite-lock-wait.js'
import { WalSync } from './wal-sync.js'
import { withNamedStatements } from './postgres-statements.js'
import { SqliteWriteGroups } from './write-groups.js'

export type Db = Kysely<Database>
export type Backend = 'sqlite' | 'postgres'

/** Which engine a database (or a transaction on it) runs on: the one place dialect SQL branches. */
export function backendOf(db: Db): Backend {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite'
}

/** How long a PostgreSQL connection or query may take before it counts as "the database is unavailable". */
export const POSTGRES_TIMEOUTS = {
  connectMs: 3_000,
  queryMs: 8_000,
  lockMs: 5_000,
} as const

/**
 * How long a SQLite statement waits, in asynchronous pauses, for a lock another process holds
 * (the CLI, a worker, a backup) before it fails with SQLITE_BUSY, answered 503.
 */
export const SQLITE_LOCK_WAIT_MS = 5_000

export interface OpenDatabaseOptions {
  /** SQLite only: overrides SQLITE_LOCK_WAIT_MS (tests shorten it) */
  sqliteLockWaitMs?: number
}

/** Opens the database named by the configuration and migrates it to the newest schema. */
export async function openDatabase(location: DatabaseLocation, options: OpenDatabaseOptions = {}): Promise<Db> {
  const db =
    location.kind === 'sqlite'
      ? openSqlite(location.filename, options.sqliteLockWaitMs ?? SQLITE_LOCK_WAIT_MS)
      : await openPostgres(location.url, location.poolSize)
  try {
    await migrateToLatest(db)
  } catch (error) {
    await db.destroy()
    throw error
  }
  return db
}

/** What openSqlite made for each SQLite database: its dialect (readNow) and its write groups (writeTransaction). */
const sqliteParts = new WeakMap<Db, { dialect: LockWaitingSqliteDialect; writeGroups: SqliteWriteGroups }>()

/**
 * The rows of a read-only statement of `db` run at once, when `db` is a SQLite database (not a
 * transaction of one) whose connection is free (LockWaitingDriver.readNow); undefined when the
 * statement must go through kysely, as on PostgreSQL.
 */
export function readNow<Row>(db: Db, query: CompiledQuery<Row>): Row[] | undefined {
  // The rows are the statement's, as kysely would hand them out (no plugins transform them).
  return sqliteParts.get(db)?.dialect.readNow(query) as Row[] | undefined
}

/**
 * Why SQLite could not open `filename`, in words an operator can act on: the directory that
 * cannot be created, or cannot be written (read-only file system, permissions), or the file.
 */
function sqliteOpenProblem(filename: string, error: unknown): Error {
  const directory = dirname(filename)
  const reason = (problem: unknown) => (problem instanceof Error ? problem.message : String(problem))
  try {
    mkdirSync(directory, { recursive: true })
  } catch (problem) {
    return new Error(`cannot create the directory ${directory} for the SQLite database: ${reason(problem)}`)
  }
  // SQLite writes its journal and WAL files beside the database: the directory must take new files.
  const probe = join(directory, `.devplatform-write-test-${process.pid}`)
  try {
    closeSync(openSync(probe, 'wx'))
    rmSync(probe, { force: true })
  } catch (problem) {
    return new Error(`the directory ${directory} of the SQLite database is not writable: ${reason(problem)}`)
  }
  return new Error(`cannot open the SQLite database ${filename}: ${reason(error)}`)
}

function openSqlite(filename: string, lockWaitMs: number): Db {
  let sqlite: SQLite.Database
  try {
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true })
    // The pragmas below run once, before anything is served: they may wait for a lock here.
    sqlite = new SQLite(filename, { timeout: lockWaitMs })
    // WAL lets the CLI write while the server reads.
    sqlite.pragma('journal_mode = WAL')
  } catch (error) {
    throw sqliteOpenProblem(filename, error)
  }
  // Commits are made durable by WalSync, off the event loop (writeTransaction), not inside COMMIT.
  sqlite.pragma('synchronous = NORMAL')
  // From here on SQLite never waits for a lock itself: better-sqlite3 is synchronous, so a wait
  // inside SQLite would stop the event loop (every request, /health/public too). The dialect
  // waits instead, asynchronously and bounded (LockWaitingSqliteDialect).
  sqlite.pragma('busy_timeout = 0')
  sqlite.pragma('foreign_keys = ON')
  // Checkpoints run on a worker thread (WalCheckpointer), not inside a COMMIT on the event loop.
  if (filename !== ':memory:') sqlite.pragma('wal_autocheckpoint = 0')
  // SQLite's own lower() folds ASCII only; PostgreSQL's folds all of Unicode. Case-insensitive
  // filters must answer the same on both, so lower() here is JavaScript's (Unicode) folding.
  sqlite.function('lower', { deterministic: true }, (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value))
  const walSync = filename === ':memory:' ? undefined : new WalSync(`${filename}-wal`)
  const dialect = new LockWaitingSqliteDialect(withStatementCache(sqlite, walSync), sqlite, lockWaitMs, () => walSync?.pending())
  const db = new Kysely<Database>({ dialect })
  const checkpointer = filename === ':memory:' ? undefined : new WalCheckpointer(filename)
  sqliteParts.set(db, { dialect, writeGroups: new SqliteWriteGroups(db, () => sqlite.inTransaction, walSync, checkpointer) })
  return db
}

/**
 * A pooled PostgreSQL database. Every wait is bounded, so an outage answers (503) instead of
 * hanging: connecting, waiting for a pooled connection, a query, a lock. Idle connections that
 * break (the server restarted) are dropped by the pool and replaced on the next request.
 */
async function openPostgres(url: string, poolSize: number): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: POSTGRES_TIMEOUTS.connectMs,
    query_timeout: POSTGRES_TIMEOUTS.queryMs,
    statement_timeout: POSTGRES_TIMEOUTS.queryMs,
    lock_timeout: POSTGRES_TIMEOUTS.lockMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'devplatform',
  })
  // A pooled idle connection that dies emits 'error' on the pool; without a listener the
  // process would crash. The next query gets a fresh connection (or a 503 while it is down).
  pool.on('error', () => undefined)
  try {
    await pool.query('select 1')
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw new Error(`cannot connect to ${redactUrl(url)}: ${error instanceof Error ? error.message : String(error)}`)
  }
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: withNamedStatements(pool) }) })
}

const STATEMENT_CACHE_SIZE = 500

/**
 * Kysely's SQLite driver prepares every query anew; preparing was 12 % of server CPU on an
 * authenticated read (bench:api profile). Queries are parameterised, so their SQL text repeats:
 * keep the prepared statements, keyed by SQL. Kysely runs one query at a time on the connection,
 * and readNow runs one only while kysely is not using it, so a statement is never used twice at
 * once; SQLite re-prepares by itself after a schema change.
 */
function withStatementCache(sqlite: SQLite.Database, walSync: WalSync | undefined): StatementSource {
  const statements = new Map<string, CachedStatement>()
  return {
    close: () => {
      sqlite.close()
      void walSync?.close()
    },
    prepare(sqlText: string): CachedStatement {
      let statement = statements.get(sqlText)
      if (statement === undefined) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear()
        statement = rowsFromArrays(sqlite.prepare(sqlText))
        statements.set(sqlText, statement)
      }
      return statement
    },
  }
}

type CachedStatement = ReturnType<StatementSource['prepare']>

/**
 * A reading statement whose rows come from better-sqlite3 as arrays and are made objects here,
 * with the column names read once. In object mode better-sqlite3 makes every column's name a
 * JavaScript string again for every row, and V8 looks each up in its string table: V8's work
 * under the two statements of GET /webhooks/{id}, mostly making row objects, was 9.3 % of server
 * CPU (perf; SQLite's own code 5.9 %).
 */
function rowsFromArrays(statement: SQLite.Statement): CachedStatement {
  if (!statement.reader) return statement
  statement.raw(true)
  let names = statement.columns().map((column) => column.name)
  const toRow = (values: unknown[]): Record<string, unknown> => {
    // SQLite prepares again by itself after a schema change: `select *` may have new columns.
    if (values.length !== names.length) names = statement.columns().map((column) => column.name)
    const row: Record<string, unknown> = {}
    for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i]
    return row
  }
  return {
    reader: true,
    readonly: statement.readonly,
    all: (parameters) => (statement.all(parameters) as unknown[][]).map(toRow),
    run: (parameters) => statement.run(parameters),
    iterate: function* (parameters) {
      for (const values of statement.iterate(parameters) as IterableIterator<unknown[]>) yield toRow(values)
    },
  }
}

/**
 * Runs reads that must agree with each other (a page and its total) on one snapshot: a
 * REPEATABLE READ, READ ONLY transaction on PostgreSQL; one deferred transaction on SQLite.
 */
export async function readSnapshot<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  if (backendOf(db) === 'postgres') {
    // Once again after a stale plan: its statements are prepared anew (postgres-statements.ts).
    return runAgainOnConflict(1, () => db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(work))
  }
  return sqliteReadTransaction(db, BEGIN_SNAPSHOT_READ, work)
}

/** readSnapshot's BEGIN on SQLite: not BEGIN_PLANNING_READ, so its reads wait for the sync in flight. */
const BEGIN_SNAPSHOT_READ = CompiledQuery.raw('begin')

/** `work` in one deferred SQLite transaction opened by `begin`, on one connection. */
function sqliteReadTransaction<T>(db: Db, begin: CompiledQuery, work: (tx: Db) => Promise<T>): Promise<T> {
  return onOneConnection(db, begin, work, () => COMMIT)
}

const COMMIT = CompiledQuery.raw('commit')
const ROLLBACK = CompiledQuery.raw('rollback')

/**
 * `work` in a transaction on one connection, opened by `begin` and ended by the statement `end`
 * gives once `work` has returned (rolled back if anything throws): the one place this codebase
 * runs a transaction by hand, where kysely's `transaction()` cannot say how it begins or ends.
 */
function onOneConnection<T>(db: Db, begin: CompiledQuery, work: (tx: Db) => Promise<T>, end: () => CompiledQuery): Promise<T> {
  return db.connection().execute(async (tx) => {
    await tx.executeQuery(begin)
    try {
      const result = await work(tx)
      await tx.executeQuery(end())
      return result
    } catch (error) {
      await tx.executeQuery(ROLLBACK).catch(() => undefined)
      throw error
    }
  })
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
  const groups = sqliteParts.get(db)?.writeGroups
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
  return onOneConnection(db, BEGIN, work, () => {
    const statements = withCommit?.()
    return statements === undefined ? COMMIT : CompiledQuery.raw(`${statements}; commit`)
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
