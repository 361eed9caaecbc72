import SQLite from 'better-sqlite3'
import { CompiledQuery, Kysely, sql } from 'kysely'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Db } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { readNow } from '../../src/db/sqlite/open.js'
import { PreparedQuery } from '../../src/db/prepared.js'
import type { Database } from '../../src/db/schema.js'
import { LockWaitingSqliteDialect } from '../../src/db/sqlite/lock-wait.js'
import { newSqliteFile } from './temp-file.js'

// readNow: a read-only statement of the SQLite database itself runs at once only when it could not
// have had to wait for anything; otherwise it is left to kysely's way, which waits its turn.

let file: string
let db: Db
beforeEach(async () => {
  file = newSqliteFile('read-now-')
  db = await openDatabase({ kind: 'sqlite', filename: file }, { sqliteLockWaitMs: 2_000 })
})
afterEach(async () => {
  await db.destroy()
})

const NAMES = CompiledQuery.raw('select name from apps order by name')
const APP_NAMES = new PreparedQuery<{ name: string }>(0, (tx) => tx.selectFrom('apps').select('name').orderBy('name'))
const addApp = (tx: Db, name: string) => tx.insertInto('apps').values({ id: name, name, created_at: '2026-01-01T00:00:00.000Z' }).execute()
const names = (rows: { name: string }[] | undefined) => rows?.map((row) => row.name)

describe('readNow on a SQLite database', () => {
  it('runs a read-only statement when the connection is free, with the rows kysely would give', async () => {
    await addApp(db, 'a')
    expect(readNow(db, NAMES)).toEqual((await db.executeQuery(NAMES)).rows)
    expect(readNow(db, NAMES)).toEqual([{ name: 'a' }])
  })

  it('leaves a writing statement to kysely, even one that returns rows, and it changes nothing', async () => {
    await addApp(db, 'a')
    expect(readNow(db, CompiledQuery.raw("update apps set name = 'changed' returning name"))).toBeUndefined()
    expect(readNow(db, NAMES)).toEqual([{ name: 'a' }])
  })

  it('leaves the statement to kysely while a transaction holds the connection; a read of it waits for the commit', async () => {
    let insideTransaction: unknown = 'not run'
    let readDuringTransaction: Promise<{ name: string }[]> | undefined
    await db.transaction().execute(async (tx) => {
      await addApp(tx, 'uncommitted')
      insideTransaction = readNow(db, NAMES)
      readDuringTransaction = APP_NAMES.execute(db)
      await new Promise((resolve) => setTimeout(resolve, 20))
    })
    expect(insideTransaction).toBeUndefined()
    // Not run inside the other flow's transaction: it read after its commit.
    expect(names(await readDuringTransaction)).toEqual(['uncommitted'])
  })

  it('leaves the statement to kysely while the connection is held outside a transaction', async () => {
    let whileHeld: unknown = 'not run'
    await db.connection().execute(async () => {
      whileHeld = readNow(db, NAMES)
    })
    expect(whileHeld).toBeUndefined()
    expect(readNow(db, NAMES)).toEqual([])
  })

  it('leaves a read refused by another connection’s lock to kysely, which waits for the lock and then answers', async () => {
    await addApp(db, 'before')
    // In WAL mode readers meet a lock only briefly; in rollback-journal mode an EXCLUSIVE
    // transaction holds them off for as long as it lasts (as in write-lock.test.ts).
    await sql`pragma journal_mode = delete`.execute(db)
    const other = new SQLite(file, { timeout: 0 })
    other.exec("begin exclusive; insert into apps (id, name, created_at) values ('other', 'other', '2026-01-01T00:00:00.000Z')")
    try {
      expect(readNow(db, NAMES)).toBeUndefined()
      const waiting = APP_NAMES.execute(db)
      let answered = false
      void waiting.then(() => (answered = true))
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(answered).toBe(false)
      other.exec('commit')
      expect(names(await waiting)).toEqual(['before', 'other'])
    } finally {
      other.close()
    }
  })

  it('leaves a transaction’s own statements to kysely', async () => {
    await db.transaction().execute(async (tx) => {
      expect(readNow(tx, NAMES)).toBeUndefined()
    })
  })

  it('leaves the statement to kysely once the database is closed', async () => {
    const closed = await openDatabase({ kind: 'sqlite', filename: newSqliteFile('read-now-') })
    await closed.destroy()
    expect(readNow(closed, NAMES)).toBeUndefined()
  })
})

describe("LockWaitingSqliteDialect.readNow and the WAL sync's gate", () => {
  it('leaves the statement to kysely while a sync is in flight, and runs it once the sync has ended', async () => {
    const sqlite = new SQLite(newSqliteFile('read-now-'))
    sqlite.pragma('journal_mode = WAL')
    sqlite.exec("create table apps (id text primary key, name text not null, created_at text not null); insert into apps values ('a', 'a', 'x')")
    let inFlight: Promise<void> | undefined
    const dialect = new LockWaitingSqliteDialect(sqlite, sqlite, 1000, () => inFlight)
    const gated = new Kysely<Database>({ dialect })
    try {
      await gated.selectFrom('apps').select('id').execute() // kysely makes the driver on first use
      inFlight = new Promise<void>(() => undefined)
      expect(dialect.readNow(NAMES)).toBeUndefined()
      inFlight = undefined
      expect(dialect.readNow(NAMES)).toEqual([{ name: 'a' }])
    } finally {
      await gated.destroy()
    }
  })
})
