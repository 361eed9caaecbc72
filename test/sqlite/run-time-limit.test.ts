import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { SQLITE_DUE_OF } from '../../src/events/deliveries-repository.js'

// SQLite's planner reads a bare bound LIMIT (`limit ?`), so binding it makes SQLite prepare the
// statement again on every run; `limit +?` is read when the statement runs
// (SqliteRunTimeLimitCompiler). The SQL is the behaviour here: the rows must stay the same.

let db: Db
beforeEach(async () => {
  db = await openDatabase({ kind: 'sqlite', filename: join(mkdtempSync(join(tmpdir(), 'run-time-limit-')), 'db.sqlite') })
  await sql`create table t (id integer primary key)`.execute(db)
  await sql`insert into t (id) values (1), (2), (3), (4)`.execute(db)
})
afterEach(async () => {
  await db.destroy()
})

describe('a bound LIMIT on SQLite', () => {
  it('is written as an expression by the query builder; OFFSET stays a bare parameter', () => {
    const compiled = db.selectFrom('apps').select('id').limit(2).offset(1).compile()
    expect(compiled.sql).toMatch(/ limit \+\? offset \?$/)
    expect(compiled.parameters).toEqual([2, 1])
  })

  it('gives the rows a bare LIMIT gives, at each edge: 0, 1, all, more than all, and with an offset', async () => {
    const ids = async (limit: number, offset = 0) => (await db.selectFrom('t' as never).select(sql<number>`id`.as('id')).orderBy(sql`id`).limit(limit).offset(offset).execute()).map((row) => row.id)
    expect(await ids(0)).toEqual([])
    expect(await ids(1)).toEqual([1])
    expect(await ids(3)).toEqual([1, 2, 3])
    expect(await ids(4)).toEqual([1, 2, 3, 4])
    expect(await ids(5)).toEqual([1, 2, 3, 4])
    expect(await ids(2, 3)).toEqual([4])
    // One statement, run with one limit after another: each run reads its own.
    expect(await ids(2)).toEqual([1, 2])
  })

  it('is an expression in the hand-written statements that take one (a webhook’s due deliveries)', () => {
    expect(SQLITE_DUE_OF.compiledOn(db).sql).toMatch(/limit \+\?\s*$/)
  })
})
