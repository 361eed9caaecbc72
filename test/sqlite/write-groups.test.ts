import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { CompiledQuery, Kysely } from 'kysely'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { planningRead } from '../../src/db/database.js'
import type { Database } from '../../src/db/schema.js'
import { LockWaitingSqliteDialect } from '../../src/db/sqlite/lock-wait.js'
import { WalSync } from '../../src/db/sqlite/wal-sync.js'
import { MAX_GROUP, runInWriteGroup, SqliteWriteGroups } from '../../src/db/sqlite/write-groups.js'

// SqliteWriteGroups on a real SQLite file, with a WAL sync whose calls are counted (one per
// group) and can be held or failed.

let sqlite: SQLite.Database
let db: Kysely<Database>
let dialect: LockWaitingSqliteDialect
let syncs: number
let heldSync: { release: () => void; fail: (error: Error) => void } | undefined
let hold: boolean
/** the groups' WAL sync: reads wait for it, as openDatabase's connection makes them */
let wal: WalSync | undefined

function groups(): SqliteWriteGroups {
  wal = new WalSync(
    'unused',
    () =>
      new Promise<void>((resolve, reject) => {
        syncs++
        if (!hold) return resolve()
        heldSync = { release: resolve, fail: reject }
      }),
  )
  return new SqliteWriteGroups(db, () => sqlite.inTransaction, wal, checkpoints, (query) => dialect.runInTransaction(query))
}

/** the groups' checkpointer: records when it was asked, and can hold a group before its BEGIN */
let checkpoints: { beforeWrite: () => Promise<void>; committed: () => void }
let checkpointLog: string[]

beforeEach(() => {
  sqlite = new SQLite(join(mkdtempSync(join(tmpdir(), 'write-groups-')), 'db.sqlite'))
  sqlite.pragma('journal_mode = WAL')
  sqlite.exec('create table apps (id text primary key, name text not null, created_at text not null)')
  dialect = new LockWaitingSqliteDialect(sqlite, sqlite, 1000, () => wal?.pending())
  db = new Kysely<Database>({ dialect })
  checkpointLog = []
  checkpoints = {
    beforeWrite: async () => void checkpointLog.push('before write'),
    committed: () => void checkpointLog.push('committed'),
  }
  syncs = 0
  heldSync = undefined
  hold = false
})
afterEach(async () => {
  await db.destroy()
})

const insert = (tx: Kysely<Database>, id: string) => tx.insertInto('apps').values({ id, name: id, created_at: '2026-01-01T00:00:00.000Z' }).execute()
const stored = async () => (await db.selectFrom('apps').select('id').orderBy('id').execute()).map((row) => row.id)

it('write transactions waiting together commit as one group: one sync for all of them', async () => {
  const writes = groups()
  const ids = Array.from({ length: 10 }, (_, i) => `a${i}`)
  expect(await Promise.all(ids.map((id) => writes.run(async (tx) => (await insert(tx, id), id))))).toEqual(ids)
  expect(syncs).toBe(1)
  expect(await stored()).toEqual(ids)
})

it(`at most ${MAX_GROUP} in a group: one more makes a second group`, async () => {
  const writes = groups()
  await Promise.all(Array.from({ length: MAX_GROUP }, (_, i) => writes.run((tx) => insert(tx, `b${String(i).padStart(3, '0')}`))))
  expect(syncs).toBe(1)
  await Promise.all(Array.from({ length: MAX_GROUP + 1 }, (_, i) => writes.run((tx) => insert(tx, `c${String(i).padStart(3, '0')}`))))
  expect(syncs).toBe(3)
  expect(await stored()).toHaveLength(2 * MAX_GROUP + 1)
})

it('a transaction whose work fails is undone alone, fails with its own error, and the rest commit', async () => {
  const writes = groups()
  const refused = new Error('refused')
  const results = await Promise.allSettled([
    writes.run((tx) => insert(tx, 'first')),
    writes.run(async (tx) => {
      await insert(tx, 'failing')
      throw refused
    }),
    writes.run((tx) => insert(tx, 'third')),
  ])
  expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  expect(results[1]).toEqual({ status: 'rejected', reason: refused })
  expect(await stored()).toEqual(['first', 'third'])
  expect(syncs).toBe(1)
})

it('a statement run at once in a member (runInWriteGroup) is part of its savepoint: undone with a failing member alone; after the group, its transaction runs nothing at once', async () => {
  const writes = groups()
  const insertNow = (tx: Kysely<Database>, id: string) =>
    runInWriteGroup(tx, { sql: 'insert into apps (id, name, created_at) values (?, ?, ?) returning id', parameters: [id, id, '2026-01-01T00:00:00.000Z'] })
  let kept: Kysely<Database> | undefined
  const results = await Promise.allSettled([
    writes.run(async (tx) => {
      kept = tx
      return insertNow(tx, 'first')
    }),
    writes.run(async (tx) => {
      insertNow(tx, 'failing')
      throw new Error('refused')
    }),
    writes.run(async (tx) => insertNow(tx, 'third')),
  ])
  expect(results).toEqual([
    { status: 'fulfilled', value: [{ id: 'first' }] },
    { status: 'rejected', reason: new Error('refused') },
    { status: 'fulfilled', value: [{ id: 'third' }] },
  ])
  expect(await stored()).toEqual(['first', 'third'])
  expect(syncs).toBe(1)
  // A later group's transaction holds the connection while this member's kept transaction is used.
  const held = writes.run(async () => {
    expect(insertNow(kept as Kysely<Database>, 'stale')).toBeUndefined()
  })
  await held
  expect(await stored()).toEqual(['first', 'third'])
})

