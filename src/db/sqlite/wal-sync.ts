import { type FileHandle, open, stat } from 'node:fs/promises'

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

  private readonly file = new KeptOpenWal()

  /** `walPath`: the database file's name + `-wal`; `datasync` is replaceable for tests */
  constructor(
    private readonly walPath: string,
    private readonly datasync: (path: string) => Promise<void> = (path) => this.file.datasync(path),
  ) {}

  /** Closes the descriptor kept open for syncing (the database is closing). */
  async close(): Promise<void> {
    await this.file.close()
  }

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

  /** Settles once every sync asked for so far has ended (never rejects): what reads wait for. */
  pending(): Promise<void> | undefined {
    const last = this.queued ?? this.running
    return last?.catch(() => undefined)
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
 * The WAL file, kept open for syncing: one thread-pool round trip per sync (fdatasync, with a stat
 * of the path beside it) instead of three (open, fdatasync, close). The stat checks that the path
 * still names the file synced: a WAL moved or deleted under SQLite fails the sync, as it would
 * by path, and the next sync opens the path again.
 */
class KeptOpenWal {
  private handle: Promise<{ file: FileHandle; dev: number; ino: number }> | undefined

  async datasync(path: string): Promise<void> {
    this.handle ??= open(path, 'r').then(async (file) => {
      const info = await file.stat()
      return { file, dev: info.dev, ino: info.ino }
    })
    const opening = this.handle
    try {
      const { file, dev, ino } = await opening
      const [named] = await Promise.all([stat(path), file.datasync()])
      if (named.dev !== dev || named.ino !== ino) throw new Error(`${path} is no longer the file that was synced`)
    } catch (error) {
      if (this.handle === opening) this.handle = undefined
      await opening.then(({ file }) => file.close()).catch(() => undefined)
      throw error
    }
  }

  async close(): Promise<void> {
    const opening = this.handle
    this.handle = undefined
    await opening?.then(({ file }) => file.close()).catch(() => undefined)
  }
}
