import { type CompiledQuery, Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { redactUrl } from '../../config.js'
import type { Database } from '../schema.js'
import type { Db } from '../transaction.js'
import { type NamedStatementPool, withNamedStatements } from './statements.js'

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
  // Before the first connection opens: it guards each connection from the moment it joins the pool.
  const named = withNamedStatements(pool)
  try {
    await pool.query('select 1')
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw new Error(`cannot connect to ${redactUrl(url)}: ${error instanceof Error ? error.message : String(error)}`)
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: named }) })
  postgresPools.set(db, named)
  return db
}

/** The pool of each PostgreSQL database openPostgres opened (not of a transaction of one). */
const postgresPools = new WeakMap<Db, NamedStatementPool>()

/**
 * The rows of one statement run on a pooled connection of its own, without kysely's executor,
 * when `db` is a PostgreSQL database opened by openPostgres (not a transaction of one); undefined
 * when it must go through kysely (a transaction, or SQLite).
 */
export function queryOnce<Row>(db: Db, query: Pick<CompiledQuery, 'sql' | 'parameters'>): Promise<Row[]> | undefined {
  return postgresPools.get(db)?.queryOnce<Row>(query.sql, query.parameters)
}
