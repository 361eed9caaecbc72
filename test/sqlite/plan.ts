import { CompiledQuery } from 'kysely'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { newSqliteFile } from './temp-file.js'

/** A SQLite database made by the server's own migrations, in a new temporary directory. */
export function openPlanDatabase(prefix: string): Promise<Db> {
  return openDatabase({ kind: 'sqlite', filename: newSqliteFile(prefix) })
}

/** The detail lines of `EXPLAIN QUERY PLAN` for a statement, joined by newlines. */
export async function queryPlanOf(db: Db, statement: { sql: string; parameters: readonly unknown[] }): Promise<string> {
  const { rows } = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${statement.sql}`, [...statement.parameters]))
  return rows.map((row) => row.detail).join('\n')
}
