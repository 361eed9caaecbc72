import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import type pg from 'pg'
import { isReadOnlyRefusal, isStalePlan } from '../errors.js'
import type { PrimaryPool } from './primary.js'

/** Distinct statement texts that get a server-side prepared statement; past it, texts run unnamed. */
export const NAMED_STATEMENT_LIMIT = 500

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans each one again (bench:profile
 * on PostgreSQL + Redis). Queries are parameterised, so their SQL text repeats: each text runs as
 * a named statement, which a connection parses once (pg remembers per connection which names it
 * has prepared) and PostgreSQL plans from its plan cache.
 *
 * A schema change by another process (a newer instance's migration) can make a prepared
 * statement's result type stale: PostgreSQL then refuses it on every run ("cached plan must not
 * change result type"). Its text gets a new name, prepared anew; outside a transaction the
 * statement runs again at once, inside one the refusal aborts the transaction, and
 * writeTransaction's retries run it again (isRetryableConflict).
 */
/** The pool kysely is given, and a way to run one statement on it without kysely's executor. */
export interface NamedStatementPool extends PostgresPool {
  /**
   * One statement with parameters on a pooled connection of its own, as kysely would run it
   * outside a transaction (named, prepared once per connection), without kysely's executor and
   * connection provider around it.
   */
  queryOnce<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<R[]>
}

export function withNamedStatements(pool: PrimaryPool): NamedStatementPool {
  const names = new Map<string, string>()
  let issued = 0
  const statements: StatementNames = {
    nameOf(text) {
      let name = names.get(text)
      if (name === undefined && names.size < NAMED_STATEMENT_LIMIT) {
        name = `devplatform_${issued++}`
        names.set(text, name)
      }
      return name
    },
    forget(text) {
      names.delete(text)
    },
  }
  // Kysely keeps its connection object per client object: hand it the same one every time.
  const clients = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  const connect = async (): Promise<PostgresPoolClient> => {
    const client = await pool.connect()
    let named = clients.get(client)
    if (named === undefined) {
      named = namedStatementClient(client, statements, pool)
      clients.set(client, named)
    }
    return named
  }
  let ended = false
  return {
    end: () => {
      ended = true
      return pool.end()
    },
    connect,
    async queryOnce<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<R[]> {
      // As kysely answers a statement once the database is destroyed (isDatabaseClosed knows it).
      if (ended) throw new Error('driver has already been destroyed')
      const client = await connect()
      try {
        return (await client.query<R>(text, parameters)).rows
      } finally {
        client.release()
      }
    },
  }
}

interface StatementNames {
  /** the text's statement name; undefined once the limit is reached */
  nameOf(text: string): string | undefined
  /** the text's next run prepares it anew, under a new name */
  forget(text: string): void
}

function namedStatementClient(client: pg.PoolClient, statements: StatementNames, pool: PrimaryPool): PostgresPoolClient {
  // Kysely's transactions begin, commit and roll back with these texts (savepoints are not ends).
  let inTransaction = false
  // The session refused a write as read-only: its server is no longer the primary (a switchover
  // demoted it), so it leaves the pool when released and the next checkout looks for the primary.
  let refusedWrite = false
  async function run<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    try {
      return await runStatement<R>(text, parameters)
    } catch (error) {
      if (isReadOnlyRefusal(error)) refusedWrite = true
      throw error
    }
  }
  async function runStatement<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    if (parameters.length === 0) {
      // pg sends a text without parameters in the simple protocol, unprepared.
      if (/^(begin|start transaction)\b/i.test(text)) inTransaction = true
      else if (/(^|;\s*)(commit|rollback)$/i.test(text)) inTransaction = false
      return resultOf<R>(await client.query(text))
    }
    const values = [...parameters]
    const name = statements.nameOf(text)
    if (name === undefined) return resultOf<R>(await client.query({ text, values }))
    try {
      return resultOf<R>(await client.query({ name, text, values }))
    } catch (error) {
      if (!isStalePlan(error)) throw error
      statements.forget(text)
      if (inTransaction) throw error
      return resultOf<R>(await client.query({ name: statements.nameOf(text), text, values }))
    }
  }
  function query<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>
  function query<R>(text: string | PostgresCursor<R>, parameters: ReadonlyArray<unknown> = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof text !== 'string') throw new Error('streaming queries are not configured')
    return run<R>(text, parameters)
  }
  function release(): void {
    if (!refusedWrite) return client.release()
    pool.refusedWrite(client)
    client.release(true)
  }
  return { query, release }
}

function resultOf<R>(answer: pg.QueryResult | pg.QueryResult[]): PostgresQueryResult<R> {
  // A simple query of several statements (writeTransaction's NOTIFYs and COMMIT) answers with one
  // result per statement: the last one is the query's.
  const result = Array.isArray(answer) ? answer[answer.length - 1] : answer
  if (result === undefined) return { command: 'SELECT', rowCount: 0, rows: [] }
  // Kysely reads `command` only to count affected rows of INSERT, UPDATE, DELETE and MERGE.
  return { command: result.command as PostgresQueryResult<R>['command'], rowCount: result.rowCount ?? 0, rows: result.rows as R[] }
}