it('when SQLite ends the whole transaction under a member, every member before it fails too (nothing of theirs committed); those after it commit in a new group', async () => {
  const writes = groups()
  const results = await Promise.allSettled([
    writes.run((tx) => insert(tx, 'before')),
    writes.run(async (tx) => {
      await insert(tx, 'ender')
      // what SQLite does by itself after SQLITE_FULL or an I/O error
      await tx.executeQuery(CompiledQuery.raw('rollback'))
      throw new Error('disk full')
    }),
    writes.run((tx) => insert(tx, 'after')),
  ])
  expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'fulfilled'])
  expect(results[0]).toMatchObject({ status: 'rejected', reason: { message: 'disk full' } })
  expect(await stored()).toEqual(['after'])
})

it('answers only once the group’s commit is on disk, and no read sees it before; a failed sync fails every member of the group', async () => {
  hold = true
  const writes = groups()
  let answered = 0
  const both = Promise.allSettled([writes.run((tx) => insert(tx, 'x')).then(() => answered++), writes.run((tx) => insert(tx, 'y')).then(() => answered++)])
  await expect.poll(() => heldSync !== undefined).toBe(true)
  // committed, not yet on disk: nobody is answered, and a read waits for the sync
  let read: string[] | undefined
  const reading = stored().then((ids) => (read = ids))
  await new Promise((resolve) => setTimeout(resolve, 20))
  expect(answered).toBe(0)
  expect(read).toBeUndefined()
  heldSync?.fail(Object.assign(new Error('EIO'), { code: 'EIO' }))
  const results = await both
  expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected'])
  expect(results[0]).toMatchObject({ reason: { code: 'SQLITE_IOERR_FSYNC' } })
  await reading
})

it('a write group does not wait for the sync before it: it begins at once and shares the next one', async () => {
  hold = true
  const writes = groups()
  const first = writes.run((tx) => insert(tx, 'first'))
  await expect.poll(() => heldSync !== undefined).toBe(true)
  const releaseFirst = heldSync
  heldSync = undefined
  let secondCommitted = false
  const second = writes.run(async (tx) => {
    await insert(tx, 'second')
    secondCommitted = true
  })
  // the first sync is still held, yet the second group ran
  await expect.poll(() => secondCommitted).toBe(true)
  releaseFirst?.release()
  await first
  const held = (): { release: () => void } | undefined => heldSync
  await expect.poll(() => held() !== undefined).toBe(true)
  held()?.release()
  await second
  expect(await stored()).toEqual(['first', 'second'])
})

it('a transaction that must be alone gets a group of its own: the writes before and after it commit in groups of their own', async () => {
  const writes = groups()
  const seen: string[][] = []
  await Promise.all([
    writes.run((tx) => insert(tx, 'before')),
    writes.run(async (tx) => {
      seen.push((await tx.selectFrom('apps').select('id').execute()).map((row) => row.id))
    }, true),
    writes.run((tx) => insert(tx, 'after')),
  ])
  expect(syncs).toBe(3)
  expect(seen).toEqual([['before']])
})

it('a read waits for the group to commit: it never sees a member’s uncommitted row', async () => {
  const writes = groups()
  let release: () => void = () => undefined
  const gate = new Promise<void>((resolve) => (release = resolve))
  const write = writes.run(async (tx) => {
    await insert(tx, 'pending')
    await gate
  })
  await new Promise((resolve) => setTimeout(resolve, 20))
  const read = stored()
  let readDone = false
  void read.then(() => (readDone = true))
  await new Promise((resolve) => setTimeout(resolve, 20))
  expect(readDone).toBe(false)
  release()
  await write
  expect(await read).toEqual(['pending'])
})

it('each group asks for a checkpoint after its commit, and waits for the checkpointer before it begins', async () => {
  let release: () => void = () => undefined
  checkpoints.beforeWrite = () => {
    checkpointLog.push('before write')
    return new Promise<void>((resolve) => (release = resolve))
  }
  const writes = groups()
  const done = writes.run((tx) => insert(tx, 'held'))
  await new Promise((resolve) => setTimeout(resolve, 20))
  // Held before its BEGIN: nothing written, no commit asked about.
  expect(sqlite.inTransaction).toBe(false)
  expect(checkpointLog).toEqual(['before write'])
  release()
  await done
  expect(checkpointLog).toEqual(['before write', 'committed'])
  expect(await stored()).toEqual(['held'])
})

it('a planning read does not wait for the sync in flight: it sees the committed row at once, while a plain read waits', async () => {
  hold = true
  const writes = groups()
  const written = writes.run((tx) => insert(tx, 'planned'))
  await expect.poll(() => heldSync !== undefined).toBe(true)
  let plainRead: string[] | undefined
  const plain = stored().then((ids) => (plainRead = ids))
  const planned = await planningRead(db, async (tx) => (await tx.selectFrom('apps').select('id').execute()).map((row) => row.id))
  expect(planned).toEqual(['planned'])
  expect(plainRead).toBeUndefined()
  hold = false
  heldSync?.release()
  await written
  await plain
  expect(plainRead).toEqual(['planned'])
  // The planning read's transaction ended: the connection is free for the next write.
  await writes.run((tx) => insert(tx, 'after'))
  expect(await stored()).toEqual(['after', 'planned'])
})
