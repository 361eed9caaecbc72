import { type Compilable, CompiledQuery, sql } from 'kysely'
import { TEST_BACKEND } from '../backend.js'
import type { TestServer } from '../helper.js'

/**
 * The plan the server's database makes for `query`, one line per step: SQLite's EXPLAIN QUERY
 * PLAN, or PostgreSQL's EXPLAIN with sequential scans off (it scans a test's small tables whole by
 * choice; with that off, the plan shows whether an index can serve the query).
 */
export async function planOf(server: TestServer, query: Compilable): Promise<string> {
  const { sql: text, parameters } = query.compile()
  const lines = (rows: Array<Record<string, string>>) => rows.map((row) => row['QUERY PLAN'] ?? row.detail).join('\n')
  if (TEST_BACKEND === 'sqlite') return lines((await server.app.db.executeQuery<Record<string, string>>(CompiledQuery.raw(`explain query plan ${text}`, [...parameters]))).rows)
  return server.app.db.transaction().execute(async (tx) => {
    await sql`set local enable_seqscan = off`.execute(tx)
    return lines((await tx.executeQuery<Record<string, string>>(CompiledQuery.raw(`explain ${text}`, [...parameters]))).rows)
  })
}
