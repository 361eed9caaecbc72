import { type Compilable, CompiledQuery, type Insertable, type RawBuilder, sql } from 'kysely'
import { type Backend, backendOf, type Db } from './database.js'
import { queryOnce } from './postgres/open.js'
import { PIPELINE } from './postgres/statements.js'
import { readNow } from './sqlite/open.js'
import { runInWriteGroup } from './sqlite/write-groups.js'
import type { Database } from './schema.js'

/** A parameter value no caller passes: where a run's own value goes. */
const SLOT = '\u0000devplatform-slot:'

/** The statement compiled with slots, with each slot's value put in: the value of slot i is `valueAt(i)`. */
function bound<Row>(compiled: CompiledQuery<Row>, valueAt: (slot: number) => unknown): CompiledQuery<Row> {
  const parameters = compiled.parameters.map((parameter) =>
    typeof parameter === 'string' && parameter.startsWith(SLOT) ? valueAt(Number(parameter.slice(SLOT.length))) : parameter,
  )
  // Row only types what the statement returns: the raw query returns the same rows.
  return CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<Row>
}

/**
 * A statement of the hot paths whose SQL is built once per backend, each run binding its own
 * values where the builder was given slots. Kysely builds, freezes and compiles a query's tree on
 * every run: on an authenticated read that was more CPU than SQLite's own execution of the
 * statement (bench:api profile of GET /webhooks/{id}: kysely 30.6 % inclusive, of which SQLite
 * 18.5 %). The query is still written with the builder, so it stays typed and portable.
 *
 * A run binds strings or numbers (ids, keys, times, a limit) where the builder was given slots
 * (the builder sees each slot as a string); a value the builder is given directly (`is_active
 * = 1`) stays as compiled. The statement's shape must not depend on its values.
 *
 * A statement run on the database itself (not a transaction) skips kysely's executor: on SQLite a
 * read-only one runs at once while the connection is free (readNow), on PostgreSQL it goes to a
 * pooled connection of its own (queryOnce). On SQLite, one run in a write group's transaction
 * runs at once too (runInWriteGroup).
 */
export class PreparedQuery<Row> {
  private readonly compiled = new Map<Backend, SlottedStatement<Row>>()

  constructor(
    private readonly slots: number,
    private readonly build: (db: Db, ...slots: string[]) => Compilable<Row>,
  ) {}

  async execute(db: Db, ...values: (string | number)[]): Promise<Row[]> {
    const statement = this.statementOn(db)
    const parameters = statement.parameters(values)
    const query = { sql: statement.sql, parameters }
    return readNow<Row>(db, query) ?? runInWriteGroup<Row>(db, query) ?? (await (queryOnce<Row>(db, query) ?? db.executeQuery<Row>(CompiledQuery.raw(statement.sql, parameters) as CompiledQuery<Row>).then(({ rows }) => rows)))
  }

  /** The statement with its values, to hand to `pipelined`. */
  bind(db: Db, ...values: (string | number)[]): BoundQuery<Row> {
    const statement = this.statementOn(db)
    return { sql: statement.sql, parameters: statement.parameters(values) }
  }

  async executeTakeFirst(db: Db, ...values: (string | number)[]): Promise<Row | undefined> {
    return (await this.execute(db, ...values))[0]
  }

  /** SQLite: the rows at once, when the connection is free and nothing has to be waited for (readNow); undefined otherwise, and on PostgreSQL. */
  rowsAtOnce(db: Db, ...values: (string | number)[]): Row[] | undefined {
    const statement = this.statementOn(db)
    return readNow<Row>(db, { sql: statement.sql, parameters: statement.parameters(values) })
  }

  /** The statement as `db`'s backend runs it, with its slots as parameters. */
  compiledOn(db: Db): CompiledQuery<Row> {
    const statement = this.statementOn(db)
    return CompiledQuery.raw(statement.sql, [...statement.compiledParameters]) as CompiledQuery<Row>
  }

  private statementOn(db: Db): SlottedStatement<Row> {
    const backend = backendOf(db)
    let statement = this.compiled.get(backend)
    if (statement === undefined) {
      statement = new SlottedStatement<Row>(this.build(db, ...Array.from({ length: this.slots }, (_, i) => `${SLOT}${i}`)).compile(), this.slots)
      this.compiled.set(backend, statement)
    }
    return statement
  }
}

/** A compiled statement and, for each of its parameters, the slot whose value goes there (-1: the compiled value stays). */
class SlottedStatement<Row> {
  readonly sql: string
  readonly compiledParameters: readonly unknown[]
  private readonly slotOf: readonly number[]

  constructor(
    compiled: CompiledQuery<Row>,
    private readonly slots: number,
  ) {
    this.sql = compiled.sql
    this.compiledParameters = compiled.parameters
    this.slotOf = compiled.parameters.map((parameter) => (typeof parameter === 'string' && parameter.startsWith(SLOT) ? Number(parameter.slice(SLOT.length)) : -1))
  }

