import { AsyncLocalStorage } from 'node:async_hooks'
import { type Db, type WriteTransactionOptions, writeTransaction } from './database.js'

/**
 * What the request being handled asks to write inside the transaction that carries its change,
 * just before it commits (the Idempotency-Key plugin records there that the change was made).
 * Set around a route's handler; read by `transact` only, the one way routes change data.
 */
export interface RequestTransactionScope {
  beforeCommit(tx: Db): Promise<void>
}

export const requestTransactionScope = new AsyncLocalStorage<RequestTransactionScope>()

/** What a committed change means for the delivery dispatchers, in this process and in others. */
export interface CommitSignals {
  /** new deliveries are pending: claim them now rather than at the next poll */
  deliveries: boolean
  /** deleted or deactivated webhooks: abort their attempts on the wire */
  stoppedWebhooks: readonly string[]
}

/** Where commit signals go: with the commit (to other processes) and after it (this process). */
export interface SignalSink {
  /**
   * PostgreSQL: the statements (NOTIFY) that tell other processes, sent with the COMMIT itself
   * (writeTransaction's `withCommit`), so the signal is sent if and only if the change commits
   */
  signalStatements(signals: CommitSignals): string | undefined
  /** runs after the commit, before the caller sees the result */
  committed(signals: CommitSignals): void
}

/**
 * One write transaction and the side effects its commit must cause. The code that causes a side
 * effect registers it here (the outbox when it writes deliveries, the webhooks repository when it
 * deletes or deactivates one), so no route or caller can forget to wake a dispatcher or abort an
 * attempt.
 */
export class UnitOfWork {
  private deliveries = false
  private readonly stopped = new Set<string>()
  /** work that must follow the commit, in transactions of its own */
  readonly followUps: ((db: Db) => Promise<void>)[] = []

  constructor(readonly tx: Db) {}

  deliveriesWritten(): void {
    this.deliveries = true
  }

  webhookStopped(webhookId: string): void {
    this.stopped.add(webhookId)
  }

  /** Runs `work` once this transaction has committed (never if it rolls back), on the database itself. */
  afterCommit(work: (db: Db) => Promise<void>): void {
    this.followUps.push(work)
  }

  get signals(): CommitSignals {
    return { deliveries: this.deliveries, stoppedWebhooks: [...this.stopped] }
  }

  get hasSignals(): boolean {
    return this.deliveries || this.stopped.size > 0
  }
}

/**
 * Runs `work` in one write transaction with a fresh unit of work (a fresh one again on each
 * retry), publishes its signals inside the transaction, and delivers them in this process once
 * it has committed.
 */
export async function runUnitOfWork<T>(
  db: Db,
  sink: SignalSink,
  work: (unit: UnitOfWork) => Promise<T>,
  options: WriteTransactionOptions = {},
): Promise<T> {
  let committed: UnitOfWork | undefined
  const result = await writeTransaction(
    db,
    async (tx) => {
      const unit = new UnitOfWork(tx)
      const value = await work(unit)
      committed = unit
      return value
    },
    { ...options, withCommit: () => (committed?.hasSignals === true ? sink.signalStatements(committed.signals) : undefined) },
  )
  if (committed?.hasSignals === true) sink.committed(committed.signals)
  // Committed already: a follow-up that fails leaves the change in place and must not turn the
  // answer into an error; each says in its own comment what its failure leaves behind.
  for (const followUp of committed?.followUps ?? []) await followUp(db).catch(() => undefined)
  return result
}
