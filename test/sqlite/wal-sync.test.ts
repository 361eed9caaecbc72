import { mkdtempSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { parseDatabaseUrl } from '../../src/config.js'
import { writeTransaction } from '../../src/db/database.js'
import { openDatabase } from '../../src/modules/database.js'
import { isStorageFault } from '../../src/db/errors.js'
import { AppsRepository } from '../../src/apps/repository.js'
import { WalSync } from '../../src/db/sqlite/wal-sync.js'

/** A datasync that records each call and ends when told. */
function heldDatasync() {
  const calls: { end: (error?: Error) => void }[] = []
  const datasync = () =>
    new Promise<void>((resolve, reject) => {
      calls.push({ end: (error) => (error === undefined ? resolve() : reject(error)) })
    })
  return { datasync, calls }
}
const tick = () => new Promise((resolve) => setImmediate(resolve))

it('a commit with no sync running starts one at once and settles when it ends', async () => {
  const held = heldDatasync()
  const wal = new WalSync('x-wal', held.datasync)
  let done = false
  const synced = wal.sync().then(() => void (done = true))
  await tick()
  expect(held.calls).toHaveLength(1)
  expect(done).toBe(false)
  held.calls[0]?.end()
  await synced
  expect(done).toBe(true)
})

it('commits arriving while a sync runs all wait for one next sync, started when that one ends (group commit)', async () => {
  const held = heldDatasync()
  const wal = new WalSync('x-wal', held.datasync)
  const first = wal.sync()
  await tick()
  const settled: number[] = []
  const later = [1, 2, 3].map((n) => wal.sync().then(() => void settled.push(n)))
  await tick()
  expect(held.calls).toHaveLength(1) // not before the running one ends: it may have started before their commits
  held.calls[0]?.end()
  await first
  await tick()
  expect(settled).toEqual([]) // the first sync does not count for them
  expect(held.calls).toHaveLength(2)
  held.calls[1]?.end()
  await Promise.all(later)
  expect(settled.sort()).toEqual([1, 2, 3])
  expect(held.calls).toHaveLength(2)
})

it('a failed sync rejects its waiters as a storage fault (503), and the next commit syncs again', async () => {
  const held = heldDatasync()
  const wal = new WalSync('x-wal', held.datasync)
  const failed = wal.sync()
  await tick()
  held.calls[0]?.end(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }))
  const error = await failed.catch((caught: unknown) => caught)
  expect(error).toMatchObject({ code: 'SQLITE_IOERR_FSYNC' })
  expect(isStorageFault(error)).toBe(true)
  const next = wal.sync()
  await tick()
  expect(held.calls).toHaveLength(2)
  held.calls[1]?.end()
  await expect(next).resolves.toBeUndefined()
})

it('syncs a real file, and a missing one is a storage fault', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wal-sync-'))
  writeFileSync(join(dir, 'db-wal'), 'frames')
  await expect(new WalSync(join(dir, 'db-wal')).sync()).resolves.toBeUndefined()
  const missing = await new WalSync(join(dir, 'missing-wal')).sync().catch((caught: unknown) => caught)
  expect(isStorageFault(missing)).toBe(true)
})

it('a write transaction returns only after syncing the WAL by its path: with the WAL file moved away it fails as a storage fault', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wal-sync-db-'))
  const filename = join(dir, 'db.sqlite')
  const db = await openDatabase(parseDatabaseUrl(`sqlite:${filename}`))
  try {
    await writeTransaction(db, (tx) => new AppsRepository(tx).createApp('first'))
    // SQLite keeps writing through its open descriptor; the sync opens the path, which is gone.
    renameSync(`${filename}-wal`, join(dir, 'moved-wal'))
    const error = await writeTransaction(db, (tx) => new AppsRepository(tx).createApp('second')).catch((caught: unknown) => caught)
    expect(error).toMatchObject({ code: 'SQLITE_IOERR_FSYNC' })
    expect(isStorageFault(error)).toBe(true)
  } finally {
    await db.destroy()
  }
})
