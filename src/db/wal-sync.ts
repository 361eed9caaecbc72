import { open } from 'node:fs/promises'

/**
 * SQLite durability without stopping the event loop: the database runs with
 * `synchronous = NORMAL` (a commit is written to the WAL file but not synced), and a write
 * transaction returns only after this has synced the WAL file (`fdatasync`, on libuv's thread
 * pool). `synchronous = FULL` would sync inside COMMIT, on the event loop (better-sqlite3 is
 * synchronous), holding every request for each sync. One sync covers every commit written before
 * it started, so concurrent commits share one (group commit): a commit that arrives while a sync
 * runs waits for the next, which starts as soon as that one ends, together with every other
 * commit that arrived meanwhile. SQLite itself still syncs the WAL before each checkpoint.
 */
export class WalSync {
  private running: Promise<void> | undefined
  private queued: Promise<void> | undefined

  /** `walPath`: the database file's name + `-wal`; `datasync` is replaceable for tests */
  constructor(
    private readonly walPath: string,
    private readonly datasync: (path: string) => Promise<void> = datasyncFile,
  ) {}

  /** Settles once everything committed before the call is on disk; a failed sync rejects (SQLITE_IOERR_FSYNC). */
  sync(): Promise<void> {
    if (this.running === undefined) {
      const running = this.flush().finally(() => {
        if (this.running === running) this.running = undefined
      })
      this.running = running
      return running
    }
    // The running sync may have started before this commit was written: wait for the next.
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined
        return this.sync()
      })
    return this.queued
  }

  private async flush(): Promise<void> {
    try {
      await this.datasync(this.walPath)
    } catch (error) {
      throw Object.assign(new Error(`could not sync ${this.walPath}: ${error instanceof Error ? error.message : String(error)}`), {
        code: 'SQLITE_IOERR_FSYNC',
        cause: error,
      })
    }
  }
}

/**
 * Opened for each sync rather than kept: nothing to close when the database is, and the WAL file
 * (there from the first commit on, while the database is open) is never a stale one.
 */
async function datasyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r')
  try {
    await handle.datasync()
  } finally {
    await handle.close()
  }
}
