import type { Db } from '../db/database.js'
import type { Currency } from './amount.js'
import { isCurrency } from './amount.js'
import type { AccountKind, LedgerEnvironment } from './ledger.js'

/**
 * What an application's owner reads of the ledger (the console): its accounts with their sums, the
 * day-by-day change of its wallets, and the entries of one payment. Reads only.
 */

export interface AccountSummary {
  kind: AccountKind
  currency: Currency
  /** a wallet's network, a liquidation address id, a fee shard */
  reference: string
  posted: bigint
  available: bigint
  pendingIncoming: bigint
  pendingOutgoing: bigint
}

const KINDS: readonly AccountKind[] = ['wallet', 'clearing', 'developer_fee', 'world']
const kindOf = (text: string): AccountKind | undefined => KINDS.find((kind) => kind === text)

/** The application's accounts in one environment, by kind, currency and reference. */
export async function applicationAccounts(db: Db, environment: LedgerEnvironment, appId: string): Promise<AccountSummary[]> {
  const rows = await db
    .selectFrom('ledger_accounts')
    .select(['kind', 'currency', 'reference', 'debits_posted', 'credits_posted', 'debits_pending', 'credits_pending', 'available'])
    .where('environment', '=', environment)
    .where('app_id', '=', appId)
    .orderBy('kind')
    .orderBy('currency')
    .orderBy('reference')
    .execute()
  return rows.flatMap((row) => {
    const kind = kindOf(row.kind)
    if (kind === undefined || !isCurrency(row.currency)) return []
    return [
      {
        kind,
        currency: row.currency,
        reference: row.reference,
        posted: BigInt(row.credits_posted) - BigInt(row.debits_posted),
        available: BigInt(row.available),
        pendingIncoming: BigInt(row.credits_pending),
        pendingOutgoing: BigInt(row.debits_pending),
      },
    ]
  })
}

/** The net posted change of the application's accounts of `kind` on each UTC day since `since` (YYYY-MM-DD), by currency. */
export async function dailyChanges(db: Db, environment: LedgerEnvironment, appId: string, kind: AccountKind, since: string): Promise<Map<Currency, Map<string, bigint>>> {
  const rows = await db
    .selectFrom('ledger_postings')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'ledger_postings.account_id')
    .innerJoin('ledger_entries', 'ledger_entries.id', 'ledger_postings.entry_id')
    .select(['ledger_accounts.currency', 'ledger_postings.direction', 'ledger_postings.amount', 'ledger_entries.updated_at'])
    .where('ledger_accounts.environment', '=', environment)
    .where('ledger_accounts.app_id', '=', appId)
    .where('ledger_accounts.kind', '=', kind)
    .where('ledger_entries.status', '=', 'posted')
    .where('ledger_entries.updated_at', '>=', since)
    .execute()
  const changes = new Map<Currency, Map<string, bigint>>()
  for (const row of rows) {
    if (!isCurrency(row.currency)) continue
    const days = changes.get(row.currency) ?? new Map<string, bigint>()
    changes.set(row.currency, days)
    const day = row.updated_at.slice(0, 10)
    const amount = BigInt(row.amount)
    days.set(day, (days.get(day) ?? 0n) + (row.direction === 'credit' ? amount : -amount))
  }
  return changes
}

export interface EntryWithPostings {
  id: string
  status: string
  createdAt: string
  updatedAt: string
  postings: { kind: string; currency: string; reference: string; direction: string; amount: bigint }[]
}

/** The ledger entries of what `reasonId` names (a drain, a transfer, a payment) in the application's money, oldest first. */
export async function entriesFor(db: Db, environment: LedgerEnvironment, appId: string, reasonId: string): Promise<EntryWithPostings[]> {
  const entries = await db
    .selectFrom('ledger_entries')
    .select(['id', 'status', 'created_at', 'updated_at'])
    .where('environment', '=', environment)
    .where('app_id', '=', appId)
    .where('reason_id', '=', reasonId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  if (entries.length === 0) return []
  const postings = await db
    .selectFrom('ledger_postings')
    .innerJoin('ledger_accounts', 'ledger_accounts.id', 'ledger_postings.account_id')
    .select(['ledger_postings.entry_id', 'ledger_accounts.kind', 'ledger_accounts.currency', 'ledger_accounts.reference', 'ledger_postings.direction', 'ledger_postings.amount'])
    .where(
      'ledger_postings.entry_id',
      'in',
      entries.map((entry) => entry.id),
    )
    .orderBy('ledger_postings.id')
    .execute()
  return entries.map((entry) => ({
    id: entry.id,
    status: entry.status,
    createdAt: entry.created_at,
    updatedAt: entry.updated_at,
    postings: postings
      .filter((posting) => posting.entry_id === entry.id)
      .map((posting) => ({ kind: posting.kind, currency: posting.currency, reference: posting.reference, direction: posting.direction, amount: BigInt(posting.amount) })),
  }))
}
