import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'

// The SQLite connection reads rows as arrays and makes them objects with column names read once
// per statement (rowsFromArrays in database.ts): the rows must be exactly what better-sqlite3's
// own object rows are.

let file: string
let db: Db
beforeEach(async () => {
  file = join(mkdtempSync(join(tmpdir(), 'statement-rows-')), 'db.sqlite')
  db = await openDatabase({ kind: 'sqlite', filename: file })
  await sql`create table t (id integer primary key, label text, amount real, data blob, missing text)`.execute(db)
  await sql`insert into t (label, amount, data) values ('a', 1.5, x'00ff'), ('b', -2, null)`.execute(db)
})
afterEach(async () => {
  await db.destroy()
})

it('rows are the objects better-sqlite3 makes itself: every type, null, column order', async () => {
  const ours = (await sql`select * from t order by id`.execute(db)).rows
  const reference = new SQLite(file, { readonly: true })
  const theirs = reference.prepare('select * from t order by id').all()
  reference.close()
  expect(ours).toEqual(theirs)
  expect(Object.keys(ours[0] as object)).toEqual(['id', 'label', 'amount', 'data', 'missing'])
})

it('two columns of one name: the later one wins, as in better-sqlite3', async () => {
  expect((await sql`select 1 as a, 2 as a`.execute(db)).rows).toEqual([{ a: 2 }])
})

it('a statement prepared before a column was added gives the new column too (SQLite prepares it again)', async () => {
  const read = () => sql`select * from t where id = 1`.execute(db)
  expect(Object.keys((await read()).rows[0] as object)).toEqual(['id', 'label', 'amount', 'data', 'missing'])
  await sql`alter table t add column added text default 'new'`.execute(db)
  expect((await read()).rows[0]).toMatchObject({ id: 1, added: 'new' })
})

it('writes still report their changes, and a write with RETURNING gives its rows', async () => {
  const updated = await db.executeQuery(sql`update t set label = 'c' where id = 2`.compile(db))
  expect(updated.numAffectedRows).toBe(1n)
  const returned = await db.executeQuery(sql`insert into t (label) values ('d') returning id, label`.compile(db))
  expect(returned.rows).toEqual([{ id: 3, label: 'd' }])
})
