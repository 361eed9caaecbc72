import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { redactUrl } from '../../config.js'
import type { Database } from '../schema.js'
import type { Db } from '../transaction.js'
import { withNamedStatements } from './statements.js'

/** How long a PostgreSQL connection or query may take before it counts as "the database is unavailable". */
export const POSTGRES_TIMEOUTS = {
  connectMs: 3_000,
  queryMs: 8_000,
  lockMs: 5_000,
} as const

/**
 * A pooled PostgreSQL database. Every wait is bounded, so an outage answers (503) instead of
 * hanging: connecting, waiting for a pooled connection, a query, a lock. Idle connections that
 * break (the server restarted) are dropped by the pool and replaced on the next request.
 */
export async function openPostgres(url: string, poolSize: number): Promise<Db> {
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
