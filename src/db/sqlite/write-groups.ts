import { CompiledQuery } from 'kysely'
import { COMMIT, type Db, onOneConnection } from '../transaction.js'
import type { WalCheckpointer } from './checkpointer.js'
import { BEGIN_IMMEDIATE } from './lock-wait.js'
import type { WalSync } from './wal-sync.js'

/** A statement run at once in the write transaction holding the connection (LockWaitingDriver.runInTransaction). */
export type RunInTransaction = (query: Pick<CompiledQuery, 'sql' | 'parameters'>) => unknown[] | undefined

/** The transactions of running groups, and how their statements run at once. */
const groupTransactions = new WeakMap<Db, RunInTransaction>()

/**
 * The rows of a statement run at once in `tx`, when `tx` is a running write group's transaction
 * (its work holds the connection and SQLite's write lock); undefined otherwise: then it goes
 * through kysely.
 */
export function runInWriteGroup<Row>(tx: Db, query: Pick<CompiledQuery, 'sql' | 'parameters'>): Row[] | undefined {
  return groupTransactions.get(tx)?.(query) as Row[] | undefined
}

/** Most write transactions committed together: a group holds the one connection, so reads wait for it. */
export const MAX_GROUP = 64

const SAVEPOINT = CompiledQuery.raw('savepoint member')
const RELEASE = CompiledQuery.raw('release member')
const ROLLBACK_MEMBER = CompiledQuery.raw('rollback to member')

interface Member {
  work: (tx: Db) => Promise<unknown>
  /** in a group of its own (WriteTransactionOptions.alone) */
  alone: boolean
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/**
 * Group commit for SQLite's write transactions. The write transactions waiting when the
 * connection comes free run one after another in ONE SQLite transaction, each inside a savepoint
 * of its own, and commit together: one COMMIT and one WAL sync for the group, and the pages they
 * share (the tail of every time-ordered index and table) are written to the WAL once. A
 * transaction whose work fails is rolled back to its savepoint: only it is undone, and it fails
 * at once. The others are answered once the group's commit is on disk (WalSync), and no read
 * sees it before then (LockWaitingConnection waits for the sync in flight).
 *
 * If the group itself fails (COMMIT fails, or SQLite rolled the whole transaction back by itself
 * after SQLITE_FULL or an I/O error), every transaction in it fails with that error: none of
 * them committed, and none had been answered.
 *
 * Groups form by themselves under load: the writes that arrive in one turn of the event loop, or
 * while a group runs, make up the next. Alone, a write is a group of one, as it was a transaction
 * of its own before.
 */
export class SqliteWriteGroups {
  private readonly waiting: Member[] = []
  private draining = false

  constructor(
    private readonly db: Db,
    private readonly inTransaction: () => boolean,
    private readonly walSync: WalSync | undefined,
    private readonly checkpoints: Pick<WalCheckpointer, 'beforeWrite' | 'committed'> | undefined,
    private readonly runNow: RunInTransaction,
  ) {}

  run<T>(work: (tx: Db) => Promise<T>, alone = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, alone, resolve: (value) => resolve(value as T), reject })
      if (this.draining) return
      this.draining = true
      // Begun after the requests read in this turn of the event loop have reached here too, so
      // they make one group: each gets here through microtasks alone from its request's arrival.
      setImmediate(() => void this.drain())
    })
  }

  private async drain(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.group()
    } finally {
      this.draining = false
    }
  }

  /** Runs the waiting transactions as one group; returns once it committed (its sync runs on). */
  private async group(): Promise<void> {
    const committed: { member: Member; value: unknown }[] = []
    let began = false
    let syncing: Promise<void> = Promise.resolve()
    // One that must be alone acts outside the database on what it reads: only on what is on disk.
    // Groups run one at a time, so nothing of this process commits between this wait and its BEGIN.
    if (this.waiting[0]?.alone === true) await this.walSync?.pending()
    await this.checkpoints?.beforeWrite()
    try {
      await onOneConnection(
        this.db,
        BEGIN_IMMEDIATE,
        async (tx) => {
          began = true
          groupTransactions.set(tx, this.runNow)
          try {
            for (let size = 0; size < MAX_GROUP; size++) {
              const member = this.waiting[0]
              // One that must be alone ends the group before it, and is the whole of its own.
              if (member === undefined || (member.alone && size > 0)) break
              this.waiting.shift()
              const outcome = await this.runMember(tx, member)
              if (outcome.ok) committed.push({ member, value: outcome.value })
              else member.reject(outcome.error)
              if (outcome.groupLost !== undefined) throw outcome.groupLost
              if (member.alone) break
            }
          } finally {
            // A member that kept `tx` must not run statements at once in a later group's transaction.
            groupTransactions.delete(tx)
          }
        },
        {
          end: () => COMMIT,
          // SQLite may have rolled the transaction back by itself (SQLITE_FULL, an I/O error).
          mayRollBack: this.inTransaction,
          ended: () => {
            // Asked for before the connection is given back, so a read that takes it next waits for it.
            syncing = this.walSync?.sync() ?? Promise.resolve()
            this.checkpoints?.committed()
          },
        },
      )
    } catch (error) {
      // Begun: none of the group is known to be on disk. Not begun (the lock stayed taken, the disk
      // failed): every waiting write would meet the same.
      const failed = began ? committed.map((done) => done.member) : this.waiting.splice(0)
      for (const member of failed) member.reject(error)
      return
    }
    // Durable before anyone is answered. The connection is not held for the sync: the next group
    // begins meanwhile and shares the next sync, while reads wait for it (LockWaitingConnection).
    // Held, commit → delivery was p50 19 ms in bench:webhooks at 1,000 events/s; not held, 5.6 ms.
    syncing.then(
      () => {
        for (const done of committed) done.member.resolve(done.value)
      },
      (error: unknown) => {
        for (const done of committed) done.member.reject(error)
      },
    )
  }

  private async runMember(tx: Db, member: Member): Promise<{ ok: true; value: unknown; groupLost?: undefined } | { ok: false; error: unknown; groupLost?: unknown }> {
    await this.execute(tx, SAVEPOINT)
    try {
      const value = await member.work(tx)
      await this.execute(tx, RELEASE)
      return { ok: true, value }
    } catch (error) {
      // SQLite rolls the whole transaction back by itself on some errors (SQLITE_FULL, IOERR):
      // then the group is lost, and this error is why.
      if (!this.inTransaction()) return { ok: false, error, groupLost: error }
      try {
        await this.execute(tx, ROLLBACK_MEMBER)
        await this.execute(tx, RELEASE)
      } catch (undoError) {
        return { ok: false, error, groupLost: undoError }
      }
      return { ok: false, error }
    }
  }

  /** A statement of the group's own, at once where it can run so (it can, while the group holds the connection). */
  private async execute(tx: Db, query: CompiledQuery): Promise<void> {
    if (this.runNow(query) === undefined) await tx.executeQuery(query)
  }
}
