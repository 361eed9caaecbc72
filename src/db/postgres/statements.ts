import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely'
import type pg from 'pg'
import { isReadOnlyRefusal, isStalePlan } from '../errors.js'
import type { PrimaryPool } from './primary.js'

/**
 * The text `pipelined` (src/db/prepared.ts) hands kysely, its statements as the parameters: the
 * connection below writes them at once instead (runPipeline). It never reaches PostgreSQL.
 */
export const PIPELINE = '/* devplatform: pipelined statements */'

/** One statement of a pipeline, as `pipelined` hands it over. */
export interface PipelinedQuery {
  sql: string
  parameters: readonly unknown[]
}

/** What one statement of a pipeline answered: its rows, or its error (`Outcome` in src/db/prepared.ts). */
type PipelinedOutcome = { ok: true; rows: unknown[] } | { ok: false; error: unknown }

function isPipelinedQuery(value: unknown): value is PipelinedQuery {
  return typeof value === 'object' && value !== null && 'sql' in value && typeof value.sql === 'string' && 'parameters' in value && Array.isArray(value.parameters)
}

/** Kysely's transactions open with these texts (`onOneConnection`'s BEGIN, or with an isolation level). */
const BEGINS = /^(begin|start transaction)\b/i

const EMPTY_RESULT: PostgresQueryResult<never> = { command: 'SELECT', rowCount: 0, rows: [] }

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
  // A transaction's BEGIN waits here and goes out with the transaction's first statement, both
  // written at once (the connection runs in pg's pipeline mode), so opening a transaction costs no
  // round trip of its own. PostgreSQL runs them in order; a BEGIN fails only with its session
  // (a plain BEGIN has no error of its own), so the statement never runs outside the transaction.
  let pendingBegin: string | undefined
  // The session refused a write as read-only: its server is no longer the primary (a switchover
  // demoted it), so it leaves the pool when released and the next checkout looks for the primary.
  let refusedWrite = false
  async function run<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    try {
      if (text === PIPELINE) return resultOf<R>(await runPipeline(parameters))
      if (parameters.length === 0 && BEGINS.test(text)) {
        inTransaction = true
        pendingBegin = text
        return EMPTY_RESULT
      }
      const begin = pendingBegin
      pendingBegin = undefined
      if (begin === undefined) return await runStatement<R>(text, parameters)
      // A transaction that ran nothing: its COMMIT (with no NOTIFY) or ROLLBACK has nothing to do.
      if (parameters.length === 0 && /^(commit|rollback)$/i.test(text)) {
        inTransaction = false
        return EMPTY_RESULT
      }
      const [begun, answer] = together(() => [client.query(begin), runStatement<R>(text, parameters)] as const)
      try {
        await begun
      } catch (error) {
        answer.catch(() => undefined)
        throw error
      }
      return await answer
    } catch (error) {
      if (isReadOnlyRefusal(error)) refusedWrite = true
      throw error
    }
  }
  /**
   * `pipelined`'s statements (PIPELINE's parameters), written at once behind any waiting BEGIN and
   * answered in order: each one's rows, or its error (a statement after a failed one in a
   * transaction fails too, as PostgreSQL aborts the transaction).
   */
  async function runPipeline(parameters: ReadonlyArray<unknown>): Promise<pg.QueryResult> {
    const queries = parameters.filter(isPipelinedQuery)
    const answers: Promise<PostgresQueryResult<unknown>>[] = []
    const begin = pendingBegin
    pendingBegin = undefined
    together(() => {
      if (begin !== undefined) answers.push(client.query(begin).then(() => EMPTY_RESULT))
      for (const query of queries) answers.push(runStatement(query.sql, query.parameters))
    })
    const settled = await Promise.allSettled(answers)
    const outcomes = settled.slice(begin === undefined ? 0 : 1).map((outcome): PipelinedOutcome => {
      if (outcome.status === 'fulfilled') return { ok: true, rows: outcome.value.rows }
      if (isReadOnlyRefusal(outcome.reason)) refusedWrite = true
      return { ok: false, error: outcome.reason }
    })
    const [began] = settled
    if (begin !== undefined && began?.status === 'rejected') throw began.reason
    return { command: 'SELECT', rowCount: outcomes.length, rows: outcomes, oid: 0, fields: [] }
  }
  /**
   * What `send` writes (pg writes each query as it is handed over, in pipeline mode) goes out in
   * one write: the socket is corked meanwhile. A write to a local socket is a system call that
   * also wakes its reader, a visible share of a request's CPU (bench:profile).
   */
  function together<T>(send: () => T): T {
    const { stream } = client.connection
    stream.cork()
    try {
      return send()
    } finally {
      stream.uncork()
    }
  }
  async function runStatement<R>(text: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    if (parameters.length === 0) {
      // pg sends a text without parameters in the simple protocol, unprepared.
      if (/(^|;\s*)(commit|rollback)$/i.test(text)) inTransaction = false
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
