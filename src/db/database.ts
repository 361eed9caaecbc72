import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import SQLite from 'better-sqlite3'
import { Kysely, SqliteDialect } from 'kysely'
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
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) })
  try {
    await migrateToLatest(db)
  } catch (error) {
    await db.destroy()
    throw error
  }
  return db
}

/** True when `error` is a unique-constraint violation, in SQLite's or PostgreSQL's words. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('code' in error)) return false
  const code = (error as { code: unknown }).code
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505'
}