  /** The parameters of one run: `values[i]` where the builder was given slot i. */
  parameters(values: readonly (string | number)[]): unknown[] {
    if (values.length !== this.slots) throw new Error(`prepared query: ${this.slots} values expected, ${values.length} given`)
    const parameters = new Array<unknown>(this.slotOf.length)
    for (let i = 0; i < parameters.length; i++) {
      const slot = this.slotOf[i] ?? -1
      parameters[i] = slot === -1 ? this.compiledParameters[i] : values[slot]
    }
    return parameters
  }
}

/** A slot the builder uses where a number is expected (a count, a limit): each run binds its number there. */
export function numberSlot(slot: string): RawBuilder<number> {
  return sql<number>`${slot}`
}

/** A value bound to a prepared insert's column. */
type ColumnValue = string | number | null

/**
 * `insert into <table> (<columns>) values (...)` for one row, built once per backend and column
 * list (rows of one call site always name the same columns, in the same order), each run binding
 * the row's values. Kysely's insert builder parses every row object anew: 3.5 % of a write's CPU
 * went to building the outbox's one-row delivery insert alone (bench:api profile of POST
 * liquidation address).
 */
export class PreparedInsert<Table extends keyof Database> {
  private readonly compiled = new Map<string, CompiledQuery>()

  constructor(private readonly table: Table) {}

  async execute(db: Db, row: Insertable<Database[Table]> & Record<string, ColumnValue>): Promise<void> {
    const query = this.bind(db, row)
    if (runInWriteGroup(db, query) === undefined) await db.executeQuery(query)
  }

  /** The insert of `row`, to hand to `pipelined`. */
  bind(db: Db, row: Insertable<Database[Table]> & Record<string, ColumnValue>): CompiledQuery<never> {
    const columns = Object.keys(row)
    const key = `${backendOf(db)} ${columns.join(',')}`
    let compiled = this.compiled.get(key)
    if (compiled === undefined) {
      const slots: Record<string, string> = {}
      for (const [i, column] of columns.entries()) slots[column] = `${SLOT}${i}`
      // The slots stand in for the row's own values, column for column; only the SQL text is kept.
      compiled = db
        .insertInto(this.table)
        .values(slots as unknown as Insertable<Database[Table]>)
        .compile()
      this.compiled.set(key, compiled)
    }
    return bound(compiled, (slot) => row[columns[slot] ?? ''])
  }
}

/** A statement with its values, for `pipelined`; `Row` types its rows. */
export interface BoundQuery<Row> {
  readonly sql: string
  readonly parameters: readonly unknown[]
  /** never set: keeps `Row` */
  readonly rowType?: Row
}

type RowsOf<Queries extends readonly BoundQuery<unknown>[]> = { [K in keyof Queries]: Queries[K] extends BoundQuery<infer Row> ? Row[] : never }

/** What one statement of `pipelinedOutcomes` answered: its rows, or why it failed. */
export type Outcome<Row> = { ok: true; rows: Row[] } | { ok: false; error: unknown }

type OutcomesOf<Queries extends readonly BoundQuery<unknown>[]> = { [K in keyof Queries]: Queries[K] extends BoundQuery<infer Row> ? Outcome<Row> : never }

/**
 * Statements whose values do not depend on one another's rows, run in order in `db` (a
 * transaction, usually), each answering its rows or its failure, for a caller that decides which
 * failure counts (a lookup's answer before an insert's conflict). On PostgreSQL they are written
 * at once, behind the transaction's waiting BEGIN if it has not run yet: one round trip for them
 * all; in a transaction, the ones after a failure fail too (PostgreSQL aborts the transaction).
 * On SQLite they run one after the other, and none runs after a failure.
 */
export async function pipelinedOutcomes<Queries extends readonly BoundQuery<unknown>[]>(db: Db, ...queries: Queries): Promise<OutcomesOf<Queries>> {
  if (backendOf(db) === 'postgres') {
    const { rows } = await db.executeQuery<Outcome<unknown>>(CompiledQuery.raw(PIPELINE, queries.map(({ sql, parameters }) => ({ sql, parameters }))))
    return rows as OutcomesOf<Queries>
  }
  const outcomes: Outcome<unknown>[] = []
  let failed = false
  for (const query of queries) {
    if (failed) {
      outcomes.push({ ok: false, error: new Error('not run: a statement before it in the pipeline failed') })
      continue
    }
    try {
      outcomes.push({ ok: true, rows: runInWriteGroup<unknown>(db, query) ?? (await db.executeQuery<unknown>(CompiledQuery.raw(query.sql, [...query.parameters]))).rows })
    } catch (error) {
      failed = true
      outcomes.push({ ok: false, error })
    }
  }
  return outcomes as OutcomesOf<Queries>
}

/**
 * `pipelinedOutcomes`, when any failure is the caller's failure: each statement's rows, or the
 * first failure thrown.
 */
export async function pipelined<Queries extends readonly BoundQuery<unknown>[]>(db: Db, ...queries: Queries): Promise<RowsOf<Queries>> {
  const outcomes: readonly Outcome<unknown>[] = await pipelinedOutcomes(db, ...queries)
  const rows: unknown[][] = []
  for (const outcome of outcomes) {
    if (!outcome.ok) throw outcome.error
    rows.push(outcome.rows)
  }
  return rows as RowsOf<Queries>
}
