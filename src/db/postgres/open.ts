import { type CompiledQuery, Kysely, PostgresDialect } from 'kysely'
import { redactUrl } from '../../config.js'
import type { Database } from '../schema.js'
import type { Db } from '../transaction.js'
import { PrimaryPool } from './primary.js'
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
 * break (the server restarted) are dropped by the pool and replaced on the next request. The URL
 * may list several hosts (a failover formation): connections go to the one that takes writes
 * (PrimaryPool), each host's connect bounded by connectMs.
 */
export async function openPostgres(url: string, poolSize: number): Promise<Db> {
  const pool = new PrimaryPool(url, {
    max: poolSize,
    connectionTimeoutMillis: POSTGRES_TIMEOUTS.connectMs,
    query_timeout: POSTGRES_TIMEOUTS.queryMs,
    statement_timeout: POSTGRES_TIMEOUTS.queryMs,
    lock_timeout: POSTGRES_TIMEOUTS.lockMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    application_name: 'devplatform',
    // Statements handed over together are written together (a transaction's BEGIN with its first
    // statement, `pipelined`): see namedStatementClient. Kysely still awaits each of its own.
    pipeline: true,
  })
  const named = withNamedStatements(pool)
  try {
    await named.queryOnce('select 1', [])
  } catch (error) {
    await named.end().catch(() => undefined)
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
