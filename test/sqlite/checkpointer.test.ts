import { copyFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import SQLite from 'better-sqlite3'
import { sql } from 'kysely'
import { expect, it } from 'vitest'
import { CHECKPOINT_INTERVAL_MS, WAL_LIMIT_FRAMES, WalCheckpointer } from '../../src/db/sqlite/checkpointer.js'
import { openDatabase } from '../../src/modules/database.js'

// WalCheckpointer: SQLite's checkpoints on a worker thread, asked for after commits, at most every
// CHECKPOINT_INTERVAL_MS, and waited for by writes only while the WAL is past WAL_LIMIT_FRAMES.

function walDatabase(): { file: string; sqlite: SQLite.Database } {
  const file = join(mkdtempSync(join(tmpdir(), 'checkpointer-')), 'db.sqlite')
  const sqlite = new SQLite(file)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('wal_autocheckpoint = 0')
  sqlite.exec('create table t (id integer primary key, body text not null)')
  sqlite.pragma('wal_checkpoint(TRUNCATE)')
  return { file, sqlite }
}

/** The rows a copy of the database file alone holds: what has been checkpointed into it, not what is only in the WAL. */
function rowsInDatabaseFile(file: string): number {
  const copy = `${file}.copy`
  copyFileSync(file, copy)
  const reader = new SQLite(copy, { readonly: true })
  try {
    return (reader.prepare('select count(*) as n from t').get() as { n: number }).n
  } finally {
    reader.close()
  }
}

/** A worker stand-in: counts checkpoints, answers each when told to, with the WAL's frames as given. */
function fakeWorker() {
  const calls: { resolve: (result: { log: number; checkpointed: number }) => void; reject: (error: Error) => void }[] = []
  return {
    calls,
    checkpoint: () => new Promise<{ log: number; checkpointed: number }>((resolve, reject) => void calls.push({ resolve, reject })),
  }
}

/**
 * A checkpointer on a fake worker and clock whose first checkpoint, asked for by a commit, has
 * answered with `first`.
 */
async function afterFirstCheckpoint(first: { log: number; checkpointed: number }) {
  const worker = fakeWorker()
  const clock = { now: 0 }
  const checkpointer = new WalCheckpointer('unused', worker, () => clock.now)
  checkpointer.committed()
  worker.calls[0]?.resolve(first)
  await checkpointer.idle()
  return { worker, clock, checkpointer }
}

it('the worker copies committed pages from the WAL into the database file, off the event loop', async () => {
  const { file, sqlite } = walDatabase()
  const insert = sqlite.prepare('insert into t (body) values (?)')
  sqlite.transaction(() => {
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(500))
  })()
  // Without a checkpoint the rows are only in the WAL.
  expect(rowsInDatabaseFile(file)).toBe(0)
  const checkpointer = new WalCheckpointer(file)
  checkpointer.committed()
  await checkpointer.idle()
  expect(rowsInDatabaseFile(file)).toBe(200)
  sqlite.close()
})

it('a database opened by openDatabase leaves checkpoints to the worker: no checkpoint inside COMMIT', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'checkpointer-')), 'db.sqlite')
  const db = await openDatabase({ kind: 'sqlite', filename: file })
  const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)
  expect(rows[0]?.wal_autocheckpoint).toBe(0)
  await db.destroy()
})

it(`asks for at most one checkpoint at a time, and none within ${CHECKPOINT_INTERVAL_MS} ms of the last one's start`, async () => {
  const worker = fakeWorker()
  let now = 1_000
  const checkpointer = new WalCheckpointer('unused', worker, () => now)
  checkpointer.committed()
  checkpointer.committed()
  expect(worker.calls).toHaveLength(1)
  worker.calls[0]?.resolve({ log: 10, checkpointed: 10 })
  await checkpointer.idle()
  now += CHECKPOINT_INTERVAL_MS - 1
  checkpointer.committed()
  expect(worker.calls).toHaveLength(1)
  now += 1
  checkpointer.committed()
  expect(worker.calls).toHaveLength(2)
})

it('under the WAL limit, a write does not wait for checkpoints', async () => {
  const { worker, clock, checkpointer } = await afterFirstCheckpoint({ log: WAL_LIMIT_FRAMES - 1, checkpointed: 0 })
  clock.now += CHECKPOINT_INTERVAL_MS
  checkpointer.committed()
  // One runs, unanswered: the write goes ahead anyway.
  await checkpointer.beforeWrite()
  expect(worker.calls).toHaveLength(2)
})

it('past the WAL limit, a write waits for a checkpoint that began after the last commit and copied everything', async () => {
  const { worker, clock, checkpointer } = await afterFirstCheckpoint({ log: WAL_LIMIT_FRAMES, checkpointed: WAL_LIMIT_FRAMES })
  // A commit after that checkpoint: its frames are not copied yet.
  clock.now += 1
  checkpointer.committed()
  expect(worker.calls).toHaveLength(1)
  let through = false
  const write = checkpointer.beforeWrite().then(() => void (through = true))
  await Promise.resolve()
  expect(worker.calls).toHaveLength(2)
  await new Promise((resolve) => setTimeout(resolve, 10))
  expect(through).toBe(false)
  worker.calls[1]?.resolve({ log: WAL_LIMIT_FRAMES + 5, checkpointed: WAL_LIMIT_FRAMES + 5 })
  await write
  expect(through).toBe(true)
  // Caught up: the next write does not wait.
  await checkpointer.beforeWrite()
  expect(worker.calls).toHaveLength(2)
})

it('a failing checkpoint changes nothing: commits ask again, and a write past the limit waits for two tries at most', async () => {
  const { worker, clock, checkpointer } = await afterFirstCheckpoint({ log: WAL_LIMIT_FRAMES * 2, checkpointed: 0 })
  clock.now += CHECKPOINT_INTERVAL_MS
  checkpointer.committed()
  worker.calls[1]?.reject(new Error('SQLITE_FULL: database or disk is full'))
  await checkpointer.idle()
  const write = checkpointer.beforeWrite()
  await Promise.resolve()
  worker.calls[2]?.reject(new Error('SQLITE_FULL: database or disk is full'))
  await new Promise((resolve) => setTimeout(resolve, 0))
  worker.calls[3]?.reject(new Error('SQLITE_FULL: database or disk is full'))
  await write
  expect(worker.calls).toHaveLength(4)
})
