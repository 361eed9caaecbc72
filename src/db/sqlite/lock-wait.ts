import { setTimeout as sleep } from 'node:timers/promises'
import type SQLite from 'better-sqlite3'
import { ROLLBACK } from '../transaction.js'
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type LimitNode,
  type QueryCompiler,
  type QueryResult,
  type SqliteDatabase,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  SqliteQueryCompiler,
  type SqliteStatement,
} from 'kysely'
import { isSqliteBusy } from '../errors.js'

/** The pauses between tries of a statement that met another process's lock: short at first, then this long at most. */
const FIRST_PAUSE_MS = 2
const LONGEST_PAUSE_MS = 50

/**
 * Kysely's SQLite dialect, except that a statement meeting another process's lock (SQLITE_BUSY;
 * the connection has busy_timeout 0, so SQLite never waits inside sqlite3_step, which would
 * stop the event loop) is tried again after an asynchronous pause, for up to `lockWaitMs`, and
 * the connection is given back between tries so this process's other queries keep running.
 *
 * Only what a lock refusal leaves unchanged is tried again: a statement outside a transaction
 * (BEGIN IMMEDIATE included: SQLite undoes a refused statement entirely), and the first statement
 * of a transaction that has run nothing since its BEGIN (it is rolled back and begun again, so it
 * holds nothing while it waits). A refusal later in a transaction is thrown: only its caller can
 * run the whole transaction again. Past `lockWaitMs` the last SQLITE_BUSY is thrown (503).
 */
export class LockWaitingSqliteDialect extends SqliteDialect {
  private driver: LockWaitingDriver | undefined

  constructor(
    private readonly statements: StatementSource,
    private readonly sqlite: SQLite.Database,
    private readonly lockWaitMs: number,
    private readonly durable: DurableGate,
  ) {
    super({ database: statements })
  }

  override createDriver(): Driver {
    this.driver = new LockWaitingDriver({ database: this.statements }, this.statements, this.sqlite, this.lockWaitMs, this.durable)
    return this.driver
  }

  override createQueryCompiler(): QueryCompiler {
    return new SqliteRunTimeLimitCompiler()
  }

  /** LockWaitingDriver.readNow of this dialect's driver (undefined before kysely has made it). */
  readNow(query: Pick<CompiledQuery, 'sql' | 'parameters'>): unknown[] | undefined {
    return this.driver?.readNow(query)
  }

  /** LockWaitingDriver.runInTransaction of this dialect's driver (undefined before kysely has made it). */
  runInTransaction(query: Pick<CompiledQuery, 'sql' | 'parameters'>): unknown[] | undefined {
    return this.driver?.runInTransaction(query)
  }
}

/** Where the driver's statements come from: better-sqlite3's, or a cache of them; `readonly` is SQLite's sqlite3_stmt_readonly. */
export interface StatementSource extends SqliteDatabase {
  prepare(sql: string): SqliteStatement & { readonly readonly: boolean }
}

/**
 * Kysely's SQLite compiler, with a LIMIT written `limit +?`. SQLite's planner reads a bare bound
 * LIMIT (`limit ?`), so every run that binds it makes SQLite prepare the statement again: a
 * webhook's due deliveries (SQLITE_DUE_OF) took 47.2 µs a run with `limit ?` and 11.0 µs with
 * `limit +?` (the same plan, the same rows). An expression is read when the statement runs.
 * OFFSET is not read by the planner (no difference measured).
 */
export class SqliteRunTimeLimitCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    this.append('limit +')
    this.visitNode(node.limit)
  }
}

/** A write group's first statement (SqliteWriteGroups): its commit shares the next sync, so it does not wait for the one in flight. */
export const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate')

/**
 * The BEGIN of a read transaction whose reads do not wait for the sync (planningRead): for reads
 * that only decide what to do next in the database, never act outside it on what they saw.
 */
export const BEGIN_PLANNING_READ = CompiledQuery.raw('begin')

/** The transactions that begin without waiting for the sync in flight, known by their BEGIN's identity. */
const NOT_WAITING_FOR_SYNC: ReadonlySet<CompiledQuery> = new Set([BEGIN_IMMEDIATE, BEGIN_PLANNING_READ])

/** The sync of what has been committed, while one is running (WalSync.pending): reads wait for it. */
export type DurableGate = () => Promise<void> | undefined

/** Kysely's SqliteDriver (one connection behind a mutex), handing out its connection wrapped in LockWaitingConnection. */
class LockWaitingDriver extends SqliteDriver {
  private connection: LockWaitingConnection | undefined
  /** The mutex is taken: a transaction, or a statement, is using the connection, or it is handed to the next in line. */
  private held = false

  constructor(
    config: SqliteDialectConfig,
    private readonly statements: StatementSource,
    private readonly sqlite: SQLite.Database,
    private readonly lockWaitMs: number,
    private readonly durable: DurableGate,
  ) {
    super(config)
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.lock()
    this.connection ??= new LockWaitingConnection(connection, this.sqlite, this.lockWaitMs, this.durable, {
      release: () => this.releaseConnection(),
      acquire: async () => {
        await this.lock()
      },
    })
    return this.connection
  }

