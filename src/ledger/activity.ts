import type { UnitOfWork } from '../db/unit-of-work.js'

/**
 * The money movements this process has committed, for the metrics listener: drains and transfers
 * entering each state and ledger entries by what happened to them. Counted once the transaction has committed,
 * so a rolled-back step counts nothing; each instance counts its own, as Prometheus expects.
 */
export class MoneyActivity {
  readonly drainStates = new Map<string, number>()
  /** transfers and payment intents entering each state */
  readonly transferStates = new Map<string, number>()
  /** 'pending' and 'posted' when written, 'posted' and 'voided' when settled */
  readonly ledgerEntries = new Map<string, number>()

  /** After `unit` commits: a drain entered `state` (if given) and `entries` were written or settled. */
  countAfterCommit(unit: UnitOfWork, change: { drainState?: string; transferState?: string; entries: readonly string[] }): void {
    unit.afterCommit(async () => {
      if (change.drainState !== undefined) bump(this.drainStates, change.drainState)
      if (change.transferState !== undefined) bump(this.transferStates, change.transferState)
      for (const entry of change.entries) bump(this.ledgerEntries, entry)
    })
  }
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1)
}

/** The process's one record of money activity. */
export const moneyActivity = new MoneyActivity()
