import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CompiledQuery } from 'kysely'
import { type Db, openDatabase } from '../../src/db/database.js'

/** A SQLite database made by the server's own migrations, in a new temporary directory. */
export function openPlanDatabase(prefix: string): Promise<Db> {
  return openDatabase({ kind: 'sqlite', filename: join(mkdtempSync(join(tmpdir(), prefix)), 'db.sqlite') })
}

/** The detail lines of `EXPLAIN QUERY PLAN` for a statement, joined by newlines. */
export async function queryPlanOf(db: Db, statement: { sql: string; parameters: readonly unknown[] }): Promise<string> {
  const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]))
  return rows.map((row) => row.detail).join('\n')
}
