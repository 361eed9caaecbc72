import { closeSync, mkdirSync, openSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import SQLite from 'better-sqlite3'
import { CompiledQuery, Kysely } from 'kysely'
import { isSqliteBusy } from '../errors.js'
import type { Database } from '../schema.js'
import { COMMIT, type Db, onOneConnection } from '../transaction.js'
import { WalCheckpointer } from './checkpointer.js'
import { LockWaitingSqliteDialect, type StatementSource } from './lock-wait.js'
import { WalSync } from './wal-sync.js'
import { SqliteWriteGroups } from './write-groups.js'

/**
 * How long a SQLite statement waits, in asynchronous pauses, for a lock another process holds
 * (the CLI, a worker, a backup) before it fails with SQLITE_BUSY, answered 503.
 */
export const SQLITE_LOCK_WAIT_MS = 5_000

/** What openSqlite made for each SQLite database: its dialect (readNow), its write groups (writeTransaction) and its data version. */
const sqliteParts = new WeakMap<Db, { dialect: LockWaitingSqliteDialect; writeGroups: SqliteWriteGroups; dataVersion: () => number | undefined }>()

/**
 * The rows of a read-only statement of `db` run at once, when `db` is a SQLite database (not a
 * transaction of one) whose connection is free (LockWaitingDriver.readNow); undefined when the
 * statement must go through kysely, as on PostgreSQL.
 */
export function readNow<Row>(db: Db, query: Pick<CompiledQuery, 'sql' | 'parameters'>): Row[] | undefined {
  // The rows are the statement's, as kysely would hand them out (no plugins transform them).
  return sqliteParts.get(db)?.dialect.readNow(query) as Row[] | undefined
}

/**
 * SQLite's data_version of `db` (a SQLite database opened by openSqlite, not a transaction of
 * one): it changes whenever another connection, in this process or another, has committed since
 * it was last read (not with this connection's own commits). Read at once, on the event loop (it
 * takes SQLite's read lock and lets it go, as a statement does, without a row to make); undefined
 * for PostgreSQL, a closed database, or while another process's lock keeps it from being read.
 */
export function dataVersionOf(db: Db): number | undefined {
  return sqliteParts.get(db)?.dataVersion()
}

/** `pragma data_version` of a connection, prepared once (dataVersionOf). */
function dataVersionReader(sqlite: SQLite.Database): () => number | undefined {
  let statement: SQLite.Statement | undefined
  return () => {
    if (!sqlite.open) return undefined
    statement ??= sqlite.prepare('pragma data_version').pluck()
    try {
      const version: unknown = statement.get()
      return typeof version === 'number' ? version : undefined
    } catch (error) {
      if (isSqliteBusy(error)) return undefined
      throw error
    }
  }
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

export function openSqlite(filename: string, lockWaitMs: number): Db {
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
  sqliteParts.set(db, { dialect, writeGroups: new SqliteWriteGroups(db, () => sqlite.inTransaction, walSync, checkpointer, (query) => dialect.runInTransaction(query)), dataVersion: dataVersionReader(sqlite) })
  return db
}

/** The write groups of a SQLite database opened by openSqlite (undefined for a transaction of one). */
export function sqliteWriteGroups(db: Db): SqliteWriteGroups | undefined {
  return sqliteParts.get(db)?.writeGroups
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
 * A reading statement whose rows come from better-sqlite3 as arrays and are made objects here, by
 * a function made for its columns (rowMaker). In object mode better-sqlite3 makes every column's
 * name a JavaScript string again for every row, and V8 looks each up in its string table: V8's work
 * under the two statements of GET /webhooks/{id}, mostly making row objects, was 9.3 % of server
 * CPU (perf; SQLite's own code 5.9 %).
 */
function rowsFromArrays(statement: SQLite.Statement): CachedStatement {
  if (!statement.reader) return statement
  statement.raw(true)
  let columns = statement.columns().map((column) => column.name)
  let toRow = rowMaker(columns)
  const rowOf = (values: unknown[]): Record<string, unknown> => {
    // SQLite prepares again by itself after a schema change: `select *` may have new columns.
    if (values.length !== columns.length) {
      columns = statement.columns().map((column) => column.name)
      toRow = rowMaker(columns)
    }
    return toRow(values)
  }
  return {
    reader: true,
    readonly: statement.readonly,
    all: (parameters) => (statement.all(parameters) as unknown[][]).map(rowOf),
    run: (parameters) => statement.run(parameters),
    iterate: function* (parameters) {
      for (const values of statement.iterate(parameters) as IterableIterator<unknown[]>) yield rowOf(values)
    },
  }
}

/**
 * The row object of a statement's values: one object literal with the column names as its keys,
 * compiled once per statement, so every row has one shape and is made in one go, where filling an
 * empty object name by name goes through V8's megamorphic keyed stores. A name repeated in the
 * columns keeps its last value, as assigning them in order did.
 */
function rowMaker(columns: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  // In a literal, "__proto__" would set the prototype instead of a field.
  if (columns.includes('__proto__')) {
    return (values) => {
      const row: Record<string, unknown> = {}
      for (const [i, name] of columns.entries()) Object.defineProperty(row, name, { value: values[i], enumerable: true, writable: true, configurable: true })
      return row
    }
  }
  const last = new Map(columns.map((name, i) => [name, i]))
  const fields = [...last].map(([name, i]) => `${JSON.stringify(name)}: values[${i}]`)
  return new Function('values', `return { ${fields.join(', ')} }`) as (values: unknown[]) => Record<string, unknown>
}

/** readSnapshot's BEGIN on SQLite: not BEGIN_PLANNING_READ, so its reads wait for the sync in flight. */
export const BEGIN_SNAPSHOT_READ = CompiledQuery.raw('begin')

/** `work` in one deferred SQLite transaction opened by `begin`, on one connection. */
export function sqliteReadTransaction<T>(db: Db, begin: CompiledQuery, work: (tx: Db) => Promise<T>): Promise<T> {
  return onOneConnection(db, begin, work, { end: () => COMMIT })
}
