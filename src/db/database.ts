import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, type SqliteDatabase, SqliteDialect, type SqliteStatement, sql } from 'kysely'
import type { DatabaseLocation } from '../config.js'
import { migrateToLatest } from './migrations.js'
import type { Database } from './schema.js'

export type Db = Kysely<Database>

/** Opens the database named by the configuration and migrates it to the newest schema. */
export async function openDatabase(location: DatabaseLocation): Promise<Db> {
  if (location.filename !== ':memory:') mkdirSync(dirname(location.filename), { recursive: true })
  const sqlite = new SQLite(location.filename)
  // WAL lets the CLI write while the server reads; busy_timeout makes the two wait for each other.
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = NORMAL')
  sqlite.pragma('busy_timeout = 5000')
  sqlite.pragma('foreign_keys = ON')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) })
  try {
    await migrateToLatest(db)
  } catch (error) {
    await db.destroy()
    throw error
  }
  return db
}

const STATEMENT_CACHE_SIZE = 500

/**
 * Kysely's SQLite driver prepares every query anew; preparing was 12 % of server CPU on an
 * authenticated read (bench:api profile). Queries are parameterised, so their SQL text repeats:
 * keep the prepared statements, keyed by SQL. Kysely runs one query at a time on the connection,
 * so a statement is never used twice at once; SQLite re-prepares by itself after a schema change.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>()
  return {
    close: () => sqlite.close(),
    prepare(sqlText: string): SqliteStatement {
      let statement = statements.get(sqlText)
      if (statement === undefined) {
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear()
        statement = sqlite.prepare(sqlText)
        statements.set(sqlText, statement)
      }
      return statement
    },
  }
}

/**
 * Runs `work` as one write transaction on one connection. SQLite gets BEGIN IMMEDIATE: the write
 * lock is taken first, so a transaction that reads before it writes can't fail to upgrade when
 * another process (a separate worker, the CLI) wrote meanwhile, and what it read stays true until
 * it commits. `work` must use the `tx` it is given, and must not open another transaction.
 */
export async function writeTransaction<T>(db: Db, work: (tx: Db) => Promise<T>): Promise<T> {
  return db.connection().execute(async (tx) => {
    await sql`begin immediate`.execute(tx)
    let result: T
    try {
      result = await work(tx)
    } catch (error) {
      await sql`rollback`.execute(tx)
      throw error
    }
    try {
      await sql`commit`.execute(tx)
    } catch (error) {
      await sql`rollback`.execute(tx).catch(() => undefined)
      throw error
    }
    return result
  })
}

/** True when `error` is a unique-constraint violation, in SQLite's or PostgreSQL's words. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false
  const code = (error as { code: unknown }).code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505'
}