  override async releaseConnection(): Promise<void> {
    this.held = false
    await super.releaseConnection()
  }

  private async lock(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection()
    this.held = true
    return connection
  }

  /**
   * A read-only statement run at once, on the event loop's current turn, when it could not have to
   * wait for anything: the connection is free (no statement or transaction of this process holds
   * it; one woken for it but not yet run takes it after this), no sync is in flight (DurableGate)
   * and no other process's lock refuses it. The same webhook read by id took 11.4 µs a run through
   * kysely's executor, this driver's mutex and LockWaitingConnection, and 9.4 µs here.
   * Undefined when the statement must go that way instead.
   */
  readNow(query: Pick<CompiledQuery, 'sql' | 'parameters'>): unknown[] | undefined {
    if (this.held || !this.sqlite.open || this.sqlite.inTransaction || this.durable() !== undefined) return undefined
    const statement = this.statements.prepare(query.sql)
    if (!statement.readonly) return undefined
    try {
      return statement.all(query.parameters)
    } catch (error) {
      // Refused by another process's lock: the way through the mutex waits for it.
      if (isSqliteBusy(error)) return undefined
      throw error
    }
  }

  /**
   * A statement run at once inside the write transaction that holds the connection (a write
   * group's, SqliteWriteGroups): that transaction holds SQLite's write lock, so no other process's
   * lock can refuse the statement, and nothing else of this process runs between the group's
   * statements. Through kysely's executor, this driver's mutex and LockWaitingConnection, a
   * DELETE's four statements in its group were a fifth of its server CPU. The rows, or none for a
   * statement that returns none; undefined when no transaction holds the connection.
   */
  runInTransaction(query: Pick<CompiledQuery, 'sql' | 'parameters'>): unknown[] | undefined {
    if (!this.held || !this.sqlite.inTransaction || this.connection === undefined) return undefined
    const statement = this.statements.prepare(query.sql)
    this.connection.touched()
    if (statement.reader) return statement.all(query.parameters)
    statement.run(query.parameters)
    return []
  }
}

/** Gives the one SQLite connection back to the driver's mutex while a statement waits, and takes it again. */
interface ConnectionHandover {
  release(): Promise<void>
  acquire(): Promise<void>
}

class LockWaitingConnection implements DatabaseConnection {
  /** The statement that opened the current transaction, while nothing else has run in it. */
  private transactionOpener: CompiledQuery | undefined

  constructor(
    private readonly inner: DatabaseConnection,
    private readonly sqlite: SQLite.Database,
    private readonly lockWaitMs: number,
    private readonly durable: DurableGate,
    private readonly handover: ConnectionHandover,
  ) {}

  /** A statement ran in the open transaction without this connection (runInTransaction): it is not untouched any more. */
  touched(): void {
    this.transactionOpener = undefined
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // A read outside a transaction (or a read transaction's BEGIN) waits, with the connection given
    // back, until what was committed is on disk: nothing is read that a power cut could still take
    // back. The BEGINs in NOT_WAITING_FOR_SYNC do not wait.
    const syncing = this.sqlite.inTransaction || NOT_WAITING_FOR_SYNC.has(query) ? undefined : this.durable()
    if (syncing !== undefined) {
      await this.handover.release()
      try {
        await syncing
      } finally {
        await this.handover.acquire()
      }
    }
    return this.execute<R>(query, Date.now() + this.lockWaitMs)
  }

  private async execute<R>(query: CompiledQuery, deadline: number): Promise<QueryResult<R>> {
    for (let pauseMs = FIRST_PAUSE_MS; ; pauseMs = Math.min(pauseMs * 2, LONGEST_PAUSE_MS)) {
      const inTransaction = this.sqlite.inTransaction
      const untouchedTransaction = this.transactionOpener
      this.transactionOpener = undefined
      try {
        const result = await this.inner.executeQuery<R>(query)
        if (!inTransaction && this.sqlite.inTransaction) this.transactionOpener = query
        return result
      } catch (error) {
        const retryable = !inTransaction || untouchedTransaction !== undefined
        if (!retryable || !isSqliteBusy(error) || Date.now() >= deadline) throw error
      }
      // Nothing is held now: the refused statement changed nothing, and an untouched transaction is
      // rolled back (it read nothing, so beginning it again later is the same as beginning it then).
      if (untouchedTransaction !== undefined && this.sqlite.inTransaction) await this.inner.executeQuery(ROLLBACK)
      await this.handover.release()
      try {
        await sleep(Math.max(0, Math.min(pauseMs, deadline - Date.now())))
      } finally {
        await this.handover.acquire()
      }
      if (untouchedTransaction !== undefined) await this.execute(untouchedTransaction, deadline)
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    // Not retried: rows may already have been handed out when a lock is met. No caller streams.
    return this.inner.streamQuery<R>(query, chunkSize)
  }
}
